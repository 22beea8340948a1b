package dev.jeton.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The files around a command that {@code jeton run} starts: whether its program can be run at all,
 * and the private scratch directory that carries its environment, made and removed.
 */
final class CommandFiles {
  private CommandFiles() {}

  /**
   * A new directory in java.io.tmpdir, mode 700, with a random name, as {@link
   * Files#createTempDirectory} makes, but without its SecureRandom (15 ms of {@code jeton run}'s
   * start, decision 59): the name need only be one no one else has taken, and the directory is
   * made, private, by one atomic mkdir that fails if the name exists.
   */
  static Path privateTemporaryDirectory(String prefix) throws IOException {
    Path parent = Path.of(System.getProperty("java.io.tmpdir"));
    for (int attempt = 0; ; attempt++) {
      Path dir =
          parent.resolve(
              prefix
                  + Long.toUnsignedString(
                      java.util.concurrent.ThreadLocalRandom.current().nextLong(), 36));
      try {
        return Files.createDirectory(
            dir,
            java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
      } catch (java.nio.file.FileAlreadyExistsException taken) {
        if (attempt == 100) {
          throw failure("create the directory", dir, taken);
        }
      } catch (IOException e) {
        throw failure("create the directory", dir, e);
      }
    }
  }

  /**
   * {@code e} as a failure to {@code doing} {@code file}, so that the one line jeton prints says
   * which file and what it was doing ({@code cannot write ...: No space left on device}): a failed
   * write names no file, and a {@link java.nio.file.FileSystemException} no action.
   */
  static IOException failure(String doing, Path file, IOException e) {
    String reason =
        e instanceof java.nio.file.FileSystemException
            ? ((java.nio.file.FileSystemException) e).getReason()
            : e.getMessage();
    return new IOException(
        "cannot "
            + doing
            + " "
            + file
            + ": "
            + (reason != null ? reason : e.getClass().getSimpleName()),
        e);
  }

  /**
   * Why {@code program} cannot be run ("not found", "not executable"), or null if it can: the
   * command is started through a shell, whose own message would be less clear, and this is known
   * before any permit is taken.
   */
  static @Nullable String unrunnable(String program) {
    if (program.contains("/")) {
      Path path = Path.of(program);
      if (!Files.exists(path)) {
        return "not found";
      }
      return Files.isDirectory(path) || !Files.isExecutable(path) ? "not executable" : null;
    }
    return onPath(program) ? null : "not found";
  }

  /** Whether {@code program} is an executable file in a directory of the PATH. */
  static boolean onPath(String program) {
    String path = System.getenv("PATH");
    if (path == null || program.isEmpty()) {
      return false;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, program);
      if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
        return true;
      }
    }
    return false;
  }

  /** Deletes {@code dir} and everything in it, as far as it can. */
  static void deleteTree(Path dir) {
    try (Stream<Path> tree = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException ignored) {
      // a file left in the temporary directory, nothing more
    }
  }
}
