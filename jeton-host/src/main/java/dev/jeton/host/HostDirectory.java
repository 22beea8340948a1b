package dev.jeton.host;

import com.sun.security.auth.module.UnixSystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The directory that holds the semaphores: checked once when a semaphore is opened, and the only
 * place that opens or creates files in it.
 *
 * <p>Other local users are hostile. So a directory is used only if no one but its owner, or the
 * members of the group it is shared with, can get in:
 *
 * <ul>
 *   <li><b>private</b>: owned by this user, no access for group or others (mode 700). Files are
 *       made with mode 600. The default directory is private, and made so if missing.
 *   <li><b>shared</b>: owned by a group this user is in, which may read, write and enter it, with
 *       the set-group-id bit so that everything made in it belongs to that group, and no access for
 *       others (mode 2770). Files are made with mode 660, directories 2770.
 * </ul>
 *
 * <p>Anything else is refused with a message that says how to fix it. No file is ever opened
 * through a symbolic link, and a file is made under a temporary name with its final mode first,
 * then linked into place, so no one sees it half made or with a wider mode than intended.
 */
final class HostDirectory {
  private static final Set<Long> MY_GROUPS = myGroups();
  static final long MY_UID = new UnixSystem().getUid();

  private static final int PRIVATE_FILE = 0600;
  private static final int PRIVATE_DIRECTORY = 0700;
  private static final int SHARED_FILE = 0660;
  private static final int SHARED_DIRECTORY = 02770;
  private static final int SET_GROUP_ID = 02000;
  private static final int STICKY = 01000;
  private static final int MAX_READ = 64 * 1024;

  /** The directory, as given (not resolved: it is not a symbolic link). */
  final Path path;

  /** Whether it is shared with a group (else private to its owner). */
  final boolean shared;

  private HostDirectory(Path path, boolean shared) {
    this.path = path;
    this.shared = shared;
  }

  /**
   * The default directory: {@code /tmp/jeton-<uid>}. It does not depend on the environment, so a
   * login shell, cron, systemd and sudo all find the same semaphores for one user, and it is not
   * removed when the user's last session ends (as {@code $XDG_RUNTIME_DIR} is).
   */
  static Path defaultPath() {
    return Path.of("/tmp", "jeton-" + MY_UID);
  }

  /**
   * Checks {@code dir} can be trusted, creating it (private) if it is missing and {@code create}.
   *
   * @throws IllegalArgumentException if it is missing (and not to be created) or untrusted, with
   *     what to do about it
   */
  static HostDirectory trust(Path dir, boolean create) throws IOException {
    Stat attributes;
    try {
      attributes = attributes(dir);
    } catch (NoSuchFileException missing) {
      if (!create) {
        throw new IllegalArgumentException("the directory " + dir + " does not exist");
      }
      Path parent = dir.toAbsolutePath().getParent();
      if (parent == null || !Files.isDirectory(parent)) {
        throw new IllegalArgumentException(
            "cannot create the directory " + dir + ": " + parent + " does not exist");
      }
      try {
        Files.createDirectory(dir);
        Files.setAttribute(dir, "unix:mode", PRIVATE_DIRECTORY, LinkOption.NOFOLLOW_LINKS);
      } catch (FileAlreadyExistsException raced) {
        // made by someone else meanwhile: checked below like any other
      } catch (java.nio.file.AccessDeniedException e) {
        throw new IllegalArgumentException(
            "cannot create the directory " + dir + ": permission denied");
      } catch (IOException e) {
        throw FileFailures.of("create the directory", dir, e);
      }
      attributes = attributes(dir);
    }
    boolean shared = check(dir, attributes);
    checkAncestors(dir);
    if (!Files.isWritable(dir)) {
      throw new IllegalArgumentException("the directory " + dir + " is not writable");
    }
    return new HostDirectory(dir, shared);
  }

