package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Semaphore;
import dev.jeton.contract.HoldLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * End to end: real {@code jeton} processes, real commands, real signals. Run once per backend: this
 * machine's semaphores ({@link JetonCommandTest}) and Redis's ({@link
 * JetonRedisCommandIntegrationTest}).
 */
abstract class AbstractJetonCommandTest {
  @TempDir Path directory;
  final List<Process> started = new ArrayList<>();
  private Backend probe;
  private final Map<String, Semaphore> probed = new java.util.HashMap<>();

  /** The options that choose the backend, given before the subcommand. */
  abstract List<String> backendArgs();

  /** Options of {@code run} that make a dead holder's permits come back soon. */
  abstract List<String> quickRecoveryArgs();

  /** Extra environment of every {@code jeton} process. */
  Map<String, String> environment() {
    return Map.of();
  }

  @AfterEach
  void killLeftovers() {
    for (Process p : started) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  /** Starts {@code jeton <backend args> args...} as its own JVM. */
  Process jeton(String... args) throws IOException {
    List<String> all = new ArrayList<>(backendArgs());
    all.addAll(List.of(args));
    return jetonAlone(all.toArray(new String[0]));
  }

  /** Starts {@code jeton args...}, without the backend's arguments, as its own JVM. */
  Process jetonAlone(String... args) throws IOException {
    return jetonWithJvmOptions(List.of(), args);
  }

  /** Starts {@code jeton args...}, without the backend's arguments, in a JVM with these options. */
  Process jetonWithJvmOptions(List<String> jvmOptions, String... args) throws IOException {
    List<String> command = javaCommand(temporaryFiles(), jvmOptions, args);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(environment());
    Process p = builder.start();
    started.add(p);
    return p;
  }

  /**
   * The command line of {@code jeton args...} in a JVM of its own, as the launcher starts it, with
   * {@code tmp} as its temporary directory and these JVM options.
   */
  static List<String> javaCommand(Path tmp, List<String> jvmOptions, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:TieredStopAtLevel=1"); // as the ./jeton launcher runs it
    command.add("-Djava.io.tmpdir=" + tmp); // to see what it leaves behind
    command.addAll(jvmOptions); // after the defaults, which they may override
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Jeton.class.getName());
    command.addAll(List.of(args));
    return command;
  }

  /** The temporary directory of every {@code jeton} process this test starts. */
  Path temporaryFiles() throws IOException {
    return Files.createDirectories(directory.resolve("tmp"));
  }

  /** Waits until every process in {@code processes} has exited. */
  static void awaitExit(List<ProcessHandle> processes) throws InterruptedException {
    for (ProcessHandle p : processes) {
      while (runs(p.pid())) {
        Thread.sleep(10);
      }
    }
  }

  /** Asserts that the {@code jeton} processes left no temporary file behind. */
  void assertNoTemporaryFilesLeft() throws IOException {
    try (java.util.stream.Stream<Path> left = Files.list(temporaryFiles())) {
      assertEquals(List.of(), left.toList(), "temporary files left behind");
    }
  }

