package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.host.HostRateLimiter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end: {@code jeton run --rate} in real processes, with real commands and signals. Every
 * wait is for an event (a file, a line of status, an exit); deadlines only guard against hangs.
 */
@Timeout(180)
class RateRunTest {
  @TempDir Path directory;
  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void killLeftovers() {
    for (Process p : started) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  private Process jeton(String... args) throws IOException {
    List<String> all = new ArrayList<>(List.of("--dir", directory.toString()));
    all.addAll(List.of(args));
    return jetonAlone(all.toArray(new String[0]));
  }

  /** {@code jeton args...}, without the test's --dir. */
  private Process jetonAlone(String... all) throws IOException {
    Path tmp = Files.createDirectories(directory.resolve("tmp"));
    Process p =
        new ProcessBuilder(AbstractJetonCommandTest.javaCommand(tmp, List.of(), all))
            .redirectErrorStream(true)
            .start();
    started.add(p);
    return p;
  }

  private Path log() {
    return directory.resolve("starts.log");
  }

  /** A command that appends {@code label} and the time it started to the log. */
  private String[] logging(String label) {
    return new String[] {"sh", "-c", "echo " + label + " $(date +%s%N) >> " + log()};
  }

  private List<String[]> logLines() throws IOException {
    if (!Files.exists(log())) {
      return List.of();
    }
    return Files.readAllLines(log()).stream().map(line -> line.split(" ")).toList();
  }

  private HostRateLimiter limiter(String name) throws IOException {
    return HostRateLimiter.builder(name).directory(directory).open();
  }

  /**
   * Waits until {@code count} logging commands have started or wait for a slot of {@code name}. The
   * log is read first: a waiter that starts meanwhile is then counted once or not yet, never twice.
   */
  private void awaitArrived(String name, int count) throws Exception {
    for (; ; ) {
      int startedCount = logLines().size();
      if (Files.exists(directory.resolve(name + "/rate/state"))
          && startedCount + limiter(name).queueLength() >= count) {
        return;
      }
      Thread.sleep(10);
    }
  }

  private String[] run(String name, String rate, String burst, String... command) {
    List<String> args =
        new ArrayList<>(List.of("run", "--name", name, "--rate", rate, "--burst", burst, "--"));
    args.addAll(List.of(command));
    return args.toArray(new String[0]);
  }

  /** Uses the bucket up, so that the next request waits for a slot. */
  private void drain(String name, String rate) throws Exception {
    Process p = jeton(run(name, rate, "1", "true"));
    assertEquals(0, AbstractJetonCommandTest.exitOf(p), output(p));
  }

  private static String output(Process p) throws IOException, InterruptedException {
    return AbstractJetonCommandTest.outputOf(p);
  }

  // ---------------------------------------------------------------- the bound and the order

  @Test
  void concurrentRuns_neverStartMoreThanBurstPlusRateTimesAnyWindow() throws Exception {
    int burst = 2;
    long perSecond = 2;
    List<Process> runs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      runs.add(jeton(run("bound", perSecond + "/1s", Integer.toString(burst), logging("r" + i))));
    }
    for (Process p : runs) {
      assertEquals(0, AbstractJetonCommandTest.exitOf(p), output(p));
    }
    List<Long> starts = new ArrayList<>();
    for (String[] line : logLines()) {
      starts.add(Long.parseLong(line[1]));
    }
    assertEquals(8, starts.size());
    // A slot is exact; a start comes after it by at most the lateness a waiter allows itself
    // (one emission interval, 500 ms here) and the time to start the command (300 ms allowed).
    assertWithinBound(starts, burst, perSecond, 0.5e9 + 0.3e9);
  }

  /**
   * Checks that no window of the start times (ns) holds more than {@code burst + perSecond * (t +
   * slack)} starts, {@code slack} being how late after its slot a start may come.
   */
  static void assertWithinBound(List<Long> starts, int burst, long perSecond, double slack) {
    List<Long> sorted = new ArrayList<>(starts);
    sorted.sort(null);
    for (int i = 0; i < sorted.size(); i++) {
      for (int j = i; j < sorted.size(); j++) {
        double t = sorted.get(j) - sorted.get(i);
        double allowed = burst + perSecond * (t + slack) / 1e9;
        assertTrue(j - i + 1 <= allowed, (j - i + 1) + " starts in " + t / 1e6 + " ms");
      }
    }
  }

