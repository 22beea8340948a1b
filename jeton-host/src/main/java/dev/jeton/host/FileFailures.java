package dev.jeton.host;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * I/O failures that say what was being done to which file: {@code cannot write
 * /tmp/jeton-0/deploy/limit: No space left on device}. The JDK names the file in some of its
 * exceptions (a refused open) and not in others (a write that finds the disk full), and the {@code
 * jeton} command shows a failure as its message, in one line.
 *
 * <p>Some failures are kept as they are, because callers act on their type: a missing file (it was
 * removed, or is to be made), an interrupt, a channel closed to end a wait.
 */
final class FileFailures {
  private FileFailures() {}

  /** A failure that says already what was being done to which file. */
  private static final class Described extends IOException {
    private static final long serialVersionUID = 1L;

    Described(String message, IOException cause) {
      super(message, cause);
    }
  }

  /**
   * {@code e}, as a failure to {@code doing} ("write", "lock", ...) {@code file}; or {@code e}
   * itself when callers act on its type, or when it says so already (the innermost account is the
   * most precise).
   */
  static IOException of(String doing, Path file, IOException e) {
    if (e instanceof Described
        || e instanceof NoSuchFileException
        || e instanceof ClosedChannelException // an interrupt, or a wait ended by close
        || LockFiles.interruptedDuring(e)) {
      return e;
    }
    return new Described("cannot " + doing + " " + file + ": " + reason(e), e);
  }

  /** Why {@code e} happened, without the file names a {@link FileSystemException} adds. */
  private static String reason(IOException e) {
    if (e instanceof FileSystemException) {
      String reason = ((FileSystemException) e).getReason();
      if (reason != null) {
        return reason;
      }
      if (e instanceof AccessDeniedException) {
        return "permission denied";
      }
      return e.getClass().getSimpleName(); // FileAlreadyExistsException, NotDirectoryException, ...
    }
    return String.valueOf(e.getMessage());
  }
}
