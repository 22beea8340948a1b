package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.jeton.redis.RandomizedHistoryChecker.ClientHistory;
import dev.jeton.redis.RandomizedHistoryChecker.MonitorLine;
import dev.jeton.redis.RandomizedHistoryChecker.RedisRequest;
import dev.jeton.redis.RandomizedHistoryChecker.Report;
import dev.jeton.redis.RandomizedHistoryChecker.ResourceReport;
import dev.jeton.redis.RandomizedHistoryChecker.SamplerReport;
import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.ChildJvm;
import dev.jeton.redis.testing.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A randomized run: {@value #CLIENTS} client processes ({@link RandomClient}) each make {@value
 * #REQUESTS} requests of random weight on one Redis semaphore of limit {@value #LIMIT}: blocking,
 * with short timeouts, asynchronous and cancelled after a short delay, or tryAcquire. Each lease
 * granted is used at a fenced resource this test runs, then released. In the middle, one client is
 * frozen (SIGSTOP) while it holds a lease, for longer than the lease time, so that one lease is
 * lost and must be reported.
 *
 * <p>Everything is recorded: Redis's own log of every command it ran (MONITOR, scripts' commands
 * included: a total order of the semaphore's history), each client's history, what the resource
 * saw, and samples of Redis's state taken from outside every 20 ms. Then {@link
 * RandomizedHistoryChecker} checks that the limit was never exceeded in Redis's view nor at the
 * resource, that no lease was lost without being reported, and that FIFO order was kept among
 * waiters that queued at distinct times (its javadoc says exactly how). Last, the checker is run
 * again on copies of this run's records with one fault put in each, to show that each check fails
 * when it should.
 *
 * <p>Assumption: every process runs on this machine, so the client's wall clock and the one Redis
 * stamps its log with are the same clock (CLOCK_REALTIME); the checker uses that only to confirm
 * that it matched each client request to the right request in Redis.
 *
 * <p>The seed is printed; {@code -Djeton.randomized.seed=<seed>} replays the same random choices
 * (the interleaving still varies).
 */
class RedisRandomizedIntegrationTest {
  static final int CLIENTS = 8;
  static final int LIMIT = 5;

  /**
   * Leases a handle of this JVM holds all through the run, so that the clients compete for {@value
   * #LIMIT} permits of a semaphore with thousands of holders (its state must not grow per call with
   * them); released at the end, which spills their slots into the spare list.
   */
  static final int HELD_IN_BACKGROUND = 1000;

  static final int SEMAPHORE_LIMIT = LIMIT + HELD_IN_BACKGROUND;
  static final int REQUESTS = 150;
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration PAUSE = Duration.ofMillis(3500); // longer than the lease
  private static final String NAME = "randomized";
  private static final String KEY_TAG =
      "{" + RedisSemaphoreOptions.DEFAULT_KEY_PREFIX + ":" + NAME + "}:";

