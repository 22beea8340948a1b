package dev.jeton.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * Jeton's {@link dev.jeton.redis.RedisSemaphore} side by side with Redisson's {@code RSemaphore}
 * and {@code RPermitExpirableSemaphore} (see {@link RedisFleet} for how each is set up), on one
 * real {@code redis-server}, and the floor they can get near ({@value RedisFleet#FLOOR}: two
 * Lettuce round trips of a trivial function). Each operation is {@code acquire(1)} + release of one
 * permit of a semaphore of {@code limit} (4) free permits.
 *
 * <p>The one-thread benchmarks also take {@code holders} (10 and 3,000): before warm-up a
 * background client takes that many more permits of a semaphore of {@code limit + holders} and
 * keeps them to the end of the trial ({@link RedisFleet#hold}), as the rest of a fleet would; the
 * goal is a cost per call that does not grow with them.
 *
 * <ul>
 *   <li>{@code latency}: one thread, nothing else using the semaphore; µs per acquire + release,
 *       the release awaited: Jeton {@code lease.releaseAsync().join()}, Redisson the blocking
 *       {@code release()}. Both then pay one full round trip for the acquire and one for the
 *       release, which is what "one round trip per acquire and one per release" claims.
 *   <li>{@code latencyReleaseNoWait}: the same, but the release is not awaited: Jeton's {@code
 *       lease.release()} (fire and forget, its normal way), Redisson's {@code releaseAsync()}.
 *       Jeton sends the release and the next acquire on one connection, so they travel together.
 *   <li>{@code contended}: 16 threads, each with its own client handle (Jeton: {@value
 *       RedisFleet#JETON}, one handle per thread, as 16 members of a fleet; {@value
 *       RedisFleet#JETON_SHARED}, one handle for all, as one process; Redisson: one client shared
 *       by all, as Redisson is used), limit 4, release awaited; operations per ms, all threads
 *       together. 12 threads wait at any time, so this is the queueing and the hand-off through
 *       Redis.
 *   <li>{@code contendedReleaseNoWait}: the same with the release not awaited.
 * </ul>
 *
 * <p>Each trial starts its own {@code redis-server} ({@link RedisProcess}: no persistence,
 * loopback), so every implementation meets the same, empty server; or pass {@code -p
 * redisUri=redis://host:port} to use one that runs already (its database is flushed before and
 * after each trial: never point this at data you want to keep). After each trial the Redis commands
 * run per operation during the measurement iterations are printed, from {@code INFO commandstats}
 * (commands run inside scripts and functions included), Redis's time in them ({@code evalsha µs},
 * {@code fcall µs}), and the CPU time of redis-server (when started here) and of the benchmark JVM,
 * per operation; then per script or function call: calls per operation, Redis's µs per call and the
 * commands run inside per call. That line is also appended to {@code target/redis-stats.csv} under
 * the working directory (or to {@code $JETON_REDIS_STATS}), which {@link RedisGoals} reads with
 * JMH's JSON result. The run fails if permits leaked.
 *
 * <p>Run: {@code java -jar jeton-bench/target/benchmarks.jar RedisBenchmark -f 1 -wi 3 -w 5s -i 5
 * -r 5s}. {@link RedisRoundTrips} counts the round trips of one acquire and of one release exactly.
 */
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
public class RedisBenchmark {

  private static final com.sun.management.OperatingSystemMXBean CLIENT_OS =
      (com.sun.management.OperatingSystemMXBean)
          java.lang.management.ManagementFactory.getOperatingSystemMXBean();

  /**
   * Where each trial's line of Redis statistics is appended: {@code $JETON_REDIS_STATS} if set (the
   * forked JVM inherits the environment), else {@code target/redis-stats.csv}.
   */
  static final String STATS_FILE =
      Objects.requireNonNullElse(System.getenv("JETON_REDIS_STATS"), "target/redis-stats.csv");

  /** The header of {@link #STATS_FILE}; {@link RedisGoals} reads columns by these names. */
  static final String STATS_HEADER =
      "time,benchmark,mode,impl,holders,ops,calls_per_op,usec_per_call,inner_cmds_per_call,"
          + "redis_usec_per_op,redis_cpu_usec_per_op,jvm_cpu_usec_per_op";

  /** Script and function calls, as {@code INFO commandstats} names them. */
  private static final Set<String> SCRIPT_CALLS =
      Set.of("fcall", "fcall_ro", "evalsha", "evalsha_ro", "eval", "eval_ro");

  /**
   * Commands clients send for their connections (and ours for the statistics), never counted as run
   * inside a script: {@code INFO commandstats} does not say which ran inside one, so every other
   * command is counted as if it did ({@link RedisRoundTrips} tells them apart exactly).
   */
  private static final Set<String> HOUSEKEEPING =
      Set.of(
          "ping",
          "hello",
          "client",
          "select",
          "auth",
          "command",
          "cluster",
          "readonly",
          "echo",
          "quit",
          "subscribe",
          "unsubscribe",
          "psubscribe",
          "punsubscribe",
          "ssubscribe",
          "sunsubscribe",
          "function",
          "script",
          "config",
          "info");

  /** The server, the fleet's shared clients and the per-iteration statistics of one trial. */
  static final class Trial implements AutoCloseable {
    final String impl;
    final int holders;

    /** The permits free when nobody but the background holders holds one. */
    final int free;

    final RedisFleet fleet;
    private final String benchmark;
    private final String mode;
    private final RedisFleet.Held held;
    final LongAdder ops = new LongAdder();
    private final @Nullable RedisProcess server;
    private final RedisClient adminClient;
    private final StatefulRedisConnection<String, String> admin;
    private final Map<String, Long> measuredCalls = new TreeMap<>();
    private long measuredOps;
    private long iterationRedisCpu = -1;
    private long iterationClientCpu;
    private long measuredRedisCpu; // ns; stays 0 with a server not ours
    private long measuredClientCpu; // ns

    Trial(String impl, String redisUri, int limit, int holders, BenchmarkParams params) {
      this.impl = impl;
      this.holders = holders;
      this.free = limit;
      String name = params.getBenchmark();
      this.benchmark = name.substring(name.lastIndexOf('.') + 1);
      this.mode = params.getMode().shortLabel();
      this.server = redisUri.isEmpty() ? RedisProcess.start() : null;
      String uri = server != null ? server.uri() : redisUri;
      this.adminClient = RedisClient.create(uri);
      this.admin = adminClient.connect();
      admin.sync().flushdb();
      this.fleet = RedisFleet.open(impl, uri, limit + holders);
      RedisFleet.Held taken = () -> {};
      try {
        if (holders > 0) {
          taken = fleet.hold(holders);
        }
      } catch (RuntimeException e) {
        close();
        throw e;
      }
      this.held = taken;
    }

    void startIteration() {
      admin.sync().configResetstat();
      ops.reset();
      RedisProcess s = server;
      iterationRedisCpu = s == null ? -1 : s.cpuNanos();
      iterationClientCpu = CLIENT_OS.getProcessCpuTime();
    }

    void endIteration(IterationParams iteration) {
      long done = ops.sum();
      long clientCpu = CLIENT_OS.getProcessCpuTime() - iterationClientCpu;
      RedisProcess s = server;
      long redisCpuNow = s == null ? -1 : s.cpuNanos();
      long redisCpu =
          redisCpuNow < 0 || iterationRedisCpu < 0 ? 0 : redisCpuNow - iterationRedisCpu;
      Map<String, Long> calls = commandCalls(admin.sync());
      if (iteration.getType() == IterationType.MEASUREMENT) {
        measuredOps += done;
        measuredRedisCpu += redisCpu;
        measuredClientCpu += clientCpu;
        calls.forEach((command, n) -> measuredCalls.merge(command, n, Long::sum));
      }
    }

    /** Redis's {@code cmdstat_<command>:calls=N,...} lines, as command to N. */
    private static Map<String, Long> commandCalls(RedisCommands<String, String> redis) {
      Map<String, Long> calls = new TreeMap<>();
      for (String line : redis.info("commandstats").split("\r?\n", -1)) {
        if (line.startsWith("cmdstat_")) {
          String command = line.substring("cmdstat_".length(), line.indexOf(':'));
          String stats = line.substring(line.indexOf(':') + 1);
          for (String field : stats.split(",", -1)) {
            if (field.startsWith("calls=")) {
              calls.put(command, Long.parseLong(field.substring("calls=".length())));
            } else if (field.startsWith("usec=")
                && (command.startsWith("eval") || command.equals("fcall"))) {
              // time Redis spent in scripts and functions, their commands included
              calls.put(command + " µs", Long.parseLong(field.substring("usec=".length())));
            }
          }
        }
      }
      // our own CONFIG RESETSTAT and INFO ("config|resetstat" from Redis 7 on)
      calls.keySet().removeIf(c -> baseName(c).equals("config") || baseName(c).equals("info"));
      return calls;
    }

    /** {@code command} without its subcommand: {@code config|resetstat} is {@code config}. */
    private static String baseName(String command) {
      int bar = command.indexOf('|');
      return bar < 0 ? command : command.substring(0, bar);
    }

    /**
     * Per script or function call over the measurement iterations: calls per operation, Redis's µs
     * per call, and the commands run inside per call; {@code {0, 0, 0}} without calls.
     */
    private double[] perCall() {
      long calls = 0;
      long usec = 0;
      long inner = 0;
      for (Map.Entry<String, Long> entry : measuredCalls.entrySet()) {
        String command = entry.getKey();
        if (command.endsWith(" µs")) {
          usec += entry.getValue();
        } else if (SCRIPT_CALLS.contains(baseName(command))) {
          calls += entry.getValue();
        } else if (!HOUSEKEEPING.contains(baseName(command))) {
          inner += entry.getValue();
        }
      }
      return calls == 0
          ? new double[] {0, 0, 0}
          : new double[] {
            (double) calls / measuredOps, (double) usec / calls, (double) inner / calls
          };
    }

    private void report() {
      if (measuredOps == 0) {
        return;
      }
      StringBuilder line =
          new StringBuilder(
              "Redis commands per operation, measurement iterations, "
                  + impl
                  + " ("
                  + measuredOps
                  + " ops; commands run inside scripts and functions included; 'evalsha µs',"
                  + " 'fcall µs': Redis's time in them per operation):");
      measuredCalls.forEach(
          (command, n) -> {
            double perOp = (double) n / measuredOps;
            if (perOp >= 0.005) {
              line.append(String.format(" %s %.2f", command, perOp));
            }
          });
      System.out.println();
      System.out.println(line);
      double redisCpu = measuredRedisCpu / 1e3 / measuredOps; // 0: not measured
      double clientCpu = measuredClientCpu / 1e3 / measuredOps;
      System.out.printf(
          "CPU per operation, measurement iterations, %s: redis-server %s µs, benchmark JVM"
              + " (clients, JMH) %.1f µs%n",
          impl, redisCpu == 0 ? "?" : String.format("%.1f", redisCpu), clientCpu);
      double[] perCall = perCall();
      System.out.printf(
          "Redis per script/function call, measurement iterations, %s, %d holders: %.2f calls/op,"
              + " %.1f µs/call, %.2f inner commands/call%n",
          impl, holders, perCall[0], perCall[1], perCall[2]);
      appendStats(
          String.format(
              Locale.ROOT,
              "%s,%s,%s,%s,%d,%d,%.3f,%.2f,%.3f,%.2f,%.2f,%.2f",
              Instant.now(),
              benchmark,
              mode,
              impl,
              holders,
              measuredOps,
              perCall[0],
              perCall[1],
              perCall[2],
              perCall[0] * perCall[1],
              redisCpu,
              clientCpu));
    }

    /** Appends {@code line} to {@link #STATS_FILE}, after the header if the file is new. */
    private static void appendStats(String line) {
      Path file = Path.of(STATS_FILE);
      try {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
          Files.createDirectories(parent);
        }
        String text = (Files.exists(file) ? "" : STATS_HEADER + "\n") + line + "\n";
        Files.writeString(
            file,
            text,
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new UncheckedIOException("could not append to " + file.toAbsolutePath(), e);
      }
    }

    /**
     * Fails unless every permit, the holders' too, is free again (allowing releases in flight to
     * land).
     */
    private void checkAllFree() throws InterruptedException {
      int all = free + holders;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      int available = fleet.available();
      while (available != all && System.nanoTime() - deadline < 0) {
        Thread.sleep(50);
        available = fleet.available();
      }
      if (available != all) {
        throw new IllegalStateException(
            "permits leaked: " + available + " of " + all + " free after the run, " + impl);
      }
    }

    void finish() throws InterruptedException {
      try {
        report();
        held.release();
        checkAllFree();
      } finally {
        close();
      }
    }

    @Override
    public void close() {
      try {
        fleet.close();
        admin.sync().flushdb();
        admin.close();
        adminClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      } finally {
        RedisProcess s = server;
        if (s != null) {
          s.close();
        }
      }
    }
  }

  /** What both kinds of trial share: the limit, where Redis is, and the trial's lifecycle. */
  @State(Scope.Benchmark)
  public abstract static class RedisState {
    @Param({"4"})
    public int limit = 4;

    /** Empty: start a redis-server for the trial. */
    @Param({""})
    public String redisUri = "";

    Trial trial;

    /** The implementation measured (a {@code @Param} of each subclass). */
    abstract String impl();

    /** Permits a background client holds through the trial. */
    int holders() {
      return 0;
    }

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
      trial = new Trial(impl(), redisUri, limit, holders(), params);
    }

    @Setup(Level.Iteration)
    public void startIteration() {
      trial.startIteration();
    }

    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
      trial.endIteration(iteration);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
      trial.finish();
    }
  }

  /** One thread: the three implementations compared, and the floor. */
  @State(Scope.Benchmark)
  public static class Single extends RedisState {
    @Param({
      RedisFleet.JETON,
      RedisFleet.REDISSON_SEMAPHORE,
      RedisFleet.REDISSON_EXPIRABLE,
      RedisFleet.FLOOR
    })
    public String impl = RedisFleet.JETON;

    /** Permits a background client takes before warm-up and holds through the trial. */
    @Param({"10", "3000"})
    public int holders = 10;

    @Override
    String impl() {
      return impl;
    }

    @Override
    int holders() {
      return holders;
    }
  }

  /** Many threads: also Jeton with one handle shared by all. */
  @State(Scope.Benchmark)
  public static class Fleet extends RedisState {
    @Param({
      RedisFleet.JETON,
      RedisFleet.JETON_SHARED,
      RedisFleet.REDISSON_SEMAPHORE,
      RedisFleet.REDISSON_EXPIRABLE
    })
    public String impl = RedisFleet.JETON;

    @Override
    String impl() {
      return impl;
    }
  }

  /** The thread's own client handle of a {@link Single} trial. */
  @State(Scope.Thread)
  public static class SingleClient {
    RedisFleet.Handle handle;

    @Setup(Level.Trial)
    public void setUp(Single single) {
      handle = single.trial.fleet.handle();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      handle.close();
    }
  }

  /** The thread's own client handle of a {@link Fleet} trial. */
  @State(Scope.Thread)
  public static class FleetClient {
    RedisFleet.Handle handle;

    @Setup(Level.Trial)
    public void setUp(Fleet fleet) {
      handle = fleet.trial.fleet.handle();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      handle.close();
    }
  }

  @Benchmark
  @Threads(1)
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public void latency(Single single, SingleClient client) throws InterruptedException {
    RedisFleet.Handle handle = client.handle;
    handle.release(handle.acquire());
    single.trial.ops.increment();
  }

  @Benchmark
  @Threads(1)
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public void latencyReleaseNoWait(Single single, SingleClient client) throws InterruptedException {
    RedisFleet.Handle handle = client.handle;
    handle.releaseNoWait(handle.acquire());
    single.trial.ops.increment();
  }

  @Benchmark
  @Threads(16)
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public void contended(Fleet fleet, FleetClient client) throws InterruptedException {
    RedisFleet.Handle handle = client.handle;
    handle.release(handle.acquire());
    fleet.trial.ops.increment();
  }

  @Benchmark
  @Threads(16)
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public void contendedReleaseNoWait(Fleet fleet, FleetClient client) throws InterruptedException {
    RedisFleet.Handle handle = client.handle;
    handle.releaseNoWait(handle.acquire());
    fleet.trial.ops.increment();
  }
}
