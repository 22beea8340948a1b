package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.contract.HoldLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** End to end: real {@code jeton} processes, real commands, real signals. */
class JetonCommandTest {
  @TempDir Path directory;
  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void killLeftovers() {
    for (Process p : started) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  /** Starts {@code jeton --dir <temp> args...} as its own JVM. */
  private Process jeton(String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Jeton.class.getName());
    command.add("--dir");
    command.add(directory.toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    started.add(p);
    return p;
  }

  private static int exitOf(Process p) throws InterruptedException {
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "jeton finished");
    return p.exitValue();
  }

  private static String outputOf(Process p) throws IOException, InterruptedException {
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
    return "echo start $(date +%s%N) " + weight + " >> " + log + "; sleep 0.3; echo end $(date +%s%N) "
        + weight + " >> " + log;
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
      runs.add(jeton("run", "--name", "w", "--permits", "3", "--weight", Integer.toString(weight),
          "--", "sh", "-c", recording(weight)));
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
  void run_passesNameAndWeightInTheEnvironment() throws Exception {
    Process p = jeton("run", "--name", "envy", "--permits", "3", "--weight", "2", "--",
        "sh", "-c", "echo $JETON_NAME $JETON_WEIGHT");
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
    assertEquals(75, exitOf(jeton("run", "--name", "busy", "--timeout", "200ms", "--", "true")));
    assertEquals(0, exitOf(jeton("run", "--name", "busy", "--no-wait", "-E", "0", "-q", "--", "true")));
    assertEquals(9, exitOf(jeton("run", "--name", "busy", "--no-wait", "-E", "9", "--", "true")));
    holder.descendants().forEach(ProcessHandle::destroy);
    exitOf(holder);
    assertEquals(0, exitOf(jeton("run", "--name", "busy", "--no-wait", "--", "true")));
    assertEquals(0, exitOf(jeton("run", "--name", "busy", "--timeout", "200ms", "--", "true")));
  }

  @Test
  void run_killedWithSigkill_freesItsPermitForTheNextWaiter() throws Exception {
    Process holder = jeton("run", "--name", "k", "--", "sleep", "60");
    awaitStatus("k", "\"held\": 1");
    List<ProcessHandle> orphans = holder.descendants().toList();
    holder.destroyForcibly(); // SIGKILL to jeton itself
    exitOf(holder);
    orphans.forEach(ProcessHandle::destroyForcibly);
    assertEquals(0, exitOf(jeton("run", "--name", "k", "--timeout", "10s", "--", "true")));
  }

  @ParameterizedTest
  @ValueSource(strings = {"INT", "TERM", "HUP"})
  void run_forwardsTheSignalToTheCommandAndReleasesAfterItExits(String signal) throws Exception {
    Path marker = directory.resolve("got-" + signal);
    Process run = jeton("run", "--name", "sig", "--", "sh", "-c",
        "trap 'echo yes > " + marker + "; exit 7' " + signal + "; while true; do sleep 0.05; done");
    awaitStatus("sig", "\"held\": 1");
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(run.pid())).start();
    assertEquals(0, exitOf(kill));
    assertEquals(7, exitOf(run), "jeton exits with the command's code");
    assertTrue(Files.exists(marker), "the command got SIG" + signal);
    assertEquals(0, exitOf(jeton("run", "--name", "sig", "--no-wait", "--", "true")), "released");
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
    };
    for (String[] args : bad) {
      Process p = jeton(args);
      String out = outputOf(p);
      assertEquals(2, p.exitValue(), String.join(" ", args) + " -> " + out);
      assertFalse(out.isBlank(), "a message for " + String.join(" ", args));
    }
    String json = outputOf(jeton("status", "--json"));
    assertTrue(json.contains("{\"name\": \"keep\", \"limit\": 2, \"held\": 0"), json);
    assertFalse(json.contains("\"name\": \"a"), json);
  }

  @Test
  void run_showsProgressOnlyWhenStderrIsATerminal() throws Exception {
    Process holder = jeton("run", "--name", "p", "--", "sleep", "30");
    awaitStatus("p", "\"held\": 1");
    assertTrue(
        Files.isExecutable(Path.of("/usr/bin/script")),
        "this test needs script(1) for a terminal: apt-get install bsdutils");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String line = "'" + java + "' -cp '" + System.getProperty("java.class.path") + "' "
        + Jeton.class.getName() + " --dir '" + directory + "' run --name p --timeout 2s -- true";
    Process inTerminal = new ProcessBuilder("script", "-q", "-e", "-c", line, "/dev/null")
        .redirectErrorStream(true).start();
    started.add(inTerminal);
    String shown = outputOf(inTerminal);
    assertTrue(shown.contains("waiting for 1 of 'p': 0 ahead"), shown);
    Process piped = jeton("run", "--name", "p", "--timeout", "1s", "--", "true");
    String quiet = outputOf(piped);
    assertEquals(75, piped.exitValue());
    assertFalse(quiet.contains("ahead"), "no progress line into a pipe: " + quiet);
  }

  private void awaitStatus(String name, String expected) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    String last = "";
    while (System.nanoTime() < deadline) {
      last = outputOf(jeton("status", "--name", name, "--json"));
      if (last.contains(expected)) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("status of " + name + " never showed " + expected + ": " + last);
  }
}
