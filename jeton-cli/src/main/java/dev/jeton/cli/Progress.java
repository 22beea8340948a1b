package dev.jeton.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Waiting shown on stderr, on one line, when stderr is a terminal. */
final class Progress {
  private final PrintWriter err;
  private final boolean enabled;
  private boolean shown;

  Progress(PrintWriter err, boolean enabled) {
    this.err = err;
    this.enabled = enabled;
  }

  static boolean stderrIsATerminal() {
    try {
      String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
      return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
    } catch (IOException | UnsupportedOperationException notLinux) {
      return System.console() != null;
    }
  }

  /** Who waits in line, oldest first: asked only when the line is shown. */
  interface Waiters {
    List<Backend.Entry> get() throws IOException;
  }

  /**
   * Shows that this process waits for {@code weight} of {@code what} (a semaphore's or a rate
   * limiter's name), with {@code waiters} in line, for {@code waitedNanos}. The waiters are asked
   * for only if stderr shows the line (asking is a round trip to Redis, which must not hold up a
   * wait that has a bound to keep), and a failure to get them shows nothing: the display is best
   * effort.
   */
  void show(String what, Waiters waiters, int weight, long waitedNanos) {
    if (!enabled) {
      return;
    }
    List<Backend.Entry> line;
    try {
      line = waiters.get();
    } catch (IOException | RuntimeException e) {
      return; // the display is best effort
    }
    long pid = ProcessHandle.current().pid();
    int ahead = 0;
    for (Backend.Entry waiter : line) {
      if (waiter.pid() == pid) {
        break;
      }
      ahead++;
    }
    err.print(
        "\rjeton: waiting for "
            + weight
            + " of '"
            + what
            + "': "
            + ahead
            + " ahead, "
            + TimeUnit.NANOSECONDS.toSeconds(waitedNanos)
            + "s   ");
    err.flush();
    shown = true;
  }

  void clear() {
    if (shown) {
      err.print("\r\033[K");
      err.flush();
      shown = false;
    }
  }
}