  /** Checks the directory itself; returns whether it is shared with a group. */
  private static boolean check(Path dir, Stat a) {
    String refusing = "refusing the directory " + dir + ": ";
    if (a.link()) {
      throw new IllegalArgumentException(
          refusing + "it is a symbolic link; give the directory it points to, if you trust it");
    }
    if (!a.directory()) {
      throw new IllegalArgumentException(refusing + "it is not a directory");
    }
    int mode = a.mode();
    long uid = a.uid();
    long gid = a.gid();
    boolean groupMember = MY_GROUPS.contains(gid);
    if (uid != MY_UID && !groupMember) {
      throw new IllegalArgumentException(
          refusing
              + "it belongs to user "
              + uid
              + " and group "
              + gid
              + ", neither of them you (uid "
              + MY_UID
              + "); someone else may have made it to spy on or take your permits: use a"
              + " directory of your own (--dir), or ask the owner to share it with a group of"
              + " yours (chgrp GROUP DIR; chmod 2770 DIR)");
    }
    if ((mode & 0007) != 0) {
      throw new IllegalArgumentException(
          refusing
              + String.format("its mode %04o lets other users in; ", mode)
              + "make it private (chmod 700 "
              + dir
              + ") or shared with a group (chgrp GROUP "
              + dir
              + "; chmod 2770 "
              + dir
              + ")");
    }
    if ((mode & 0070) == 0) {
      return false; // private
    }
    if (!groupMember) {
      throw new IllegalArgumentException(
          refusing
              + "group "
              + gid
              + " may use it and you are not in that group; make it private (chmod 700 "
              + dir
              + ") or give it a group of yours (chgrp GROUP "
              + dir
              + ")");
    }
    if ((mode & 0070) != 0070 || (mode & SET_GROUP_ID) == 0) {
      throw new IllegalArgumentException(
          refusing
              + String.format("its mode %04o shares it with group %d only in part; ", mode, gid)
              + "a shared directory needs mode 2770 (chmod 2770 "
              + dir
              + "), so that every member can use every file, or make it private (chmod 700 "
              + dir
              + ")");
    }
    return true;
  }

  /**
   * Checks that no one else can replace the directory: no directory above it may be writable by
   * others (unless sticky, as /tmp is) or by a group this user is not in.
   */
  private static void checkAncestors(Path dir) throws IOException {
    Path parent = dir.toAbsolutePath().getParent();
    if (parent == null) {
      return;
    }
    for (Path up = parent.toRealPath(); up != null; up = up.getParent()) {
      Stat a = attributes(up);
      int mode = a.mode();
      if ((mode & STICKY) != 0) {
        continue;
      }
      long gid = a.gid();
      boolean othersWrite = (mode & 0002) != 0;
      boolean foreignGroupWrites = (mode & 0020) != 0 && !MY_GROUPS.contains(gid);
      if (othersWrite || foreignGroupWrites) {
        throw new IllegalArgumentException(
            "refusing the directory "
                + dir
                + ": "
                + up
                + String.format(" (mode %04o) lets ", mode)
                + (othersWrite ? "any user" : "group " + gid)
                + " replace what is in it; use a directory whose parents only you (or root)"
                + " can change");
      }
    }
  }

  /** What lstat(2) says of a path: its mode bits (with set-id and sticky), owners, and type. */
  private record Stat(
      int mode, long uid, long gid, int links, boolean directory, boolean link, boolean regular) {}

  private static Stat attributes(Path path) throws IOException {
    Map<String, Object> a =
        Files.readAttributes(
            path,
            "unix:mode,uid,gid,nlink,isDirectory,isSymbolicLink,isRegularFile",
            LinkOption.NOFOLLOW_LINKS);
    return new Stat(
        (Integer) Objects.requireNonNull(a.get("mode")) & 07777,
        ((Integer) Objects.requireNonNull(a.get("uid"))).longValue(),
        ((Integer) Objects.requireNonNull(a.get("gid"))).longValue(),
        (Integer) Objects.requireNonNull(a.get("nlink")),
        Boolean.TRUE.equals(a.get("isDirectory")),
        Boolean.TRUE.equals(a.get("isSymbolicLink")),
        Boolean.TRUE.equals(a.get("isRegularFile")));
  }

  private static Set<Long> myGroups() {
    UnixSystem me = new UnixSystem();
    Set<Long> groups = new HashSet<>();
    groups.add(me.getGid());
    long[] supplementary = me.getGroups();
    if (supplementary != null) {
      for (long g : supplementary) {
        groups.add(g);
      }
    }
    return groups;
  }

  // ---------------------------------------------------------------- files inside

  /**
   * Makes sure {@code dir}, inside this directory, is a directory and not a symbolic link, creating
   * it with this directory's mode if it is missing.
   */
  void ensureDirectory(Path dir) throws IOException {
    try {
      Files.createDirectory(dir);
      Files.setAttribute(
          dir,
          "unix:mode",
          shared ? SHARED_DIRECTORY : PRIVATE_DIRECTORY,
          LinkOption.NOFOLLOW_LINKS);
    } catch (FileAlreadyExistsException exists) {
      // checked below
    } catch (IOException e) {
      throw FileFailures.of("create the directory", dir, e);
    }
    Stat a = attributes(dir);
    if (a.link() || !a.directory()) {
      throw new IOException(
          dir + " is not a directory (a symbolic link or a file is there): remove it");
    }
  }

  /**
   * Opens an existing file for reading and writing (or reading only), never through a symbolic
   * link, and only if it is a regular file.
   */
  FileChannel open(Path file, boolean write) throws IOException {
    checkRegular(file, false);
    return openChecked(file, write);
  }

