package dev.jeton.host;

import dev.jeton.internal.Arguments;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a {@link HostSemaphore} lives, {@code <directory>/<name>/}, and its stored limit, the file
 * {@code limit}: made once by the first opener, then only ever replaced whole (a new file renamed
 * over it), so a reader never sees it half written and no one waits for anyone to use it.
 *
 * <p>{@link #known} is the limit as last read or written by this handle (0 before), for checks that
 * must not do file I/O; it may be stale, so nothing is granted on its word.
 */
final class LimitFile {
  private final String name;
  private final HostDirectory directory;
  private final Path home;
  private final Path file;
  private volatile int known;

  LimitFile(String name, HostDirectory directory, Path home) {
    this.name = name;
    this.directory = directory;
    this.home = home;
    this.file = home.resolve("limit");
  }

  /**
   * Opens the semaphore: if it exists, checks it has {@code requestedLimit} (unless 0); if not,
   * creates it, and the folders of its queue and slots, with {@code createLimit} (unless 0, which
   * is an error).
   */
  void openOrCreate(int requestedLimit, int createLimit) throws IOException {
    if (createLimit == 0 && !Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      throw new IllegalArgumentException(
          "there is no semaphore '" + name + "' in " + directory.path);
    }
    directory.ensureDirectory(home);
    directory.ensureDirectory(home.resolve("queue"));
    directory.ensureDirectory(home.resolve("slots"));
    if (createLimit != 0) {
      directory.createIfAbsent(file, createLimit + "\n");
    }
    if (requestedLimit != 0) {
      int stored = read();
      if (stored != requestedLimit) {
        throw new IllegalArgumentException(
            "semaphore '"
                + name
                + "' exists with limit "
                + stored
                + ", not "
                + requestedLimit
                + ": change the limit explicitly (setLimit, or jeton limit)");
      }
    }
  }

  /** The stored limit. */
  int read() throws IOException {
    String text = directory.read(file).trim();
    int limit;
    try {
      limit = Integer.parseInt(text);
    } catch (NumberFormatException e) {
      limit = 0;
    }
    if (limit < 1) {
      throw new IOException(
          "the limit file "
              + file
              + " of semaphore '"
              + name
              + "' is damaged: it holds '"
              + (text.length() > 40 ? text.substring(0, 40) + "..." : text)
              + "', not a number from 1 up; set the limit again (jeton limit --name "
              + name
              + " N, or HostSemaphore.setLimit)");
    }
    known = limit;
    return limit;
  }

  /** Replaces the stored limit (which also repairs a damaged file). */
  void write(int limit) throws IOException {
    directory.replace(file, limit + "\n");
    known = limit;
  }

  /**
   * The names of the semaphores in {@code directory} (those with a limit file), sorted; a directory
   * whose name no semaphore can have (one another member of a shared directory made) is left out,
   * since it cannot be opened.
   */
  static List<String> semaphoresIn(Path directory) throws IOException {
    return namesWith(directory, Path.of("limit"));
  }

  /**
   * The names in {@code directory} that a semaphore or rate limiter can have, whose folder holds
   * the regular file {@code marker}, sorted. An untrusted directory is refused.
   */
  static List<String> namesWith(Path directory, Path marker) throws IOException {
    List<String> names = new ArrayList<>();
    if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
      return names;
    }
    HostDirectory.trust(directory, false); // refuses a directory others could have filled
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (isName(name) && Files.isRegularFile(entry.resolve(marker), LinkOption.NOFOLLOW_LINKS)) {
          names.add(name);
        }
      }
    }
    names.sort(null);
    return names;
  }

  private static boolean isName(String text) {
    try {
      Arguments.checkName("name", text);
      return true;
    } catch (IllegalArgumentException notAName) {
      return false;
    }
  }

  /** The limit as last read or written here; 0 if never. */
  int known() {
    return known;
  }

  /**
   * The stored limit, for the public API: read whatever the caller's interrupt status (see {@link
   * LockFiles#uninterrupted}), a file gone or unreadable thrown unchecked.
   */
  int current() {
    try {
      return LockFiles.uninterrupted(this::read);
    } catch (NoSuchFileException e) {
      throw new IllegalStateException(
          "semaphore '" + name + "' was removed from " + directory.path, e);
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  /**
   * Replaces the stored limit, as {@link #write} does, for the public API (as {@link #current}).
   */
  void store(int limit) {
    try {
      LockFiles.uninterrupted(
          () -> {
            write(limit);
            return Boolean.TRUE;
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  /**
   * The limit to check a new asynchronous request for {@code permits} against without file I/O: the
   * last one known, unless the request exceeds it (then the file is read, as it may have been
   * raised). A limit lowered since fails the request at its next poll, as it would a request
   * already queued.
   */
  int limitFor(int permits) {
    int last = known;
    return permits <= last ? last : current();
  }
}