  @Test
  // Only against a hang, above the suite's default of 120 s: eight client JVMs take about 95 s
  // on a loaded 2-core machine.
  @Timeout(value = 30, unit = TimeUnit.MINUTES)
  void randomizedClients_limitKeptLossesReportedAndFifoKept(@TempDir Path dir) throws Exception {
    long seed = Long.getLong("jeton.randomized.seed", new SecureRandom().nextLong());
    System.out.println(
        "RedisRandomizedIntegrationTest seed "
            + seed
            + " (replay with -Djeton.randomized.seed="
            + seed
            + ")");
    long startedNanos = System.nanoTime();
    List<ChildJvm> children = new ArrayList<>();
    List<MonitorLine> log;
    ResourceReport resourceReport;
    SamplerReport samplerReport;
    List<String> endState = new ArrayList<>();
    long runNanos;
    try (RedisServer redis = RedisServer.start();
        RedisMonitor monitor = RedisMonitor.start(redis.port(), KEY_TAG);
        FencedResource resource = FencedResource.start(SEMAPHORE_LIMIT);
        Sampler sampler = new Sampler(redis, SEMAPHORE_LIMIT);
        RedisSemaphore background = openBackground(redis)) {
      List<Lease> heldInBackground = RedisSemaphores.takeLeases(background, HELD_IN_BACKGROUND);
      try {
        for (int k = 0; k < CLIENTS; k++) {
          children.add(
              ChildJvm.start(
                  RandomClient.class,
                  redis.uri(),
                  NAME,
                  Integer.toString(SEMAPHORE_LIMIT),
                  Long.toString(seed + k),
                  Integer.toString(REQUESTS),
                  dir.resolve("client-" + k + ".history").toString(),
                  Integer.toString(resource.port()),
                  Integer.toString(k),
                  Integer.toString(k == 0 ? REQUESTS / 3 : -1),
                  Long.toString(LEASE.toMillis())));
        }
        for (ChildJvm child : children) {
          child.await("READY");
        }
        long runStart = System.nanoTime();
        sampler.start();
        children.forEach(child -> child.tell("start"));

        // The pause: client 0 holds one permit and waits; freeze it past the lease time.
        ChildJvm paused = children.get(0);
        String holding = paused.await("HOLDING");
        paused.signal("STOP");
        Thread.sleep(PAUSE.toMillis());
        paused.signal("CONT");
        paused.tell("go");
        System.out.println(
            "paused client 0 for "
                + PAUSE.toMillis()
                + " ms holding "
                + holding.substring("HOLDING ".length()));

        for (int k = 0; k < CLIENTS; k++) {
          ChildJvm child = children.get(k);
          assertEquals("DONE", awaitEnd(child), "client " + k + " finished");
          assertEquals(0, child.waitFor(), "client " + k + " exit code");
        }
        for (Lease lease : heldInBackground) {
          assertTrue(lease.isHeld(), "a background lease was lost: " + lease);
        }
        List<CompletableFuture<Boolean>> released = new ArrayList<>();
        heldInBackground.forEach(lease -> released.add(lease.releaseAsync()));
        for (CompletableFuture<Boolean> r : released) {
          assertTrue(r.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS), "released");
        }
        runNanos = System.nanoTime() - runStart;
      } finally {
        children.forEach(ChildJvm::close);
      }
      sampler.close();
      // No script runs from here on, so a lease nobody released would still be here.
      for (String[] probe :
          List.of(
              // the counters used + queued, the first two of the field c
              new String[] {
                "EVAL",
                "local u, q = string.match(redis.call('HGET', KEYS[1], 'c'),"
                    + " '^(%d+)|(%d+)|') return tonumber(u) + tonumber(q)",
                "1",
                KEY_TAG + "state"
              },
              // the leases and waiters left: timers scored below the tombstones' band (2^50)
              new String[] {"ZCOUNT", KEY_TAG + "timers", "-inf", "(1125899906842624"},
              new String[] {"ZCARD", KEY_TAG + "queue"})) {
        String value = redis.command(probe);
        if (!value.equals("0")) {
          endState.add(String.join(" ", probe) + " is " + value + " after every client finished");
        }
      }
      log = monitor.finish(redis);
      resourceReport = resource.report();
      samplerReport = sampler.report();
    }

