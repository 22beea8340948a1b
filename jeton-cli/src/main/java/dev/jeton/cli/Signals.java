package dev.jeton.cli;

import java.io.IOException;
import java.util.List;
import sun.misc.Signal;

/**
 * Forwards SIGINT, SIGTERM and SIGHUP received by {@code jeton run} to the command it runs, so
 * that {@code jeton run} does not die first and leave the command running unsupervised; it keeps
 * the permits until the command exits.
 */
final class Signals {
  private static final List<String> FORWARDED = List.of("INT", "TERM", "HUP");

  private Signals() {}

  static void forwardTo(Process process) {
    for (String name : FORWARDED) {
      try {
        Signal.handle(new Signal(name), signal -> send(name, process));
      } catch (IllegalArgumentException unavailable) {
        // not a signal on this platform, or reserved by the JVM: nothing to forward
      }
    }
  }

  private static void send(String signal, Process process) {
    if (!process.isAlive()) {
      return;
    }
    try {
      // Java can only send TERM and KILL itself; kill(1) sends any signal.
      new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
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
