package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A command for the job-control tests ({@code jeton run} stopped with Ctrl-Z): it writes its pid,
 * then a heartbeat (the time, in ns) every 50 ms until told to finish, and exits 0.
 */
final class StoppableCommand {
  private final Path pid;
  private final Path beat;
  private final Path finish;

  StoppableCommand(Path directory) {
    this.pid = directory.resolve("command-pid");
    this.beat = directory.resolve("beat");
    this.finish = directory.resolve("finish");
  }

  /** The command line: {@code sh -c ...}. Each file is written whole, then renamed into place. */
  List<String> line() {
    return List.of(
        "sh",
        "-c",
        "echo $$ > "
            + pid
            + ".new; mv "
            + pid
            + ".new "
            + pid
            + ";"
            + " until [ -e "
            + finish
            + " ]; do date +%s%N > "
            + beat
            + ".new; mv "
            + beat
            + ".new "
            + beat
            + "; sleep 0.05; done");
  }

  /** Waits until the command beats, and returns its pid. */
  long awaitRunning() throws Exception {
    AbstractJetonCommandTest.awaitFile(beat);
    return Long.parseLong(Files.readString(pid).trim());
  }

  /** The time of its last heartbeat, in ns. */
  long lastBeat() throws IOException {
    return Long.parseLong(Files.readString(beat).trim());
  }

  /** Tells it to finish. */
  void finish() throws IOException {
    Files.createFile(finish);
  }

  /** Sends {@code signal} to process {@code pid}, as kill(1) does. */
  static void send(String signal, long pid) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    assertEquals(0, AbstractJetonCommandTest.exitOf(kill), "kill -" + signal + " " + pid);
  }

  /** Waits until process {@code pid} is stopped ({@code stopped}) or not; fails after 30 s. */
  static void awaitStopped(long pid, boolean stopped, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (isStopped(pid) != stopped) {
      assertTrue(
          System.nanoTime() < deadline, what + (stopped ? " never stopped" : " stays stopped"));
      Thread.sleep(20);
    }
  }

  /** Whether process {@code pid} is stopped (state T in /proc). */
  static boolean isStopped(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
    } catch (IOException gone) {
      return false;
    }
  }
}
