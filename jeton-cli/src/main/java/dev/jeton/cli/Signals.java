package dev.jeton.cli;

import dev.jeton.internal.Sessions;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import sun.misc.Signal;

/**
 * SIGINT, SIGTERM and SIGHUP received by {@code jeton run}: while it waits for permits, they make
 * it give up its request and exit 128+N; once the command runs, they are forwarded to it, so that
 * {@code jeton run} does not die first and leave the command running unsupervised (it keeps the
 * permits until the command exits). Once the command runs, the job-control signals (Ctrl-Z) stop
 * and continue it (RunCommand).
 */
final class Signals {
  /** The signals handled, with their numbers (for the 128+N exit code). */
  static final Map<String, Integer> HANDLED = Map.of("INT", 2, "TERM", 15, "HUP", 1);

  private Signals() {}

  /**
   * The job-control signals: a terminal's Ctrl-Z (TSTP), a background job's read from or write to
   * the terminal (TTIN, TTOU), and what continues a stopped job (CONT). Java 17 and 25 both let a
   * handler take them, so that {@code jeton} itself does not stop (see RunCommand).
   */
  static final List<String> JOB_CONTROL = List.of("TSTP", "TTIN", "TTOU", "CONT");

  /** Calls {@code handler} with the signal's name whenever one of {@link #HANDLED} arrives. */
  static void install(Consumer<String> handler) {
    handle(HANDLED.keySet(), handler);
  }

  /** Calls {@code handler} with the signal's name whenever one of {@link #JOB_CONTROL} arrives. */
  static void installJobControl(Consumer<String> handler) {
    handle(JOB_CONTROL, handler);
  }

  private static void handle(Iterable<String> names, Consumer<String> handler) {
    for (String name : names) {
      try {
        Signal.handle(new Signal(name), signal -> handler.accept(name));
      } catch (IllegalArgumentException unavailable) {
        // not a signal on this platform, or reserved by the JVM: nothing to handle
      }
    }
  }

  /**
   * Sends {@code signal} to every process of the session {@code leader} leads: its process group
   * and any process of the session that made a group of its own.
   */
  static void sendToGroup(String signal, long leader) {
    StringBuilder targets = new StringBuilder("-").append(leader);
    for (long member : Sessions.members(leader)) {
      targets.append(' ').append(member);
    }
    try {
      // The shell's own kill: /bin/kill (procps) is not on every system.
      new ProcessBuilder("sh", "-c", "kill -" + signal + " " + targets)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(ProcessBuilder.Redirect.DISCARD) // some may have exited meanwhile
          .start()
          .waitFor();
    } catch (IOException e) {
      ProcessHandle.of(leader).ifPresent(ProcessHandle::destroy);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Stops this process (SIGSTOP: a TSTP would come back to its own handler), as a shell job stops,
   * and returns once it is continued (SIGCONT: the shell's fg or bg).
   */
  static void stopThisProcess() {
    try {
      new ProcessBuilder("sh", "-c", "kill -STOP " + ProcessHandle.current().pid())
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(ProcessBuilder.Redirect.DISCARD)
          .start()
          .waitFor();
    } catch (IOException e) {
      // not stopped: the command is continued at once, as if continued
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sends {@code signal} to {@code process}, if it still runs. */
  static void send(String signal, Process process) {
    if (!process.isAlive()) {
      return;
    }
    try {
      // Java can only send TERM and KILL itself; the shell's kill sends any signal.
      new ProcessBuilder("sh", "-c", "kill -" + signal + " " + process.pid())
          .inheritIO()
          .start()
          .waitFor();
    } catch (IOException e) {
      if ("TERM".equals(signal)) {
        process.destroy();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
