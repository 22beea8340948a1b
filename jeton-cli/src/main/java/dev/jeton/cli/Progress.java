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

  /**
   * Shows that this process waits for {@code weight} of {@code what} (a semaphore's or a rate
   * limiter's name), with {@code waiters} in line, oldest first, for {@code waitedNanos}.
   */
  void show(String what, List<Backend.Entry> waiters, int weight, long waitedNanos) {
    if (!enabled) {
      return;
    }
    long pid = ProcessHandle.current().pid();
    int ahead = 0;
    for (Backend.Entry waiter : waiters) {
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