  @Test
  void waiters_startInTheOrderTheyCame() throws Exception {
    drain("fifo", "1/1s");
    List<Process> runs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      runs.add(jeton(run("fifo", "1/1s", "1", logging("w" + i))));
      awaitArrived("fifo", i + 1); // the next comes once this one has its place (or passed)
    }
    for (Process p : runs) {
      assertEquals(0, AbstractJetonCommandTest.exitOf(p), output(p));
    }
    assertEquals(
        List.of("w0", "w1", "w2", "w3"), logLines().stream().map(line -> line[0]).toList());
  }

  // ---------------------------------------------------------------- giving up

  @Test
  void noWaitAndTimeout_exit75WithoutASlot_andRunWhenOneIsFree() throws Exception {
    drain("busy", "1/1h");
    Process noWait = jeton("run", "--name", "busy", "--rate", "1/1h", "--no-wait", "--", "true");
    assertEquals(75, AbstractJetonCommandTest.exitOf(noWait));
    String said = output(noWait);
    assertTrue(said.contains("rate limiter 'busy' has no free slot now (--no-wait)"), said);
    Process timed = jeton("run", "--name", "busy", "--rate", "1/1h", "--timeout", "2s", "true");
    assertEquals(75, AbstractJetonCommandTest.exitOf(timed));
    said = output(timed);
    assertTrue(said.contains("has no slot within --timeout 2s"), said);
    Process quiet =
        jeton("run", "--name", "busy", "--rate", "1/1h", "--no-wait", "-E", "0", "-q", "true");
    assertEquals(0, AbstractJetonCommandTest.exitOf(quiet));
    assertEquals("", output(quiet));
    assertEquals(0, limiter("busy").queueLength(), "no one gave up leaving a place behind");

    limiter("busy").setRate(1000, Duration.ofSeconds(1)); // a slot comes within a millisecond
    Process free = jeton("run", "--name", "busy", "--timeout", "30s", "--rate", "1000/1s", "true");
    assertEquals(0, AbstractJetonCommandTest.exitOf(free), output(free));
  }

  // ---------------------------------------------------------------- killed and stopped

  @Test
  void killedHeadAndMiddleWaiters_holdUpNoOneAndNeverRun() throws Exception {
    // Four at once with a burst of 1: one passes, three wait, 5 s apart.
    List<Process> runs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      runs.add(jeton(run("kill", "1/5s", "1", logging("k" + i))));
    }
    awaitArrived("kill", 4);
    List<Long> queue =
        limiter("kill").status().waiters().stream().map(w -> w.pid()).toList(); // oldest first
    assertEquals(3, queue.size(), "three wait (a machine too slow lets the head pass first)");
    List<Process> waiting = new ArrayList<>();
    for (long pid : queue) {
      waiting.add(runs.stream().filter(p -> p.pid() == pid).findFirst().orElseThrow());
    }
    kill(waiting.get(0)); // the head
    kill(waiting.get(1)); // the middle
    Process last = waiting.get(2);
    assertEquals(0, AbstractJetonCommandTest.exitOf(last), output(last));
    List<String> ran = logLines().stream().map(line -> line[0]).toList();
    assertEquals(2, ran.size(), "the first, and the last waiter: " + ran);
    assertEquals("k" + runs.indexOf(last), ran.get(1));
    assertEquals(0, limiter("kill").queueLength(), "the dead left no place behind");
  }

  private static void kill(Process p) throws Exception {
    List<ProcessHandle> helpers = p.descendants().toList();
    p.destroyForcibly();
    AbstractJetonCommandTest.exitOf(p);
    AbstractJetonCommandTest.awaitExit(helpers);
  }

  @Test
  void stoppedHeadWaiter_holdsUpNoOne_andRunsOnceContinued() throws Exception {
    drain("stop", "1/3s");
    Process head = jeton(run("stop", "1/3s", "1", logging("head")));
    awaitArrived("stop", 1);
    signal(head, "STOP"); // 3 s before its slot
    assertEquals(List.of(), logLines(), "stopped before its slot (a machine too slow fails here)");
    Process next = jeton(run("stop", "1/3s", "1", logging("next")));
    try {
      assertEquals(0, AbstractJetonCommandTest.exitOf(next), output(next));
      assertEquals(List.of("next"), logLines().stream().map(line -> line[0]).toList());
    } finally {
      signal(head, "CONT");
    }
    // It woke long after its slot: it gives the slot up and queues again, then runs.
    assertEquals(0, AbstractJetonCommandTest.exitOf(head), output(head));
    assertEquals(List.of("next", "head"), logLines().stream().map(line -> line[0]).toList());
  }

  private static void signal(Process p, String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start();
    assertEquals(0, AbstractJetonCommandTest.exitOf(kill));
  }

  // ---------------------------------------------------------------- status

  @Test
  void status_showsTheRateTheNextFreeSlotAndTheWaiters() throws Exception {
    drain("st", "1/1h");
    Process waiter = jeton(run("st", "1/1h", "1", "true"));
    awaitArrived("st", 1);
    Process text = jeton("status", "--name", "st");
    String shown = output(text);
    assertEquals(0, AbstractJetonCommandTest.exitOf(text), shown);
    assertTrue(shown.contains("st: rate 1/1h, burst 1, next free slot in "), shown);
    assertTrue(shown.contains("waiting 1"), shown);
    assertTrue(shown.contains("  waits 1 pid " + waiter.pid()), shown);
    Process json = jeton("status", "--json");
    shown = output(json);
    assertTrue(shown.contains("\"name\": \"st\", \"rate\": \"1/1h\", \"permits\": 1"), shown);
    assertTrue(shown.contains("\"periodMillis\": 3600000, \"burst\": 1, \"nextFreeMillis\": "));
    assertTrue(shown.contains("\"waiters\": [{\"pid\": " + waiter.pid()), shown);
  }

  @Test
  void limitRate_changesTheStoredRateForEveryRun() throws Exception {
    drain("lim", "1/1h");
    Process change = jeton("limit", "--name", "lim", "--rate", "1000/1s");
    assertEquals(0, AbstractJetonCommandTest.exitOf(change), output(change));
    Process run = jeton("run", "--name", "lim", "--rate", "1000/1s", "--timeout", "30s", "true");
    assertEquals(0, AbstractJetonCommandTest.exitOf(run), output(run));
    Process old = jeton(run("lim", "1/1h", "1", "true"));
    assertEquals(2, AbstractJetonCommandTest.exitOf(old));
    assertTrue(output(old).contains("exists with 1000 per 1s, not 1 per 1h"));
  }

  // ---------------------------------------------------------------- bad input and hostile files

  @Test
  void badRates_failAtOnceNamingTheValue() throws Exception {
    for (String bad : List.of("0/1m", "-1/1s", "10/0s", "10", "10/xyz", "99999999999/1s")) {
      Process p = jeton("run", "--rate", bad, "--", "true");
      String said = output(p);
      assertEquals(2, AbstractJetonCommandTest.exitOf(p), said);
      assertTrue(said.contains("'" + bad + "'"), said);
    }
    Process burst = jeton("run", "--burst", "2", "true");
    assertEquals(2, AbstractJetonCommandTest.exitOf(burst));
    assertTrue(output(burst).contains("--burst needs --rate"));
    Process heavy = jeton("run", "--rate", "5/1s", "--burst", "2", "--weight", "3", "true");
    assertEquals(2, AbstractJetonCommandTest.exitOf(heavy));
    assertTrue(output(heavy).contains("--weight 3 is more than the burst 2"));
    Process other = jeton(run("r", "5/1s", "2", "true"));
    assertEquals(0, AbstractJetonCommandTest.exitOf(other));
    Process changed = jeton(run("r", "6/1s", "2", "true"));
    assertEquals(2, AbstractJetonCommandTest.exitOf(changed));
    assertTrue(output(changed).contains("exists with 5 per 1s, not 6 per 1s"));
  }

  @Test
  void symbolicLinkPlantedAsTheState_isRefusedAndNeverWritten() throws Exception {
    Path victim = Files.writeString(directory.resolve("victim"), "precious");
    Files.createDirectories(directory.resolve("planted/rate"));
    Files.createSymbolicLink(directory.resolve("planted/rate/state"), victim);
    Process p = jeton(run("planted", "1/1s", "1", "true"));
    String said = output(p);
    assertEquals(1, AbstractJetonCommandTest.exitOf(p), said);
    assertTrue(said.contains("not a regular file"), said);
    assertEquals("precious", Files.readString(victim, StandardCharsets.UTF_8));
  }

  @Test
  void directoryOthersMayWriteOrOfAnotherUser_isRefused() throws Exception {
    Path open = Files.createDirectory(directory.resolve("open"));
    Files.setAttribute(open, "unix:mode", 0777);
    Process p = jetonAlone("--dir", open.toString(), "run", "--rate", "1/1s", "true");
    String said = output(p);
    assertEquals(2, AbstractJetonCommandTest.exitOf(p), said);
    assertTrue(said.contains("lets other users in"), said);
    assertFalse(Files.exists(open.resolve("default")), "nothing was made in it");

    Path theirs = Files.createDirectory(directory.resolve("theirs"));
    Files.setAttribute(theirs, "unix:mode", 0700);
    boolean root = "root".equals(System.getProperty("user.name"));
    if (root) { // as root the test can hand the directory to another user
      Files.setAttribute(theirs, "unix:uid", 65534);
      Files.setAttribute(theirs, "unix:gid", 65534);
      Process q = jetonAlone("--dir", theirs.toString(), "run", "--rate", "1/1s", "true");
      said = output(q);
      assertEquals(2, AbstractJetonCommandTest.exitOf(q), said);
      assertTrue(said.contains("neither of them you"), said);
    }
  }

  @Test
  void rateAndPermits_togetherNeedBoth() throws Exception {
    Path ready = directory.resolve("holding");
    Process holder =
        jeton(
            "run",
            "--name",
            "both",
            "--permits",
            "1",
            "--rate",
            "100/1s",
            "--",
            "sh",
            "-c",
            "touch " + ready + "; sleep 30");
    while (!Files.exists(ready)) {
      Thread.sleep(10);
    }
    Process busy =
        jeton("run", "--name", "both", "--permits", "1", "--rate", "100/1s", "--no-wait", "true");
    assertEquals(75, AbstractJetonCommandTest.exitOf(busy), output(busy));
    holder.descendants().forEach(ProcessHandle::destroy);
    AbstractJetonCommandTest.exitOf(holder);
    Process free =
        jeton("run", "--name", "both", "--permits", "1", "--rate", "100/1s", "--", "true");
    assertEquals(0, AbstractJetonCommandTest.exitOf(free), output(free));
  }
}