  private static FileChannel openChecked(Path file, boolean write) throws IOException {
    Set<OpenOption> options =
        write
            ? Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)
            : Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    try {
      return FileChannel.open(file, options);
    } catch (IOException e) {
      throw FileFailures.of("open", file, e);
    }
  }

  /**
   * Opens a file to write records into, creating it (empty) if it is missing: as {@link #open(Path,
   * boolean)}, and only if it has no other name (a hard link planted to make us write into
   * someone's file).
   */
  FileChannel openOrCreate(Path file) throws IOException {
    for (int attempt = 0; ; attempt++) {
      try {
        checkRegular(file, true);
        return openChecked(file, true);
      } catch (NoSuchFileException missing) {
        if (attempt >= 3) {
          throw missing;
        }
        createIfAbsent(file, "");
      } catch (OtherNames e) {
        if (attempt >= 100) {
          throw e;
        }
        // another process is linking it into place this instant (createIfAbsent): look again
        java.util.concurrent.locks.LockSupport.parkNanos(100_000);
      }
    }
  }

  private static void checkRegular(Path file, boolean oneName) throws IOException {
    Stat a;
    try {
      a = attributes(file);
    } catch (IOException e) {
      throw FileFailures.of("look at", file, e);
    }
    if (!a.regular()) {
      throw new IOException(
          file + " is not a regular file (a symbolic link, or something planted)");
    }
    if (oneName && a.links() != 1) {
      throw new OtherNames(file + " has other names (hard links): refusing to write into it");
    }
  }

  /** A file that has more than one name. */
  private static final class OtherNames extends IOException {
    private static final long serialVersionUID = 1L;

    OtherNames(String message) {
      super(message);
    }
  }

  /**
   * Makes {@code file} with {@code text} in it, unless it exists. The file appears complete and
   * with its final mode, or not at all. Returns whether it made it.
   */
  boolean createIfAbsent(Path file, String text) throws IOException {
    if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return false; // the common case, without writing a file (on a full disk, say)
    }
    Path temporary = writeTemporary(file, text);
    try {
      Files.createLink(file, temporary);
      return true;
    } catch (FileAlreadyExistsException exists) {
      return false;
    } catch (IOException e) {
      throw FileFailures.of("create", file, e);
    } finally {
      Files.deleteIfExists(temporary);
    }
  }

  /** Replaces {@code file} with one holding {@code text}, atomically: readers see old or new. */
  void replace(Path file, String text) throws IOException {
    Path temporary = writeTemporary(file, text);
    try {
      Files.move(
          temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new IOException("cannot replace " + file + " atomically", e);
    } catch (IOException e) {
      throw FileFailures.of("replace", file, e);
    } finally {
      Files.deleteIfExists(temporary);
    }
  }

  /**
   * A new file beside {@code file}, under a name of its own, holding {@code text}. A failure names
   * {@code file}, the one the caller writes (a full disk, say).
   */
  Path writeTemporary(Path file, String text) throws IOException {
    Path temporary = temporaryBeside(file);
    try (FileChannel channel =
        FileChannel.open(
            temporary,
            Set.of(
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS))) {
      Files.setAttribute(
          temporary, "unix:mode", shared ? SHARED_FILE : PRIVATE_FILE, LinkOption.NOFOLLOW_LINKS);
      ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
    } catch (IOException e) {
      Files.deleteIfExists(temporary);
      throw FileFailures.of("write", file, e);
    } catch (RuntimeException e) {
      Files.deleteIfExists(temporary);
      throw e;
    }
    return temporary;
  }

  /** A name beside {@code file} that no one else uses: it starts with a dot, so lists skip it. */
  static Path temporaryBeside(Path file) {
    return file.resolveSibling(
        "."
            + file.getFileName()
            + ".new-"
            + ProcessHandle.current().pid()
            + "-"
            + Long.toHexString(ThreadLocalRandom.current().nextLong()));
  }

  /** The text of a small file, never through a symbolic link; at most 64 KiB of it. */
  String read(Path file) throws IOException {
    try (FileChannel channel = open(file, false)) {
      return read(channel);
    } catch (IOException e) {
      throw FileFailures.of("read", file, e);
    }
  }

  /** Reads a small file's whole content (at most 64 KiB) from an open channel. */
  static String read(FileChannel channel) throws IOException {
    long size = Math.min(channel.size(), MAX_READ); // never read a runaway file whole
    ByteBuffer buffer = ByteBuffer.allocate((int) size);
    while (buffer.hasRemaining() && channel.read(buffer, buffer.position()) > 0) {
      // keep reading
    }
    return new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return path + (shared ? " (shared)" : " (private)");
  }
}
