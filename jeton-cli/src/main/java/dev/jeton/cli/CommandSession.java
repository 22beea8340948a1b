package dev.jeton.cli;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Sessions;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The command {@code jeton run} runs, with everything it starts: one process session (setsid(1)),
 * so that a signal reaches all of it and {@code jeton} can tell when all of it has exited.
 *
 * <p>The command's lifetime is the permit's lifetime, even if {@code jeton} is killed with SIGKILL
 * (by the OOM killer, or systemd with {@code KillMode=process}):
 *
 * <ul>
 *   <li>A watchdog, a small shell in a session of its own, reads a pipe from {@code jeton}. When
 *       the pipe ends without a word, {@code jeton} has died (the kernel closes its end however it
 *       died), and the watchdog stops the whole session: SIGTERM, then SIGKILL after a grace
 *       period. With Redis the grace period ends well before the lease can run out.
 *   <li>On this machine, the permits' records name the session, so that other processes count the
 *       permits as held until its last process has exited, whether or not {@code jeton} lives
 *       ({@code HostSemaphore.holdWhileSessionRuns}).
 *   <li>Both are in place before the command starts: the session is made while {@code jeton} waits
 *       for its permits, as a shell stopped (SIGSTOP) at a gate; once the permits are granted and
 *       recorded, the watchdog continues it (SIGCONT) and it runs the command. Until then it dies
 *       with {@code jeton} (a parent-death signal, cleared for the command).
 * </ul>
 *
 * <p>So the grant costs no process start: the command starts within a few milliseconds.
 *
 * <p>The price of a session of its own: the command has no controlling terminal. It still reads and
 * writes the terminal through stdin, stdout and stderr, and {@code jeton} forwards the terminal's
 * signals to it, but a program that opens {@code /dev/tty} itself (a password prompt) cannot. Where
 * {@code setsid} or {@code setpriv} (util-linux) is missing, the command is started plainly, as a
 * child of {@code jeton}, when the permits are granted.
 */
final class CommandSession implements AutoCloseable {
  /**
   * Stops itself until the permits are granted, then reads the command's environment (JETON_*) from
   * the file {@code jeton} wrote (and removes it), and runs the command without the parent-death
   * signal. Arguments: the environment file, the command.
   */
  private static final String GATE =
      "kill -STOP $$\n"
          + ". \"$1\" || exit 125\n"
          + "rm -f \"$1\"\n"
          + "shift\n"
          + "exec setpriv --pdeathsig clear -- \"$@\"\n";

  /**
   * The watchdog reads lines from jeton: "go" continues the gate; "check" asks whether any process
   * of the command's group still runs (answered "alive" or "gone": the shell's kill asks the kernel
   * at once, where a look through /proc reads a file per process); "done" means the session is
   * over. The end of the pipe without "done" means jeton died, and the session is stopped: SIGTERM
   * (and SIGCONT, so that a gate still stopped sees it), then SIGKILL if anything runs after the
   * grace period. Immune to the signals a terminal or a group kill sends. Arguments: the session,
   * the grace period in tenths of a second, and the directory of the environment file, which it
   * removes when it exits: jeton may have died without doing so.
   */
  private static final String WATCHDOG =
      "trap '' INT TERM HUP QUIT\n"
          + "trap 'rm -f \"$3/env\" \"$3/env.new\"; rmdir \"$3\" 2>/dev/null' EXIT\n"
          + "while read -r word; do\n"
          + "  case $word in\n"
          + "    go) kill -CONT \"$1\" ;;\n"
          + "    check) if kill -0 -\"$1\" 2>/dev/null; then echo alive; else echo gone; fi ;;\n"
          + "    done) exit 0 ;;\n"
          + "  esac\n"
          + "done\n"
          + "kill -TERM -\"$1\" 2>/dev/null || exit 0\n"
          + "kill -CONT -\"$1\" 2>/dev/null\n"
          + "t=0\n"
          + "while kill -0 -\"$1\" 2>/dev/null; do\n"
          + "  if [ $t -ge \"$2\" ]; then kill -KILL -\"$1\" 2>/dev/null; exit 0; fi\n"
          + "  sleep 0.1; t=$((t + 1))\n"
          + "done\n";

