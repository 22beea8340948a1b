package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.RedisServer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code jeton} command on fleet-wide semaphores, against a real redis-server: every test of
 * the machine-wide command, and the Redis-only behaviour (leases in the environment, a lease lost
 * while the command runs, JETON_REDIS_URL, Redis unreachable).
 */
class JetonRedisCommandIntegrationTest extends AbstractJetonCommandTest {
  private static RedisServer server;
  private static int tests;
  private String prefix = "";
  private boolean fromEnvironment;

  @BeforeAll
  static void startRedis() {
    server = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    server.close();
  }

  /** How the commands name the Redis under test. */
  String uri() {
    return uriOf(server);
  }

  /** How the commands name {@code redis}: a plain URI, which they reach through Jedis. */
  String uriOf(RedisServer redis) {
    return redis.uri();
  }

  @BeforeEach
  void newPrefix() {
    prefix = "t" + tests++; // each test sees only its own semaphores
  }

  @Override
  List<String> backendArgs() {
    return fromEnvironment
        ? List.of("--key-prefix", prefix)
        : List.of("--redis", uri(), "--key-prefix", prefix);
  }

  @Override
  Map<String, String> environment() {
    return fromEnvironment ? Map.of("JETON_REDIS_URL", uri()) : Map.of();
  }

  @Override
  List<String> quickRecoveryArgs() {
    return List.of("--lease", "2s"); // a dead holder's lease expires after this
  }

  @Override
  Backend newProbe() {
    return RedisDefaults.backend(uri(), prefix, null);
  }

  @Override
  void damageTheStoredLimit(String name) {
    server.command("HSET", "{" + prefix + ":" + name + "}:state", "limit", "garbage");
  }

  /** As anyone who can write to the Redis can. */
  @Override
  void makeSemaphoreNamed(String name) {
    server.command("HSET", "{" + prefix + ":" + name + "}:state", "limit", "1");
  }

  @Test
  void run_givesTheCommandItsLeaseAndFencingTokens() throws Exception {
    Process p =
        jeton(
            "run",
            "--name",
            "env",
            "--permits",
            "3",
            "--weight",
            "2",
            "--",
            "sh",
            "-c",
            "echo $JETON_NAME $JETON_WEIGHT $JETON_KEY_PREFIX $JETON_FENCING_TOKENS"
                + " $JETON_LEASE_ID");
    String out = outputOf(p);
    assertEquals(0, p.exitValue(), out);
    // Only the command's line: nothing from jeton's libraries (SLF4J's warnings, Lettuce's logs).
    assertEquals(1, out.lines().count(), out);
    String[] words = out.trim().split(" ");
    assertEquals(List.of("env", "2", prefix), List.of(words).subList(0, 3));
    assertTrue(words[3].matches("0:\\d+,1:\\d+"), "two slots with their tokens: " + words[3]);
    assertTrue(words[4].length() >= 16, "a lease id: " + words[4]);
  }

  /**
   * A Redis out of memory under the default policy (noeviction) refuses every call of the function,
   * status's too: jeton fails, and says why in one line, once.
   */
  @Test
  void run_whenRedisIsOutOfMemory_saysSoInOneLineAndFails() throws Exception {
    server.command("CONFIG", "SET", "maxmemory", "1"); // over it already: every write refused
    try {
      Process p = jeton("run", "--name", "oom", "--", "true");
      String out = outputOf(p);
      assertEquals(1, p.exitValue(), out);
      assertEquals(1, out.lines().count(), out);
      assertTrue(out.startsWith("jeton: Redis: OOM command not allowed"), out);
      assertEquals(out.indexOf("OOM"), out.lastIndexOf("OOM"), "said once: " + out);
      Process status = jeton("status", "--name", "oom");
      String said = outputOf(status);
      assertEquals(1, status.exitValue(), said);
      assertTrue(said.startsWith("jeton: Redis: OOM command not allowed"), said);
    } finally {
      server.command("CONFIG", "SET", "maxmemory", "0");
    }
  }

