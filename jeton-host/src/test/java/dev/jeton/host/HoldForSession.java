package dev.jeton.host;

import java.nio.file.Path;

/**
 * A child process for tests, doing what {@code jeton run} does: takes a permit, starts a process
 * session (a shell with a child of its own, whose pid it writes to a file), lets the session hold
 * the permit, says "held SESSION" on stdout, and waits to be killed. Arguments: directory, name,
 * the file for the shell's child's pid.
 */
public final class HoldForSession {
  private HoldForSession() {}

  public static void main(String[] args) throws Exception {
    HostSemaphore semaphore =
        HostSemaphore.builder(args[1]).directory(Path.of(args[0])).limit(1).open();
    var permit = semaphore.acquire(1);
    String pidFile = args[2];
    Process session =
        new ProcessBuilder(
                "setsid",
                "sh",
                "-c",
                "sleep 60 & echo $! > "
                    + pidFile
                    + ".new; mv "
                    + pidFile
                    + ".new "
                    + pidFile
                    + "; wait")
            .start();
    while (!java.nio.file.Files.exists(Path.of(pidFile))) {
      Thread.sleep(5);
    }
    semaphore.holdWhileSessionRuns(permit, session.toHandle());
    System.out.println("held " + session.pid());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