  private static final boolean SESSIONS =
      CommandFiles.onPath("setsid")
          && CommandFiles.onPath("setpriv")
          && CommandFiles.onPath("sh")
          && Files.isDirectory(Path.of("/proc"));

  private static final long STRAGGLER_POLL_MILLIS = 50;

  private final List<String> command;
  private final @Nullable Path scratch; // the environment file's directory; null: plain
  private final @Nullable OutputStream toWatchdog;
  private final java.io.@Nullable BufferedReader fromWatchdog;
  private @Nullable Process leader; // the gate, then the command (the same process)
  private @Nullable Instant leaderStart;
  private @Nullable Process watchdog;
  private boolean started;
  private final Object pauseLock = new Object();

  @GuardedBy("pauseLock")
  private boolean paused;

  private CommandSession(
      List<String> command,
      @Nullable Path scratch,
      @Nullable Process leader,
      @Nullable Process watchdog) {
    this.command = command;
    this.scratch = scratch;
    this.leader = leader;
    this.leaderStart = leader == null ? null : Sessions.startOf(leader.pid());
    this.watchdog = watchdog;
    this.toWatchdog = watchdog == null ? null : watchdog.getOutputStream();
    this.fromWatchdog =
        watchdog == null
            ? null
            : new java.io.BufferedReader(
                new java.io.InputStreamReader(
                    watchdog.getInputStream(), StandardCharsets.US_ASCII));
  }

  /**
   * Makes the command's session, stopped at its gate, and its watchdog (which stops the session,
   * after {@code grace}, if this process dies). Call it before waiting for permits: it costs two
   * process starts, which the wait hides.
   */
  static CommandSession prepare(List<String> command, Duration grace) throws IOException {
    if (!SESSIONS) {
      return new CommandSession(command, null, null, null);
    }
    Path scratch = CommandFiles.privateTemporaryDirectory("jeton-run-");
    Process gate = null;
    try {
      List<String> gated =
          new ArrayList<>(
              List.of(
                  "setpriv",
                  "--pdeathsig",
                  "KILL",
                  "--",
                  "setsid",
                  "sh",
                  "-c",
                  GATE,
                  "jeton-run",
                  scratch.resolve("env").toString()));
      gated.addAll(command);
      gate = new ProcessBuilder(gated).inheritIO().start();
      Process watchdog =
          new ProcessBuilder(
                  "setsid",
                  "sh",
                  "-c",
                  WATCHDOG,
                  "jeton-watchdog",
                  Long.toString(gate.pid()),
                  Long.toString(grace.toMillis() / 100),
                  scratch.toString())
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      return new CommandSession(command, scratch, gate, watchdog);
    } catch (IOException | RuntimeException e) {
      if (gate != null) {
        gate.destroyForcibly(); // stopped at its gate: nothing of the command ran
      }
      CommandFiles.deleteTree(scratch);
      throw e;
    }
  }

  /** Whether the command gets a session of its own (else it runs plainly). */
  boolean isolated() {
    return scratch != null;
  }

  /** The session's leader (its id is the session's): the command, once started. */
  ProcessHandle leader() {
    Process l = leader;
    if (l == null) {
      throw new IllegalStateException("not started");
    }
    return l.toHandle();
  }

  /**
   * Starts the command with {@code environment} added to this process's. The session exists already
   * (see {@link #prepare}); where sessions are not supported, the command starts now.
   */
  void start(Map<String, String> environment) throws IOException {
    started = true;
    Path dir = scratch;
    OutputStream watch = toWatchdog;
    Process gate = leader;
    if (dir == null || watch == null || gate == null) {
      ProcessBuilder plain = new ProcessBuilder(command).inheritIO();
      plain.environment().putAll(environment);
      leader = plain.start();
      leaderStart = Sessions.startOf(leader.pid());
      return;
    }
    StringBuilder exports = new StringBuilder();
    for (Map.Entry<String, String> e : environment.entrySet()) {
      exports
          .append("export ")
          .append(e.getKey())
          .append("='")
          .append(e.getValue().replace("'", "'\\''"))
          .append("'\n");
    }
    Path file = dir.resolve("env");
    Path temporary = dir.resolve("env.new");
    try {
      Files.writeString(temporary, exports.toString(), StandardCharsets.UTF_8);
      Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw CommandFiles.failure("write the command's environment to", file, e);
    }
    awaitStopped(gate);
    synchronized (this) {
      watch.write("go\n".getBytes(StandardCharsets.US_ASCII));
      watch.flush();
    }
  }