  /**
   * A Redis that stops answering (SIGSTOP: the kernel still accepts connections) fails a command
   * with --timeout or --no-wait when that bound passes, connecting included, with exit 1 and a line
   * that says so; a request Redis had queued before it stopped times out as busy (75). It took the
   * clients' own timeout (10 s for each call) before, whatever the bound.
   */
  @Test
  void frozenRedis_timeoutAndNoWaitKeepTheirBound() throws Exception {
    try (RedisServer frozen = RedisServer.start()) {
      List<String> at = List.of("--redis", uriOf(frozen), "--key-prefix", prefix);
      java.nio.file.Path holding = directory.resolve("holding");
      Process holder =
          jetonAlone(
              with(at, "run", "--name", "f", "--", "sh", "-c", "touch " + holding + "; sleep 60"));
      awaitFile(holding);
      Process queued = jetonAlone(with(at, "run", "--name", "f", "--timeout", "6s", "--", "true"));
      awaitQueued(frozen, "f");
      frozen.pause();
      try {
        String[][] bounded = {
          {"run", "--name", "f", "--timeout", "3s", "--", "true"},
          {"run", "--name", "f", "--no-wait", "--", "true"},
          {"wait", "--name", "f", "--timeout", "3s"},
        };
        for (String[] args : bounded) {
          long start = System.nanoTime();
          Process p = jetonAlone(with(at, args));
          String said = outputOf(p);
          long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
          String what = String.join(" ", args) + " -> " + said;
          assertEquals(1, p.exitValue(), what);
          assertEquals(1, said.lines().count(), what);
          assertTrue(
              said.startsWith(
                  "jeton: Redis: no answer from "
                      + at.get(1)
                      + " within "
                      + (args[3].equals("--no-wait") ? "2s" : "3s")),
              what);
          // What distinguishes the bound from the clients' own timeout, with room for a slow start.
          assertTrue(tookMillis < 10_000, what + " after " + tookMillis + " ms");
        }
        String said = outputOf(queued);
        assertEquals(75, queued.exitValue(), said);
        assertTrue(said.contains("timed out after 6s"), said);
      } finally {
        frozen.resume();
        holder.descendants().forEach(ProcessHandle::destroy);
        exitOf(holder);
      }
    }
  }

  /**
   * A machine too busy to let the command reach Redis within --no-wait's bound (here the command
   * stopped for longer than the bound once its alarm runs, as a loaded machine can hold it) is not
   * a Redis that does not answer: the command asks Redis whether it is there before it says so, and
   * goes on when it is. Before, it said "Redis: no answer" and exited 1 (it did so in the suite on
   * a machine at load 9, with Lettuce's start).
   */
  @Test
  void noWait_onAMachineTooBusyToHearRedisInTime_isNotToldRedisIsSilent() throws Exception {
    java.nio.file.Path holding = directory.resolve("holding");
    Process holder =
        jeton("run", "--name", "slow", "--", "sh", "-c", "touch " + holding + "; sleep 60");
    awaitFile(holding);
    Process noWait = jeton("run", "--name", "slow", "--no-wait", "--", "true");
    try {
      awaitThread(noWait, "jeton-redis-bou"); // the alarm is running (a thread's name, cut)
      signal("STOP", noWait);
      Thread.sleep(RedisBound.LEAST.plusMillis(500).toMillis());
      signal("CONT", noWait);
      String said = outputOf(noWait);
      assertEquals(75, noWait.exitValue(), said);
    } finally {
      holder.descendants().forEach(ProcessHandle::destroy);
      exitOf(holder);
    }
  }