    List<ClientHistory> histories = readHistories(dir);
    Report report =
        RandomizedHistoryChecker.check(
            SEMAPHORE_LIMIT, KEY_TAG, histories, log, resourceReport, samplerReport);
    endState.forEach(problem -> report.fail("end-state", problem));
    System.out.println(
        "RedisRandomizedIntegrationTest: "
            + CLIENTS
            + " clients x "
            + REQUESTS
            + " requests, limit "
            + LIMIT
            + ", lease "
            + LEASE.toMillis()
            + " ms; run "
            + TimeUnit.NANOSECONDS.toMillis(runNanos)
            + " ms, total "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos)
            + " ms\n"
            + report.summary());
    if (!report.violations.isEmpty()) {
      Path kept = keep(dir, log, seed);
      fail(
          report.violations.size()
              + " violations (seed "
              + seed
              + "; records kept in "
              + kept
              + "):\n"
              + report.violationSummary(5));
    }

    // Not vacuous: enough of everything happened for the checks to mean something.
    assertTrue(report.count("acquisitions (leases granted)") >= 300, "acquisitions");
    assertTrue(report.count("timeouts") >= 20, "timeouts");
    assertTrue(report.count("cancellations") >= 20, "cancellations");
    assertTrue(report.count("tryAcquire found busy") >= 10, "busy tries");
    assertTrue(report.count("  of which by tryAcquire") >= 1, "granted tries");
    assertTrue(report.count("redis: requests queued") >= 200, "requests queued in Redis");
    assertEquals(
        SEMAPHORE_LIMIT, report.count("redis: max permits held"), "the semaphore was saturated");
    assertTrue(report.count("resource: max occupancy") >= LIMIT - 1, "resource occupancy");
    assertTrue(report.count("fifo: pairs both granted") >= 200, "FIFO pairs compared");
    assertTrue(report.count("sampler: samples") >= 50, "samples");
    assertEquals(1, report.count("leases lost and reported"), "the paused lease, and only it");
    assertEquals(CLIENTS * REQUESTS, report.count("mapping: requests matched"), "requests matched");

    checkTheChecksCanFail(histories, log, resourceReport, samplerReport);
  }

  /**
   * Puts one fault at a time into this run's records and checks that the checker finds it: a clean
   * run passing proves nothing if a check cannot fail.
   */
  private static void checkTheChecksCanFail(
      List<ClientHistory> histories,
      List<MonitorLine> log,
      ResourceReport resource,
      SamplerReport sampler) {
    Map<String, RedisRequest> redis =
        RandomizedHistoryChecker.replay(SEMAPHORE_LIMIT, KEY_TAG, log, new Report());

    // redis-limit: one more permit handed out where all were held.
    List<MonitorLine> overGranted = new ArrayList<>(log);
    overGranted.add(
        saturatedAt(log) + 1,
        lua(
            "HSET",
            KEY_TAG + "state",
            "r:intruder",
            "H|1|0|0|" + (SEMAPHORE_LIMIT + 2) + ":1|rc-x"));
    expect("redis-limit", "over the limit", histories, overGranted, resource, sampler);

    // fifo: a request granted before the waiter that queued before it arrived.
    RedisRequest[] pair = fifoPair(redis);
    List<MonitorLine> jumped = new ArrayList<>(log);
    MonitorLine grantOfB = jumped.remove(pair[1].grant);
    jumped.add(pair[1].arrival + 1, grantOfB);
    expect("fifo", "granted before A left the queue", histories, jumped, resource, sampler);

    // loss: the paused client never hears that its lease is gone, and releases it believing it
    // still held.
    expect(
        "loss",
        "never reported it lost",
        mutate(
            histories,
            0,
            lines -> {
              lines.removeIf(line -> line.startsWith("LOST "));
              replaceFirst(lines, "RELEASE ", " false true false ", " true false false ");
            }),
        log,
        resource,
        sampler);

    // loss: a healthy client's release finds the lease gone, with no loss reported.
    expect(
        "loss",
        "had not reported itself lost",
        mutate(
            histories,
            1,
            lines -> replaceFirst(lines, "RELEASE ", " true false true ", " true false false ")),
        log,
        resource,
        sampler);

    // mapping: a client request that Redis saw under two ids (it queued again at the back).
    expect(
        "mapping",
        "request ids from it",
        mutate(histories, 2, lines -> lines.removeIf(line -> line.startsWith("REQ 7 "))),
        log,
        resource,
        sampler);

    // resource: a healthy holder fenced off, i.e. someone else had its slot meanwhile.
    String healthyLease = firstLease(histories.get(3));
    Map<String, String> fenced = new HashMap<>(resource.fenced());
    fenced.put(healthyLease, "mutation");
    expect(
        "resource",
        "never reported",
        histories,
        log,
        new ResourceReport(
            resource.begins(), resource.maxOccupancy(), resource.violations(), fenced),
        sampler);

    // timeout: a request that gave up early.
    expect(
        "timeout",
        "before its timeout",
        mutate(
            histories,
            4,
            lines -> {
              for (int i = 0; i < lines.size(); i++) {
                String[] f = lines.get(i).split(" ");
                if (f[0].equals("TIMEOUT")) {
                  lines.set(i, "TIMEOUT " + f[1] + " 1 " + f[3]);
                  return;
                }
              }
              throw new AssertionError("client 4 never timed out");
            }),
        log,
        resource,
        sampler);
  }

  /** Copies the histories and Redis's log to target/, for a failure's post-mortem. */
  private static Path keep(Path dir, List<MonitorLine> log, long seed) throws IOException {
    Path kept = Path.of("target", "randomized-" + seed).toAbsolutePath();
    Files.createDirectories(kept);
    for (int k = 0; k < CLIENTS; k++) {
      Path history = dir.resolve("client-" + k + ".history");
      Files.copy(history, kept.resolve(history.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
    List<String> lines = new ArrayList<>();
    for (int pos = 0; pos < log.size(); pos++) {
      MonitorLine line = log.get(pos);
      lines.add(
          pos
              + " "
              + line.micros()
              + (line.lua() ? " lua " : " client ")
              + (line.args().size() > 40 ? line.args().subList(0, 40) + "..." : line.args()));
    }
    Files.write(kept.resolve("redis-monitor.log"), lines, StandardCharsets.UTF_8);
    return kept;
  }

  /** The client's last word: DONE, or FAILED with its error. */
  private static String awaitEnd(ChildJvm child) throws InterruptedException {
    while (true) {
      String line = child.await("");
      if (line.equals("DONE") || line.startsWith("FAILED")) {
        return line;
      }
    }
  }

  private static void expect(
      String check,
      String words,
      List<ClientHistory> histories,
      List<MonitorLine> log,
      ResourceReport resource,
      SamplerReport sampler) {
    Report report =
        RandomizedHistoryChecker.check(SEMAPHORE_LIMIT, KEY_TAG, histories, log, resource, sampler);
    assertTrue(
        report.violations.stream()
            .anyMatch(v -> v.startsWith("[" + check + "]") && v.contains(words)),
        "the " + check + " check must catch the fault put in; it reported: " + report.violations);
  }

  /** The handle that holds {@link #HELD_IN_BACKGROUND} leases: no renewal falls in the run. */
  private static RedisSemaphore openBackground(RedisServer redis) {
    return RedisSemaphore.builder(NAME)
        .uri(redis.uri())
        .limit(SEMAPHORE_LIMIT)
        .owner("background")
        .options(
            RedisSemaphoreOptions.defaults()
                .withLeaseTime(Duration.ofMinutes(10))
                .withRenewInterval(Duration.ofMinutes(5)))
        .open();
  }

  private static MonitorLine lua(String... args) {
    return new MonitorLine(0, true, List.of(args));
  }

  /** A position in the log right after which every permit is held. */
  private static int saturatedAt(List<MonitorLine> log) {
    Map<String, Integer> holders = new HashMap<>(); // lease id -> weight
    for (int pos = 0; pos < log.size(); pos++) {
      MonitorLine line = log.get(pos);
      if (line.lua() && line.command().equals("HSET") && line.arg(1).equals(KEY_TAG + "state")) {
        for (int i = 2; i + 1 < line.args().size(); i += 2) { // ends first, as the checker does
          if (line.arg(i + 1).startsWith("D|")) {
            holders.remove(line.arg(i).substring(2));
          }
        }
        for (int i = 2; i + 1 < line.args().size(); i += 2) {
          if (line.arg(i + 1).startsWith("H|")) {
            holders.putIfAbsent(
                line.arg(i).substring(2), Integer.parseInt(line.arg(i + 1).split("\\|")[1]));
          }
        }
        if (holders.values().stream().mapToInt(Integer::intValue).sum() == SEMAPHORE_LIMIT) {
          return pos;
        }
      }
    }
    throw new AssertionError("the log never shows every permit held");
  }

  /** A waiter A and a later request B, granted after A, that arrived while A was queued. */
  private static RedisRequest[] fifoPair(Map<String, RedisRequest> redis) {
    for (RedisRequest a : redis.values()) {
      if (a.queued < 0 || a.grant < 0) {
        continue;
      }
      for (RedisRequest b : redis.values()) {
        if (b.grant >= 0 && b.arrival > a.queued && b.arrival < a.waitEnd) {
          return new RedisRequest[] {a, b};
        }
      }
    }
    throw new AssertionError("no request arrived while another waited");
  }

  private static List<ClientHistory> mutate(
      List<ClientHistory> histories, int client, Consumer<List<String>> change) {
    List<ClientHistory> copy = new ArrayList<>(histories);
    List<String> lines = new ArrayList<>(histories.get(client).lines);
    change.accept(lines);
    assertTrue(!lines.equals(histories.get(client).lines), "the mutation changed nothing");
    copy.set(client, new ClientHistory(client, lines));
    return copy;
  }

  private static void replaceFirst(List<String> lines, String prefix, String from, String to) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith(prefix) && lines.get(i).contains(from)) {
        lines.set(i, lines.get(i).replace(from, to));
        return;
      }
    }
  }

  private static String firstLease(ClientHistory history) {
    for (String line : history.lines) {
      if (line.startsWith("GRANT ")) {
        return line.split(" ")[2];
      }
    }
    throw new AssertionError("client " + history.client + " got no lease");
  }

  private static List<ClientHistory> readHistories(Path dir) throws IOException {
    List<ClientHistory> histories = new ArrayList<>();
    for (int k = 0; k < CLIENTS; k++) {
      histories.add(
          new ClientHistory(
              k,
              Files.readAllLines(dir.resolve("client-" + k + ".history"), StandardCharsets.UTF_8)));
    }
    return histories;
  }

  // ------------------------------------------------------------------------------ Redis's log

  /**
   * Redis's MONITOR stream, read on its own connection from before the first client starts: every
   * command Redis runs, scripts' commands included, in the order it runs them. Keeps the lines that
   * name the semaphore's keys.
   */
  static final class RedisMonitor implements AutoCloseable {
    private final Socket socket;
    private final String keyTag;
    private final String marker = "end-of-randomized-run-" + System.nanoTime();
    private final List<MonitorLine> lines = new ArrayList<>(); // guarded by this
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile Throwable failure;

    private RedisMonitor(Socket socket, String keyTag) {
      this.socket = socket;
      this.keyTag = keyTag;
    }

    static RedisMonitor start(int port, String keyTag) throws IOException {
      Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
      RedisMonitor monitor = new RedisMonitor(socket, keyTag);
      OutputStream out = socket.getOutputStream();
      out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1), 1 << 16);
      String ok = in.readLine();
      if (!"+OK".equals(ok)) {
        socket.close();
        throw new IOException("MONITOR answered " + ok);
      }
      Thread reader = new Thread(() -> monitor.read(in), "redis-monitor");
      reader.setDaemon(true);
      reader.start();
      return monitor;
    }

    private void read(BufferedReader in) {
      try {
        for (String line; (line = in.readLine()) != null; ) {
          if (!line.startsWith("+")) {
            throw new IOException("unexpected MONITOR line: " + line);
          }
          if (line.contains(marker)) {
            break;
          }
          if (line.contains(keyTag)) {
            MonitorLine parsed = RandomizedHistoryChecker.parseMonitorLine(line.substring(1));
            synchronized (this) {
              lines.add(parsed);
            }
          }
        }
      } catch (IOException | RuntimeException e) {
        failure = e;
      } finally {
        finished.countDown();
      }
    }

    /** Marks the end of the run in the stream, reads up to it, and returns the log. */
    List<MonitorLine> finish(RedisServer redis) throws InterruptedException {
      redis.command("ECHO", marker);
      if (!finished.await(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS)) {
        throw new AssertionError("the MONITOR stream did not reach the end marker");
      }
      if (failure != null) {
        throw new AssertionError("reading the MONITOR stream failed", failure);
      }
      synchronized (this) {
        return List.copyOf(lines);
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  // ------------------------------------------------------------------------------ the sampler

  /**
   * Redis's state seen from outside every 20 ms, by a script of its own (so atomically): the slots
   * held, the holders' weights and the count of permits used, none above the limit, and all equal.
   */
  static final class Sampler implements AutoCloseable {
    private static final String SCRIPT =
        "local held, w = 0, 0"
            + " local fields = {}"
            + " for _, id in ipairs(redis.call('ZRANGE', KEYS[2], '-inf', '(1125899906842624',"
            + "     'BYSCORE')) do"
            + "   fields[#fields + 1] = 'r:' .. id"
            + " end"
            + " local records = #fields > 0 and redis.call('HMGET', KEYS[1], unpack(fields)) or {}"
            + " for _, record in ipairs(records) do"
            + "   local weight, tokens = string.match(record or '', '^H|(%d+)|%d+|%d+|([^|]*)|')"
            + "   if weight then"
            + "     w = w + tonumber(weight)"
            + "     for _ in string.gmatch(tokens, '%d+:') do held = held + 1 end"
            + "   end"
            + " end"
            + " local c = redis.call('HGET', KEYS[1], 'c') or '0|'"
            + " return {held, w, tonumber(string.match(c, '^(%d+)|'))}";
    private final RedisServer redis;
    private final int limit;
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private int samples; // written by the thread, read after it ends
    private int maxHeld; // likewise

    Sampler(RedisServer redis, int limit) {
      this.redis = redis;
      this.limit = limit;
      this.thread = new Thread(this::run, "redis-sampler");
      thread.setDaemon(true);
    }

    void start() {
      thread.start();
    }

    private void run() {
      while (running) {
        try {
          long began = System.nanoTime();
          String[] reply =
              redis.command("EVAL", SCRIPT, "2", KEY_TAG + "state", KEY_TAG + "timers").split("\n");
          int held = Integer.parseInt(reply[0]);
          int weights = Integer.parseInt(reply[1]);
          int used = Integer.parseInt(reply[2]);
          samples++;
          maxHeld = Math.max(maxHeld, held);
          if (held > limit || weights > limit || held != weights || used != weights) {
            violations.add(
                "Redis held "
                    + held
                    + " slots for holders of total weight "
                    + weights
                    + ", counted as "
                    + used
                    + " used (limit "
                    + limit
                    + ")");
          }
          // Its script reads every lease (the background ones too) and stops Redis meanwhile:
          // leave Redis to the clients at least four times as long.
          Thread.sleep(Math.max(20, 4 * TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began)));
        } catch (InterruptedException e) {
          return;
        } catch (UncheckedIOException | NumberFormatException e) {
          violations.add("could not sample Redis: " + e);
        }
      }
    }

    SamplerReport report() {
      return new SamplerReport(samples, maxHeld, List.copyOf(violations));
    }

    @Override
    public void close() throws InterruptedException {
      running = false;
      thread.join(10_000);
      if (thread.isAlive()) {
        violations.add("the sampler did not stop");
      }
    }
  }

  // ------------------------------------------------------------------------------ the resource

  /**
   * The fenced resource: a line server on loopback that every holder writes to while it holds
   * ({@code BEGIN <lease> <weight> <tokens>}, {@code WRITE <lease> <tokens>}, {@code END <lease>};
   * answers {@code OK} or {@code FENCED}). It admits each write with a {@link FencingGuard}. A
   * holder's session runs from its BEGIN to its END; when a newer holder of one of its slots is
   * admitted, the older session is fenced off (its writes are refused from then on, and it no
   * longer counts). At every admitted BEGIN the weights of the sessions open and not fenced off
   * must sum to at most the limit. Who was fenced off goes to the checker, which requires each to
   * have been told its lease was lost.
   */
  static final class FencedResource implements AutoCloseable {
    private final int limit;
    private final ServerSocket server;
    private final FencingGuard guard = new FencingGuard();
    private final Map<String, Session> open = new LinkedHashMap<>(); // guarded by this
    private final Set<String> refused = new HashSet<>(); // guarded by this
    private final Map<Integer, Long> lastToken = new HashMap<>(); // guarded by this
    private final Map<Integer, String> lastTokenLease = new HashMap<>(); // guarded by this
    private final Map<String, String> fenced = new LinkedHashMap<>(); // guarded by this
    private final List<String> violations = new ArrayList<>(); // guarded by this
    private int begins; // guarded by this
    private int maxOccupancy; // guarded by this

    private static final class Session {
      final String lease;
      final int weight;
      final List<FencingToken> tokens;
      boolean fencedOff;

      Session(String lease, int weight, List<FencingToken> tokens) {
        this.lease = lease;
        this.weight = weight;
        this.tokens = tokens;
      }
    }

    private FencedResource(int limit, ServerSocket server) {
      this.limit = limit;
      this.server = server;
    }

    static FencedResource start(int limit) throws IOException {
      ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      FencedResource resource = new FencedResource(limit, server);
      Thread acceptor = new Thread(resource::accept, "fenced-resource");
      acceptor.setDaemon(true);
      acceptor.start();
      return resource;
    }

    int port() {
      return server.getLocalPort();
    }

    private void accept() {
      try {
        while (true) {
          Socket socket = server.accept();
          Thread t = new Thread(() -> serve(socket), "fenced-resource-" + socket.getPort());
          t.setDaemon(true);
          t.start();
        }
      } catch (IOException closed) {
        // the test is over
      }
    }

    private void serve(Socket socket) {
      try (socket;
          BufferedReader in =
              new BufferedReader(
                  new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
          PrintWriter out =
              new PrintWriter(
                  new java.io.OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8),
                  true)) {
        socket.setTcpNoDelay(true);
        for (String line; (line = in.readLine()) != null; ) {
          String[] f = line.split(" ");
          String reply =
              switch (f[0]) {
                case "BEGIN" -> begin(f[1], Integer.parseInt(f[2]), FencingToken.parse(f[3]));
                case "WRITE" -> write(f[1], FencingToken.parse(f[2]));
                case "END" -> end(f[1]);
                case "BYE" -> null;
                default -> bad("unknown message: " + line);
              };
          if (reply == null) {
            return;
          }
          out.println(reply);
        }
      } catch (IOException | RuntimeException e) {
        bad("connection failed: " + e);
      }
    }

    private synchronized String bad(String problem) {
      violations.add(problem);
      return "BAD";
    }

    synchronized String begin(String lease, int weight, List<FencingToken> tokens) {
      begins++;
      Set<Integer> slots = new HashSet<>();
      for (FencingToken t : tokens) {
        if (t.slot() < 0 || t.slot() >= limit || !slots.add(t.slot())) {
          violations.add(lease + " came with bad slots: " + FencingToken.format(tokens));
        }
        Long last = lastToken.get(t.slot());
        if (last != null && last == t.token() && !lastTokenLease.get(t.slot()).equals(lease)) {
          violations.add(
              lease
                  + " came with token "
                  + t.token()
                  + " for slot "
                  + t.slot()
                  + ", already "
                  + lastTokenLease.get(t.slot())
                  + "'s");
        }
      }
      if (tokens.size() != weight) {
        violations.add(lease + " of weight " + weight + " came with " + tokens.size() + " tokens");
      }
      if (!guard.admit(tokens)) {
        refused.add(lease);
        fenced.put(lease, "its first write was refused: a newer holder of its slot had written");
        return "FENCED";
      }
      for (FencingToken t : tokens) {
        lastToken.put(t.slot(), t.token());
        lastTokenLease.put(t.slot(), lease);
      }
      for (Session s : open.values()) {
        if (!s.fencedOff && sharesASlot(s.tokens, tokens)) {
          s.fencedOff = true;
          fenced.put(s.lease, "fenced off by " + lease + " " + FencingToken.format(tokens));
        }
      }
      open.put(lease, new Session(lease, weight, tokens));
      int occupancy = 0;
      for (Session s : open.values()) {
        occupancy += s.fencedOff ? 0 : s.weight;
      }
      maxOccupancy = Math.max(maxOccupancy, occupancy);
      if (occupancy > limit) {
        StringBuilder who = new StringBuilder();
        open.values().forEach(s -> who.append(' ').append(s.lease).append('x').append(s.weight));
        violations.add(
            "holders of total weight "
                + occupancy
                + " wrote at once, over the limit "
                + limit
                + ":"
                + who);
      }
      return "OK";
    }

    synchronized String write(String lease, List<FencingToken> tokens) {
      Session s = open.get(lease);
      if (s == null) {
        return refused.contains(lease) ? "FENCED" : bad(lease + " wrote without BEGIN");
      }
      if (s.fencedOff || !guard.admit(tokens)) {
        s.fencedOff = true;
        fenced.putIfAbsent(lease, "a write was refused");
        return "FENCED";
      }
      return "OK";
    }

    synchronized String end(String lease) {
      Session s = open.remove(lease);
      if (s == null) {
        return refused.contains(lease) ? "FENCED" : bad(lease + " ended without BEGIN");
      }
      if (s.fencedOff || !guard.admit(s.tokens)) {
        fenced.putIfAbsent(lease, "its last write was refused");
        return "FENCED";
      }
      return "OK";
    }

    private static boolean sharesASlot(List<FencingToken> a, List<FencingToken> b) {
      for (FencingToken x : a) {
        for (FencingToken y : b) {
          if (x.slot() == y.slot()) {
            return true;
          }
        }
      }
      return false;
    }

    synchronized ResourceReport report() {
      if (!open.isEmpty()) {
        violations.add("sessions never ended: " + open.keySet());
      }
      return new ResourceReport(begins, maxOccupancy, List.copyOf(violations), Map.copyOf(fenced));
    }

    @Override
    public void close() throws IOException {
      server.close();
    }
  }
}