  /** Waits until the gate has stopped itself: continuing it earlier would be lost. */
  private static void awaitStopped(Process gate) throws IOException {
    Path stat = Path.of("/proc", Long.toString(gate.pid()), "stat");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (; ; ) {
      if (!gate.isAlive()) {
        throw new IOException("the command's session ended before it could start");
      }
      String fields;
      try {
        String text = Files.readString(stat);
        fields = text.substring(text.lastIndexOf(')') + 2);
      } catch (IOException gone) {
        fields = "";
      }
      if (fields.startsWith("T")) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IOException("the command's session did not reach its gate");
      }
      LockSupport.parkNanos(100_000);
    }
  }

  /**
   * Sends {@code signal} (INT, TERM, HUP, KILL) to every process of the session; continues it if it
   * was paused, so that it acts on the signal (as a shell's kill does to a stopped job).
   */
  void signal(String signal) {
    send(signal);
    synchronized (pauseLock) {
      if (paused) {
        send("CONT");
        paused = false;
      }
    }
  }

  private void send(String signal) {
    Process l = leader;
    if (l == null) {
      return;
    }
    if (scratch == null) {
      Signals.send(signal, l);
    } else {
      Signals.sendToGroup(signal, l.pid());
    }
  }

  /**
   * Stops every process of the session, as Ctrl-Z stops a shell's job; false if it was paused
   * already. SIGSTOP, not SIGTSTP: the session's process group is orphaned (its leader's parent,
   * this process, is in another session), and the kernel discards a SIGTSTP sent to such a group
   * unless the process handles it.
   */
  boolean pause() {
    synchronized (pauseLock) {
      if (paused || leader == null) {
        return false;
      }
      send("STOP");
      paused = true;
      return true;
    }
  }

  /** Continues the session after {@link #pause}; false if it was not paused. */
  boolean resume() {
    synchronized (pauseLock) {
      if (!paused) {
        return false;
      }
      send("CONT");
      paused = false;
      return true;
    }
  }

  /**
   * Whether the command, or anything it started, still runs: its process group, asked of the
   * watchdog; then, if that has members, its session, from /proc, where zombies (exited, never
   * reaped: for ever in a container whose first process reaps nothing) do not count.
   */
  synchronized boolean running() {
    Process l = leader;
    if (l == null) {
      return false;
    }
    if (l.isAlive()) {
      return true;
    }
    if (scratch == null) {
      return false;
    }
    OutputStream watch = toWatchdog;
    java.io.BufferedReader answers = fromWatchdog;
    if (watch != null && answers != null) {
      try {
        watch.write("check\n".getBytes(StandardCharsets.US_ASCII));
        watch.flush();
        if ("gone".equals(answers.readLine())) {
          return false;
        }
      } catch (IOException watchdogGone) {
        // look in /proc
      }
    }
    return Sessions.alive(l.pid(), leaderStart);
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
    Process l = leader;
    if (l == null) {
      throw new IllegalStateException("not started");
    }
    int code;
    for (; ; ) {
      try {
        code = l.waitFor();
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

  /**
   * Tells the watchdog the session is over, and removes the environment file. A session that never
   * started (no permit) is killed at its gate.
   */
  @Override
  public void close() {
    Process gate = leader;
    if (!started && gate != null) {
      gate.destroyForcibly();
    }
    OutputStream watch = toWatchdog;
    if (watch != null) {
      try (watch) {
        synchronized (this) {
          watch.write("done\n".getBytes(StandardCharsets.US_ASCII));
        }
      } catch (IOException gone) {
        Process w = watchdog;
        if (w != null) {
          w.destroyForcibly();
        }
      }
    }
    Path dir = scratch;
    if (dir != null) {
      CommandFiles.deleteTree(dir);
    }
  }
}
