package dev.jeton.cli;

import dev.jeton.internal.Sessions;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The command {@code jeton run} runs, with everything it starts: one process session
 * (setsid(1)), so that a signal reaches all of it and {@code jeton} can tell when all of it has
 * exited.
 *
 * <p>The command's lifetime is the permit's lifetime, even if {@code jeton} is killed with
 * SIGKILL (by the OOM killer, or systemd with {@code KillMode=process}):
 *
 * <ul>
 *   <li>A watchdog, a small shell in a session of its own, sees {@code jeton} die at once (the
 *       pipe it reads from {@code jeton} closes, however {@code jeton} died) and stops the whole
 *       session: SIGTERM, then SIGKILL after a grace period. With Redis the
 *       grace period ends well before the lease can run out.
 *   <li>On this machine, the permits' records name the session, so that other processes count
 *       the permits as held until its last process has exited, whether or not {@code jeton}
 *       lives ({@code HostSemaphore.holdWhileSessionRuns}).
 *   <li>The command does not start until both are in place: it waits, in a small shell, for a
 *       go-ahead file that {@code jeton} makes last, and gives up if {@code jeton} dies first.
 * </ul>
 *
 * <p>The price of a session of its own: the command has no controlling terminal. It still reads
 * and writes the terminal through stdin, stdout and stderr, and {@code jeton} forwards the
 * terminal's signals to it, but a program that opens {@code /dev/tty} itself (a password prompt)
 * cannot.
 */
final class CommandSession implements AutoCloseable {
  /**
   * Runs the command once the go-ahead file exists; exits 125 without running it if {@code
   * jeton} died first. Arguments: jeton's pid, the go-ahead file, the command.
   */
  private static final String GATE =
      "j=$1 go=$2; shift 2\n"
          + "while [ ! -e \"$go\" ]; do\n"
          + "  kill -0 \"$j\" 2>/dev/null || exit 125\n"
          + "  sleep 0.002\n"
          + "done\n"
          + "exec \"$@\"\n";

  /**
   * Waits on a pipe from jeton: a line "done" means the command is over; the end of the pipe
   * without it means jeton died (the kernel closes its end, whatever killed it). Then stops the
   * command's session: SIGTERM, then SIGKILL if it still runs after the grace period. Immune to
   * the signals a terminal or a group kill sends. Arguments: the session, the grace period in
   * tenths of a second.
   */
  private static final String WATCHDOG =
      "trap '' INT TERM HUP QUIT\n"
          + "if read -r line && [ \"$line\" = done ]; then exit 0; fi\n"
          + "kill -TERM -\"$1\" 2>/dev/null || exit 0\n"
          + "t=0\n"
          + "while kill -0 -\"$1\" 2>/dev/null; do\n"
          + "  if [ $t -ge \"$2\" ]; then kill -KILL -\"$1\" 2>/dev/null; exit 0; fi\n"
          + "  sleep 0.1; t=$((t + 1))\n"
          + "done\n";

  private static final long STRAGGLER_POLL_MILLIS = 50;

  private final Process leader;
  private final @Nullable Instant leaderStart;
  private final @Nullable Path gate; // null: no setsid here, the command runs plainly
  private final @Nullable Process watchdog;

  private CommandSession(Process leader, @Nullable Path gate, @Nullable Process watchdog) {
    this.leader = leader;
    this.leaderStart = Sessions.startOf(leader.pid());
    this.gate = gate;
    this.watchdog = watchdog;
  }

