package dev.jeton.cli;

import dev.jeton.internal.Sessions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import sun.misc.Signal;

/**
 * SIGINT, SIGTERM and SIGHUP received by {@code jeton run}: while it waits for permits, they make
 * it give up its request and exit 128+N; once the command runs, they are forwarded to it, so that
 * {@code jeton run} does not die first and leave the command running unsupervised (it keeps the
 * permits until the command exits).
 */
final class Signals {
  /** The signals handled, with their numbers (for the 128+N exit code). */
  static final Map<String, Integer> HANDLED = Map.of("INT", 2, "TERM", 15, "HUP", 1);

  private Signals() {}

  /** Calls {@code handler} with the signal's name whenever one of {@link #HANDLED} arrives. */
  static void install(Consumer<String> handler) {
    for (String name : HANDLED.keySet()) {
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