  static int exitOf(Process p) throws InterruptedException {
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "jeton finished");
    return p.exitValue();
  }

  static String outputOf(Process p) throws IOException, InterruptedException {
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(60, TimeUnit.SECONDS);
    return out;
  }

  private Path recorder() {
    return directory.resolve("events.log");
  }

  /** A shell command that logs "start <ns> <weight>" and "end <ns> <weight>" around a sleep. */
  private String recording(int weight) {
    String log = recorder().toString();
    return "echo start $(date +%s%N) "
        + weight
        + " >> "
        + log
        + "; sleep 0.3; echo end $(date +%s%N) "
        + weight
        + " >> "
        + log;
  }

  private int peakWeight() throws IOException {
    return HoldLog.peakWeight(recorder());
  }

  @Test
  void run_eightProcessesUnderTwoPermits_neverMoreThanTwoInside() throws Exception {
    List<Process> runs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      runs.add(jeton("run", "--name", "t", "--permits", "2", "--", "sh", "-c", recording(1)));
    }
    for (Process p : runs) {
      assertEquals(0, exitOf(p), outputOf(p));
    }
    assertEquals(16, Files.readAllLines(recorder()).size(), "all eight ran");
    int peak = peakWeight();
    assertTrue(peak <= 2 && peak >= 1, "peak " + peak);
  }

  @Test
  void run_weightedHoldersUnderLimitThree_neverExceedThree() throws Exception {
    List<Process> runs = new ArrayList<>();
    for (int weight : new int[] {2, 1, 2, 1, 2, 1}) {
      runs.add(
          jeton(
              "run",
              "--name",
              "w",
              "--permits",
              "3",
              "--weight",
              Integer.toString(weight),
              "--",
              "sh",
              "-c",
              recording(weight)));
    }
    for (Process p : runs) {
      assertEquals(0, exitOf(p), outputOf(p));
    }
    assertTrue(peakWeight() <= 3, "peak weight " + peakWeight());
  }

  @Test
  void run_exitsWithTheCommandsCodeAnd128PlusItsSignal() throws Exception {
    assertEquals(3, exitOf(jeton("run", "--", "sh", "-c", "exit 3")));
    assertEquals(128 + 15, exitOf(jeton("run", "--", "sh", "-c", "kill -TERM $$")));
    assertEquals(127, exitOf(jeton("run", "--", "/no/such/command")));
    Path notExecutable = Files.writeString(directory.resolve("plain.txt"), "hello");
    assertEquals(126, exitOf(jeton("run", "--", notExecutable.toString())));
  }

  @Test
  void run_givesEverythingAfterTheCommandsNameToTheCommand() throws Exception {
    Process p = jeton("run", "--name", "args", "echo", "--name", "x", "-E", "3");
    assertEquals("--name x -E 3", outputOf(p).trim());
    assertEquals(0, p.exitValue());
  }

  @Test
  void run_passesNameAndWeightInTheEnvironment() throws Exception {
    Process p =
        jeton(
            "run",
            "--name",
            "envy",
            "--permits",
            "3",
            "--weight",
            "2",
            "--",
            "sh",
            "-c",
            "echo $JETON_NAME $JETON_WEIGHT");
    assertEquals("envy 2", outputOf(p).trim());
    assertEquals(0, p.exitValue());
  }

  @Test
  void run_withNoWaitOrATimeout_exits75WhenFullAndRunsWhenFree() throws Exception {
    Process holder = jeton("run", "--name", "busy", "--", "sleep", "30");
    awaitStatus("busy", "\"held\": 1");
    Process noWait = jeton("run", "--name", "busy", "--no-wait", "--", "true");
    assertEquals(75, exitOf(noWait));
    assertTrue(outputOf(noWait).contains("busy"));
    Process timed = jeton("run", "--name", "busy", "--timeout", "200ms", "--", "true");
    assertEquals(75, exitOf(timed));
    String said = outputOf(timed);
    assertTrue(
        said.contains("timed out after 200ms"), "the duration as the user wrote it: " + said);
    assertEquals(
        0, exitOf(jeton("run", "--name", "busy", "--no-wait", "-E", "0", "-q", "--", "true")));
    assertEquals(9, exitOf(jeton("run", "--name", "busy", "--no-wait", "-E", "9", "--", "true")));
    holder.descendants().forEach(ProcessHandle::destroy);
    exitOf(holder);
    assertEquals(0, exitOf(jeton("run", "--name", "busy", "--no-wait", "--", "true")));
    assertEquals(0, exitOf(jeton("run", "--name", "busy", "--timeout", "200ms", "--", "true")));
  }

  @Test
  void run_killedWithSigkill_neverLetsTheNextHolderInWhileItsCommandRuns() throws Exception {
    // jeton alone is killed (the OOM killer, systemd's KillMode=process): its command ignores
    // SIGTERM and goes on for a while, writing a heartbeat. The next holder must start only
    // after the last heartbeat: on this machine the permit stays held by the command's session;
    // with Redis the watchdog kills it before the lease can run out.
    Path beat = directory.resolve("heartbeat");
    List<String> args = new ArrayList<>(List.of("run", "--name", "k"));
    args.addAll(quickRecoveryArgs());
    // Each beat is written whole, then renamed into place: a SIGKILL between the shell's
    // truncation of the file and date's write left it empty once (CI, a loaded machine).
    args.addAll(
        List.of(
            "--",
            "sh",
            "-c",
            "trap '' TERM; i=0; while [ $i -lt 30 ]; do"
                + " date +%s%N > "
                + beat
                + ".new; mv "
                + beat
                + ".new "
                + beat
                + "; sleep 0.05;"
                + " i=$((i + 1)); done"));
    Process holder = jeton(args.toArray(new String[0]));
    awaitFile(beat);
    List<ProcessHandle> helpers = holder.descendants().toList(); // the command, its watchdog
    holder.destroyForcibly(); // SIGKILL to jeton itself
    exitOf(holder);
    Path started = directory.resolve("next-started");
    Process next =
        jeton(
            "run", "--name", "k", "--timeout", "30s", "--", "sh", "-c", "date +%s%N > " + started);
    assertEquals(0, exitOf(next), outputOf(next));
    long lastBeat = Long.parseLong(Files.readString(beat).trim());
    long nextStart = Long.parseLong(Files.readString(started).trim());
    assertTrue(lastBeat < nextStart, "the orphaned command ran beside the next holder");
    awaitExit(helpers);
    assertNoTemporaryFilesLeft();
  }

  @Test
  void run_killedWithSigkillWhileWaiting_leavesNothingBehindAndNeverRunsItsCommand()
      throws Exception {
    Path ready = directory.resolve("holding");
    Process holder =
        jeton("run", "--name", "kw", "--", "sh", "-c", "touch " + ready + "; sleep 30");
    awaitFile(ready);
    Path ran = directory.resolve("ran");
    // With Redis, the killed waiter stays queued until its waiter expiry (10 s); if the holder
    // leaves first, the dead waiter is granted the permit, which it holds no longer than that
    // either (it held it for its whole lease, 30 s, before issue 29).
    Process waiter = jeton("run", "--name", "kw", "--", "touch", ran.toString());
    awaitStatus("kw", "\"waiters\": [{");
    List<ProcessHandle> helpers = waiter.descendants().toList(); // its command's gate, watchdog
    waiter.destroyForcibly();
    exitOf(waiter);
    awaitExit(helpers); // each goes at once: a parent-death signal, the end of a pipe
    holder.descendants().forEach(ProcessHandle::destroy);
    assertEquals(128 + 15, exitOf(holder));
    // With Redis, the dead waiter's entry (or its grant) lasts its waiter expiry: wait for that.
    Process last = jeton("run", "--name", "kw", "--timeout", "30s", "--", "true");
    assertEquals(0, exitOf(last), outputOf(last));
    assertFalse(Files.exists(ran), "the killed waiter's command never ran");
    assertNoTemporaryFilesLeft();
  }

  @Test
  void run_signalled_stopsEverythingTheCommandStartedAndReleasesOnlyThen() throws Exception {
    Path child = directory.resolve("child-pid");
    Process run =
        jeton(
            "run",
            "--name",
            "tree",
            "--",
            "sh",
            "-c",
            "sleep 60 & echo $! > " + child + ".new; mv " + child + ".new " + child + "; wait");
    awaitFile(child);
    long sleeper = Long.parseLong(Files.readString(child).trim());
    assertEquals(0, exitOf(new ProcessBuilder("kill", "-TERM", Long.toString(run.pid())).start()));
    assertEquals(128 + 15, exitOf(run));
    assertFalse(runs(sleeper), "the command's child got the signal too");
    assertEquals(0, exitOf(jeton("run", "--name", "tree", "--no-wait", "--", "true")));
  }

  @Test
  void run_commandThatLeavesAChildBehind_holdsThePermitUntilTheChildExits() throws Exception {
    Path late = directory.resolve("late");
    Process run =
        jeton(
            "run",
            "--name",
            "straggler",
            "--",
            "sh",
            "-c",
            "(sleep 1; touch " + late + ") & exit 0");
    assertEquals(0, exitOf(run), outputOf(run));
    assertTrue(Files.exists(late), "jeton returned, and released, before the child was done");
  }

  /** Whether process {@code pid} runs (a zombie, exited and not yet reaped, does not). */
  static boolean runs(long pid) {
    return dev.jeton.contract.Processes.runs(pid);
  }

  /**
   * Fails, saying why, if this JVM was started with {@code signal} ignored: its {@code jeton}
   * children inherit that, and a JVM leaves an ignored SIGINT or SIGHUP ignored, so the signal
   * tests would fail on something no code here can change. A non-interactive shell starts its
   * background jobs with SIGINT ignored, and {@code nohup} ignores SIGHUP.
   */
  static void requireNotIgnored(String signal) throws IOException {
    int number =
        switch (signal) {
          case "HUP" -> 1;
          case "INT" -> 2;
          case "TERM" -> 15;
          default -> throw new IllegalArgumentException(signal);
        };
    Path status = Path.of("/proc/self/status");
    if (!Files.exists(status)) {
      return; // not Linux: no cheap way to ask, and the test will say what it saw
    }
    for (String line : Files.readAllLines(status)) {
      if (line.startsWith("SigIgn:")) {
        long ignored = Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16);
        assertEquals(
            0L,
            ignored & (1L << (number - 1)),
            "the tests were started with SIG"
                + signal
                + " ignored (a background job of a non-interactive shell, or nohup), and every"
                + " process they start inherits that: run them in the foreground, or from a"
                + " shell with job control on (set -m)");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"INT", "TERM", "HUP"})
  void run_forwardsTheSignalToTheCommandAndReleasesAfterItExits(String signal) throws Exception {
    requireNotIgnored(signal);
    Path marker = directory.resolve("got-" + signal);
    Path ready = directory.resolve("ready-" + signal);
    Process run =
        jeton(
            "run",
            "--name",
            "sig",
            "--",
            "sh",
            "-c",
            "trap 'echo yes > "
                + marker
                + "; exit 7' "
                + signal
                + "; touch "
                + ready
                + "; while true; do sleep 0.05; done");
    awaitFile(ready);
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(run.pid())).start();
    assertEquals(0, exitOf(kill));
    assertEquals(7, exitOf(run), "jeton exits with the command's code");
    assertTrue(Files.exists(marker), "the command got SIG" + signal);
    assertEquals(0, exitOf(jeton("run", "--name", "sig", "--no-wait", "--", "true")), "released");
  }

  @Test
  void run_signalledWhileWaiting_givesUpItsRequestAndExits128PlusTheSignal() throws Exception {
    requireNotIgnored("INT");
    Path ready = directory.resolve("holding");
    Process holder =
        jeton("run", "--name", "wq", "--", "sh", "-c", "touch " + ready + "; sleep 30");
    awaitFile(ready);
    Path ran = directory.resolve("ran");
    Process waiter = jeton("run", "--name", "wq", "--", "touch", ran.toString());
    awaitStatus("wq", "\"waiters\": [{");
    assertEquals(
        0, exitOf(new ProcessBuilder("kill", "-INT", Long.toString(waiter.pid())).start()));
    assertEquals(128 + 2, exitOf(waiter));
    assertFalse(Files.exists(ran), "the command never ran");
    String json = StatusCommand.toJson(List.of(probeStatus("wq")));
    assertTrue(json.contains("\"waiters\": []"), "the request was withdrawn before exit: " + json);
    holder.descendants().forEach(ProcessHandle::destroy);
    exitOf(holder);
  }

  @Test
  void status_jsonShowsHoldersAndWaiters() throws Exception {
    Process holder = jeton("run", "--name", "st", "--permits", "1", "--", "sleep", "30");
    awaitStatus("st", "\"held\": 1");
    Process waiter = jeton("run", "--name", "st", "--", "true");
    awaitStatus("st", "\"waiters\": [{");
    String json = outputOf(jeton("status", "--name", "st", "--json"));
    assertTrue(json.contains("\"limit\": 1"), json);
    assertTrue(json.contains("\"pid\": " + holder.pid()), json);
    assertTrue(json.contains("\"command\": \"sleep 30\""), json);
    assertTrue(json.contains("\"pid\": " + waiter.pid()), json);
    holder.descendants().forEach(ProcessHandle::destroy);
    assertEquals(0, exitOf(waiter));
    String text = outputOf(jeton("status"));
    assertTrue(text.contains("st: limit 1, held 0, waiting 0"), text);
  }

  /**
   * A holder's record is text its writer chose (its command line, its user name): status shows the
   * control characters in it as escapes, so that a record can neither forge lines of the output nor
   * drive the reader's terminal (clear it, retitle it, recolour what follows).
   */
  @Test
  void status_showsControlCharactersOfRecordsAsEscapes() throws Exception {
    // ASCII only, so that it reaches the command line whatever the JVM's encoding of arguments.
    String hostile = "\033]0;owned\007\033[2J\nforged: limit 99, held 0, waiting 0\177";
    List<String> args = new ArrayList<>(backendArgs());
    args.addAll(List.of("run", "--name", "esc", "--", "sh", "-c", "sleep 30", hostile));
    Process holder =
        jetonWithJvmOptions(List.of("-Duser.name=ev\033[31mil"), args.toArray(new String[0]));
    awaitStatus("esc", "\"held\": 1");

    Process status = jeton("status", "--name", "esc");
    String text = outputOf(status);
    assertEquals(0, status.exitValue(), text);
    assertEquals(2, text.lines().count(), "the semaphore's line and its holder's: " + text);
    assertTrue(
        text.chars().allMatch(c -> c == '\n' || (c >= 0x20 && c < 0x7f)),
        "nothing but printable characters and line ends: " + text);
    assertTrue(text.contains("\\e]0;owned\\x07\\e[2J"), text);
    assertTrue(text.contains("forged: limit 99, held 0, waiting 0\\x7f"), text);
    assertTrue(text.contains(" ev\\e[31mil@"), "the user, escaped: " + text);
    String json = outputOf(jeton("status", "--name", "esc", "--json"));
    assertTrue(json.contains("\\u001b]0;owned\\u0007\\u001b[2J"), "JSON escapes: " + json);
    holder.descendants().forEach(ProcessHandle::destroy);
    exitOf(holder);
  }

  @Test
  void waitAndLimit_work() throws Exception {
    assertEquals(0, exitOf(jeton("limit", "--name", "lim", "3")));
    assertTrue(outputOf(jeton("status", "--name", "lim", "--json")).contains("\"limit\": 3"));
    Process holder = jeton("run", "--name", "lim", "--", "sleep", "30");
    awaitStatus("lim", "\"held\": 1");
    assertEquals(75, exitOf(jeton("wait", "--name", "lim", "--timeout", "200ms")));
    Process waiting = jeton("wait", "--name", "lim");
    holder.descendants().forEach(ProcessHandle::destroy);
    assertEquals(0, exitOf(waiting));
  }

  @Test
  void badInput_givesAMessageAndExit2AndLeavesTheStateIntact() throws Exception {
    assertEquals(0, exitOf(jeton("run", "--name", "keep", "--permits", "2", "--", "true")));
    String[][] bad = {
      {"run", "--name", "a/b", "--", "true"},
      {"run", "--name", "..", "--", "true"},
      {"run", "--name", "keep", "--permits", "0", "--", "true"},
      {"run", "--name", "keep", "--permits", "5", "--", "true"},
      {"run", "--name", "keep", "--weight", "0", "--", "true"},
      {"run", "--name", "keep", "--weight", "3", "--", "true"},
      {"run", "--name", "keep", "--timeout", "soon", "--", "true"},
      {"limit", "--name", "keep", "0"},
      {"run", "--name", "fresh", "--weight", "4", "--", "true"},
      {"wait", "--name", "fresh"},
      {"status", "--name", "fresh"},
      {"run", "--name", "keep", "--timeout", "2562048h", "--", "true"},
    };
    for (String[] args : bad) {
      Process p = jeton(args);
      String out = outputOf(p);
      assertEquals(2, p.exitValue(), String.join(" ", args) + " -> " + out);
      assertFalse(out.isBlank(), "a message for " + String.join(" ", args));
      assertFalse(out.contains("Exception"), "no stack trace: " + out);
      assertTrue(out.lines().count() <= 3, "the error, not the whole usage: " + out);
    }
    String json = outputOf(jeton("status", "--json"));
    assertTrue(json.contains("{\"name\": \"keep\", \"limit\": 2, \"held\": 0"), json);
    assertFalse(json.contains("\"name\": \"a"), json);
    assertFalse(json.contains("fresh"), "a request that could never fit created nothing: " + json);
    Process missing = jeton("wait", "--name", "fresh");
    String said = outputOf(missing);
    assertTrue(
        said.contains("there is no semaphore 'fresh'") && !said.contains("give a limit"), said);
    Process heavy = jeton("run", "--name", "fresh", "--weight", "4", "--", "true");
    said = outputOf(heavy);
    assertTrue(said.contains("give --permits 4 or more"), said);
    assertEquals(
        0,
        exitOf(jeton("run", "--name", "fresh", "--permits", "4", "--weight", "4", "--", "true")));
  }

  /** Makes what looks like a semaphore named {@code name}, whatever the name, by hand. */
  abstract void makeSemaphoreNamed(String name) throws Exception;

  /**
   * Whoever made something named as no semaphore can be (an escape sequence in its name), status
   * lists the semaphores, not it, and does not fail on it.
   */
  @Test
  void status_leavesOutWhatNoSemaphoreCanBeNamed() throws Exception {
    assertEquals(0, exitOf(jeton("run", "--name", "real", "--", "true")));
    makeSemaphoreNamed("x\033[2Jy");
    Process status = jeton("status");
    String text = outputOf(status);
    assertEquals(0, status.exitValue(), text);
    assertEquals("real: limit 1, held 0, waiting 0\n", text);
  }

  /** Makes the stored limit of semaphore {@code name} unreadable, as damage would. */
  abstract void damageTheStoredLimit(String name) throws Exception;

  /**
   * A damaged stored limit (nothing else records it): every command says so and how to set it, in
   * one line with one prefix, and {@code jeton limit} repairs it.
   */
  @Test
  void damagedLimit_isReportedAndJetonLimitRepairsIt() throws Exception {
    assertEquals(0, exitOf(jeton("run", "--name", "damaged", "--permits", "2", "--", "true")));
    damageTheStoredLimit("damaged");
    Process run = jeton("run", "--name", "damaged", "--", "true");
    String said = outputOf(run);
    assertEquals(1, run.exitValue(), said);
    assertEquals(1, said.lines().count(), said);
    assertTrue(said.contains("damaged") && said.contains("jeton limit --name damaged"), said);
    assertEquals(0, said.indexOf("jeton: "), said);
    assertEquals(0, said.lastIndexOf("jeton: "), "one prefix: " + said);
    assertEquals(0, exitOf(jeton("limit", "--name", "damaged", "2")));
    assertEquals(0, exitOf(jeton("run", "--name", "damaged", "--", "true")));
    assertTrue(outputOf(jeton("status", "--name", "damaged")).startsWith("damaged: limit 2,"));
  }

  @Test
  void run_showsProgressOnlyWhenStderrIsATerminal() throws Exception {
    Process holder = jeton("run", "--name", "p", "--", "sleep", "30");
    awaitStatus("p", "\"held\": 1");
    assertTrue(
        Files.isExecutable(Path.of("/usr/bin/script")),
        "this test needs script(1) for a terminal: apt-get install bsdutils");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    StringBuilder backend = new StringBuilder();
    for (String arg : backendArgs()) {
      backend.append(" '").append(arg).append("'");
    }
    String line =
        "'"
            + java
            + "' -cp '"
            + System.getProperty("java.class.path")
            + "' "
            + Jeton.class.getName()
            + backend
            + " run --name p --timeout 2s -- true";
    Process inTerminal =
        new ProcessBuilder("script", "-q", "-e", "-c", line, "/dev/null")
            .redirectErrorStream(true)
            .start();
    started.add(inTerminal);
    String shown = outputOf(inTerminal);
    assertTrue(shown.contains("waiting for 1 of 'p': 0 ahead"), shown);
    Process piped = jeton("run", "--name", "p", "--timeout", "1s", "--", "true");
    String quiet = outputOf(piped);
    assertEquals(75, piped.exitValue());
    assertFalse(quiet.contains("ahead"), "no progress line into a pipe: " + quiet);
  }

  /**
   * Waits until the semaphore's status, as {@code jeton status --json} prints it, contains {@code
   * expected}. Reads it in this JVM, through the backend the command uses: starting a {@code jeton
   * status} process per look would cost a JVM start each time.
   */
  void awaitStatus(String name, String expected) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    String last = "";
    while (System.nanoTime() < deadline) {
      try {
        last = StatusCommand.toJson(List.of(probeStatus(name)));
        if (last.contains(expected)) {
          return;
        }
      } catch (IllegalArgumentException notCreatedYet) {
        last = String.valueOf(notCreatedYet.getMessage());
      }
      Thread.sleep(20);
    }
    throw new AssertionError("status of " + name + " never showed " + expected + ": " + last);
  }

  /** The status of {@code name}, read in this JVM. */
  Backend.View probeStatus(String name) throws Exception {
    Semaphore semaphore = probed.get(name);
    if (semaphore == null) {
      semaphore = probe().open(name, null, 0, "test probe");
      probed.put(name, semaphore);
    }
    return probe().status(semaphore);
  }

  /** Waits until {@code file} exists: the command run under permits has started. */
  static void awaitFile(Path file) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!Files.exists(file)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(file + " never appeared: the command did not start");
      }
      Thread.sleep(20);
    }
  }

  /** The backend the command uses, opened in this JVM. */
  abstract Backend newProbe();

  private Backend probe() {
    Backend b = probe;
    if (b == null) {
      b = newProbe();
      probe = b;
    }
    return b;
  }

  @AfterEach
  void closeProbe() {
    Backend b = probe;
    if (b != null) {
      b.close();
    }
    probe = null;
    probed.clear();
  }
}