  /**
   * Starts {@code command} in a session of its own, held back until {@link #go()}, with a
   * watchdog that stops the session if this process dies, after {@code grace}. Where there is no
   * {@code setsid} (not Linux), starts it plainly, as a child of this process.
   */
  static CommandSession start(List<String> command, Map<String, String> environment, Duration grace)
      throws IOException {
    if (!SETSID) {
      ProcessBuilder plain = new ProcessBuilder(command).inheritIO();
      plain.environment().putAll(environment);
      return new CommandSession(plain.start(), null, null);
    }
    Path gate = Files.createTempDirectory("jeton-run-");
    String self = Long.toString(ProcessHandle.current().pid());
    Process leader;
    try {
      List<String> gated = new ArrayList<>(List.of("setsid", "sh", "-c", GATE, "jeton-run", self,
          gate.resolve("go").toString()));
      gated.addAll(command);
      ProcessBuilder builder = new ProcessBuilder(gated).inheritIO();
      builder.environment().putAll(environment);
      leader = builder.start();
    } catch (IOException | RuntimeException e) {
      deleteTree(gate);
      throw e;
    }
    try {
      Process watchdog =
          new ProcessBuilder("setsid", "sh", "-c", WATCHDOG, "jeton-watchdog",
                  Long.toString(leader.pid()), Long.toString(grace.toMillis() / 100))
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      return new CommandSession(leader, gate, watchdog);
    } catch (IOException | RuntimeException e) {
      leader.destroyForcibly(); // it has not passed its gate: nothing of the command ran
      deleteTree(gate);
      throw e;
    }
  }

  /** Whether {@code setsid} (util-linux) is on the PATH. */
  private static final boolean SETSID = onPath("setsid") && onPath("sh");

  /**
   * Why {@code program} cannot be run ("not found", "not executable"), or null if it can: the
   * command is started through a shell, whose own message would be less clear.
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

  private static boolean onPath(String program) {
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

  /** The session's leader: the command itself, once it has passed its gate. */
  ProcessHandle leader() {
    return leader.toHandle();
  }

  /** Lets the command start. */
  void go() throws IOException {
    Path g = gate;
    if (g != null) {
      Files.createFile(g.resolve("go"));
    }
  }

  /** Sends {@code signal} (INT, TERM, HUP, KILL) to every process of the session. */
  void signal(String signal) {
    if (gate == null) {
      Signals.send(signal, leader);
    } else {
      Signals.sendToGroup(signal, leader.pid());
    }
  }

  /** Whether the command, or anything it started, still runs. */
  boolean running() {
    return leader.isAlive() || (gate != null && Sessions.alive(leader.pid(), leaderStart));
  }

  /** Sends SIGTERM to the whole session, and SIGKILL if it still runs after {@code grace}. */
  void stop(Duration grace) {
    signal("TERM");
    Thread killer =
        new Thread(
            () -> {
              long deadline = System.nanoTime() + grace.toNanos();
              while (running() && System.nanoTime() < deadline) {
                try {
                  TimeUnit.MILLISECONDS.sleep(STRAGGLER_POLL_MILLIS);
                } catch (InterruptedException e) {
                  break;
                }
              }
              if (running()) {
                signal("KILL");
              }
            },
            "jeton-stop");
    killer.setDaemon(true);
    killer.start();
  }

  /**
   * Waits until the command has exited, then until every process it started has too (as long as
   * they stay in its session), and returns the command's exit code (128+N for signal N).
   */
  int waitForAll() {
    int code;
    for (; ; ) {
      try {
        code = leader.waitFor();
        break;
      } catch (InterruptedException e) {
        // keep waiting: the permit must be held until the command has really exited
      }
    }
    while (running()) {
      try {
        TimeUnit.MILLISECONDS.sleep(STRAGGLER_POLL_MILLIS);
      } catch (InterruptedException e) {
        // keep waiting, as above
      }
    }
    return code;
  }

  /** Tells the watchdog the session is over, and removes the go-ahead file. */
  @Override
  public void close() {
    Process w = watchdog;
    if (w != null) {
      try (java.io.OutputStream pipe = w.getOutputStream()) {
        pipe.write("done\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      } catch (IOException gone) {
        w.destroyForcibly();
      }
    }
    Path g = gate;
    if (g != null) {
      deleteTree(g);
    }
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> tree = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException ignored) {
      // a file left in the temporary directory, nothing more
    }
  }
}