  /** Waits until {@code p} has a thread whose name starts with {@code name}. */
  private static void awaitThread(Process p, String name) throws Exception {
    java.nio.file.Path tasks = java.nio.file.Path.of("/proc", Long.toString(p.pid()), "task");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      assertTrue(p.isAlive(), "the command ended before its alarm was seen");
      try (java.util.stream.Stream<java.nio.file.Path> listed = java.nio.file.Files.list(tasks)) {
        for (java.nio.file.Path task : listed.toList()) {
          try {
            if (java.nio.file.Files.readString(task.resolve("comm")).startsWith(name)) {
              return;
            }
          } catch (java.io.IOException gone) {
            // a thread that ended while listed
          }
        }
      }
      assertTrue(System.nanoTime() < deadline, "no thread " + name + " in " + p.pid());
      Thread.sleep(1);
    }
  }

  private static void signal(String name, Process p) throws Exception {
    assertEquals(
        0, new ProcessBuilder("kill", "-" + name, Long.toString(p.pid())).start().waitFor());
  }

  /**
   * Ctrl-Z (SIGTSTP to jeton, as the terminal sends it) stops the command, all of it, and jeton
   * goes on renewing its lease: no second holder enters while the stopped command lives, however
   * long past the lease time; SIGCONT continues it, and the next holder enters once it is done.
   * Before, jeton stopped alone: the command ran on, the lease ran out, and a second holder came in
   * under limit 1 beside it.
   */
  @Test
  void run_stoppedWithCtrlZ_keepsItsLeaseUntilContinuedAndDone() throws Exception {
    StoppableCommand command = new StoppableCommand(directory);
    List<String> args =
        new java.util.ArrayList<>(
            List.of("run", "--name", "ctrlz", "--permits", "1", "--lease", "2s", "--"));
    args.addAll(command.line());
    Process first = jeton(args.toArray(new String[0]));
    long commandPid = command.awaitRunning();

    StoppableCommand.send("TSTP", first.pid());
    StoppableCommand.awaitStopped(commandPid, true, "the command");
    // Past the lease time twice over from the stop: a lease not renewed since has run out.
    Thread.sleep(4_000);
    Process second = jeton("run", "--name", "ctrlz", "--no-wait", "--", "true");
    String said = outputOf(second);
    assertEquals(
        75, second.exitValue(), "a second holder entered beside the stopped command: " + said);
    assertTrue(StoppableCommand.isStopped(commandPid), "the command is still stopped");

    java.nio.file.Path entered = directory.resolve("entered");
    Process next =
        jeton(
            "run",
            "--name",
            "ctrlz",
            "--timeout",
            "60s",
            "--",
            "sh",
            "-c",
            "date +%s%N > " + entered);
    awaitStatus("ctrlz", "\"waiters\": [{");
    StoppableCommand.send("CONT", first.pid());
    StoppableCommand.awaitStopped(commandPid, false, "the command");
    command.finish();
    assertEquals(0, exitOf(first));
    String told = outputOf(first);
    assertTrue(told.contains("jeton: stopped the command; it keeps its permits on 'ctrlz'"), told);
    assertTrue(told.contains("jeton: continued the command"), told);
    assertEquals(0, exitOf(next), outputOf(next));
    long enteredAt = Long.parseLong(java.nio.file.Files.readString(entered).trim());
    assertTrue(command.lastBeat() < enteredAt, "the next holder entered before the first was done");
  }

  /**
   * What no client writes, planted in Redis, and {@code jeton status} in a JVM with the launcher's
   * 64 MB heap: a holder's record grown to 15 MB is damage, repaired without ever being sent (it
   * ran status out of memory, a stack trace); a key name of 40 MB, which the listing of every
   * semaphore reads whole (SCAN), fails it in one line, exit 1 (the thread that reads Redis died of
   * it, and status hung for ever).
   */
  @Test
  void status_withHugeRecordsPlanted_neitherRunsOutOfMemoryNorHangs() throws Exception {
    Process holder = jeton("run", "--name", "big", "--", "sleep", "60");
    awaitStatus("big", "\"held\": 1");
    String state = "{" + prefix + ":big}:state";
    String field =
        server
            .command("HKEYS", state)
            .lines()
            .filter(f -> f.startsWith("r:"))
            .findFirst()
            .orElseThrow();
    server.command(
        "HSET", state, field, server.command("HGET", state, field) + "x".repeat(15 << 20));
    Process status =
        jetonWithJvmOptions(List.of("-Xmx64m"), with(backendArgs(), "status", "--name", "big"));
    assertTrue(status.waitFor(60, TimeUnit.SECONDS), "status hung");
    String said = outputOf(status);
    assertEquals(0, status.exitValue(), said);
    assertEquals("big: limit 1, held 0, waiting 0\n", said, "the record ended as damaged");
    assertTrue(server.log().contains("a record is too large"), "said in Redis's log");

    server.command("SET", "{" + prefix + ":" + "y".repeat(40 << 20) + "}:state", "x");
    Process listing = jetonWithJvmOptions(List.of("-Xmx64m"), with(backendArgs(), "status"));
    assertTrue(listing.waitFor(60, TimeUnit.SECONDS), "status of every semaphore hung");
    said = outputOf(listing);
    assertEquals(1, listing.exitValue(), said);
    assertEquals(1, said.lines().count(), said);
    assertTrue(said.startsWith("jeton: Redis: "), said);
    holder.descendants().forEach(ProcessHandle::destroy);
    exitOf(holder);
  }

  private static String[] with(List<String> first, String... rest) {
    List<String> all = new java.util.ArrayList<>(first);
    all.addAll(List.of(rest));
    return all.toArray(new String[0]);
  }

  /** Waits until {@code redis} shows a waiter of semaphore {@code name} (this test's prefix). */
  private void awaitQueued(RedisServer redis, String name) throws Exception {
    String queue = "{" + prefix + ":" + name + "}:queue";
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!redis.command("ZCARD", queue).equals("1")) {
      assertTrue(System.nanoTime() < deadline, "no waiter queued in " + queue);
      Thread.sleep(20);
    }
  }

  @Test
  void run_findsRedisInJetonRedisUrl() throws Exception {
    fromEnvironment = true;
    Process holder = jeton("run", "--name", "envurl", "--", "sleep", "30");
    awaitStatus("envurl", "\"held\": 1");
    String json = outputOf(jeton("status", "--name", "envurl", "--json"));
    assertTrue(json.contains("\"fencingTokens\": \"0:"), json);
    assertTrue(json.contains("\"expiresAt\": "), json);
    holder.descendants().forEach(ProcessHandle::destroy);
    assertEquals(143, exitOf(holder));
  }

  /**
   * After Redis lost its state, the holder's renewal recreates the semaphore in quarantine: a
   * --no-wait run then says so and exits 1, not "busy" with 75 (which -E 0 would make a silent
   * success while nothing can be granted). Before: "busy (--no-wait)", exit 75.
   */
  @Test
  void runNoWait_inQuarantine_saysSoAndExits1() throws Exception {
    Process holder = jeton("run", "--name", "quarantined", "--lease", "30s", "--", "sleep", "120");
    awaitStatus("quarantined", "\"held\": 1");
    server.restart(); // empty: every lease is gone
    String state = "{" + prefix + ":quarantined}:state"; // this test's --key-prefix
    dev.jeton.redis.testing.Await.until(
        () -> server.command("EXISTS", state).equals("1"), "the holder's renewal to recreate it");
    Process noWait = jeton("run", "--name", "quarantined", "--no-wait", "--", "true");
    String said = outputOf(noWait);
    assertEquals(1, noWait.exitValue(), said);
    assertTrue(said.contains("jeton: semaphore 'quarantined' is in quarantine until "), said);
    holder.descendants().forEach(ProcessHandle::destroy);
    exitOf(holder);
  }

  @Test
  void run_whenTheLeaseIsLost_saysSoAndWithOnLostKillTerminatesTheCommand() throws Exception {
    java.nio.file.Path warnedRuns = directory.resolve("warned-runs");
    java.nio.file.Path killedRuns = directory.resolve("killed-runs");
    Process warned =
        jeton(
            "run",
            "--name",
            "warn",
            "--lease",
            "1s",
            "--",
            "sh",
            "-c",
            "touch " + warnedRuns + "; sleep 60");
    java.nio.file.Path killedChild = directory.resolve("killed-child");
    Process killed =
        jeton(
            "run",
            "--name",
            "kill",
            "--lease",
            "1s",
            "--on-lost",
            "kill",
            "--",
            "sh",
            "-c",
            "touch "
                + killedRuns
                + "; sleep 60 & echo $! > "
                + killedChild
                + ".new; mv "
                + killedChild
                + ".new "
                + killedChild
                + "; wait");
    awaitFile(warnedRuns);
    awaitFile(killedRuns);
    awaitFile(killedChild);

    server.restart(); // empty: every lease is gone

    assertEquals(128 + 15, exitOf(killed), "the command was sent SIGTERM");
    String said = outputOf(killed);
    assertTrue(said.contains("lost the lease on semaphore 'kill'"), said);
    assertTrue(said.contains("terminating the command"), said);
    long child = Long.parseLong(java.nio.file.Files.readString(killedChild).trim());
    assertTrue(!runs(child), "what the command started was terminated too");
    // Each jeton finds its loss on its own schedule: read until the warned one has said so.
    java.io.BufferedReader warnings =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(
                warned.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
    CompletableFuture<String> warning =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                for (String line; (line = warnings.readLine()) != null; ) {
                  if (line.contains("lost the lease on semaphore 'warn'")) {
                    return line;
                  }
                }
                return "(jeton exited without saying so)";
              } catch (java.io.IOException e) {
                return e.toString();
              }
            });
    String line = warning.get(30, TimeUnit.SECONDS);
    assertTrue(line.contains("lost the lease on semaphore 'warn'"), line);
    assertTrue(warned.isAlive(), "without --on-lost kill the command keeps running");
    warned.descendants().forEach(ProcessHandle::destroy);
    assertEquals(143, exitOf(warned));
  }

  @Test
  void unreachableRedis_givesAMessageAndExit1() throws Exception {
    List<String> unreachable = List.of("--redis", "redis://127.0.0.1:1");
    for (String sub : List.of("run", "status", "wait", "limit")) {
      List<String> args = new java.util.ArrayList<>(unreachable);
      args.add(sub);
      switch (sub) {
        case "run" -> args.addAll(List.of("--", "true"));
        case "limit" -> args.addAll(List.of("--name", "x", "2"));
        default -> {}
      }
      Process p = new ProcessBuilder(launcher(args)).redirectErrorStream(true).start();
      started.add(p);
      String out = outputOf(p);
      assertEquals(1, p.exitValue(), sub + ": " + out);
      assertTrue(out.startsWith("jeton: Redis: "), sub + ": " + out);
      assertTrue(out.contains("127.0.0.1"), "names where it tried: " + out);
    }
  }

  /**
   * The launcher's training run for {@code --redis} commands (decision 60) goes to the user's
   * Redis: it must reach it, call the function there, and change nothing.
   */
  @Test
  void training_callsTheUsersRedis_andWritesNothing() throws Exception {
    Process warm = jeton("status", "--name", "nobody"); // loads the function if it is missing
    outputOf(warm);
    assertEquals(2, warm.exitValue(), "there is no semaphore 'nobody'");
    String keysBefore = sortedKeys();
    long writesBefore = infoField("persistence", "rdb_changes_since_last_save");
    long callsBefore = infoField("commandstats", "cmdstat_fcall:calls");

    List<String> command = launcher(List.of("redis"));
    command.set(command.size() - 2, Training.class.getName());
    ProcessBuilder training = new ProcessBuilder(command).redirectErrorStream(true);
    training.environment().put("JETON_REDIS_URL", uri());
    Process p = training.start();
    started.add(p);
    String out = outputOf(p);

    assertEquals(0, p.exitValue(), out);
    assertEquals("", out, "the training prints nothing");
    assertTrue(
        infoField("commandstats", "cmdstat_fcall:calls") > callsBefore,
        "it called the function in Redis");
    assertEquals(
        writesBefore, infoField("persistence", "rdb_changes_since_last_save"), "it wrote nothing");
    assertEquals(keysBefore, sortedKeys());
  }

  private static String sortedKeys() {
    return server.command("KEYS", "*").lines().sorted().collect(Collectors.joining("\n"));
  }

  /** A number from {@code INFO section}: the value after {@code name=} or {@code name:}. */
  private static long infoField(String section, String name) {
    String info = server.command("INFO", section);
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(name) + "[=:](\\d+)")
            .matcher(info);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static List<String> launcher(List<String> args) {
    List<String> command = new java.util.ArrayList<>();
    command.add(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Jeton.class.getName());
    command.addAll(args);
    return command;
  }
}
