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
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * The server, the fleet's shared clients and the per-iteration statistics of one trial of {@link
 * RedisBenchmark}.
 */
final class RedisTrial implements AutoCloseable {
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

  RedisTrial(String impl, String redisUri, int limit, int holders, BenchmarkParams params) {
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
    long redisCpu = redisCpuNow < 0 || iterationRedisCpu < 0 ? 0 : redisCpuNow - iterationRedisCpu;
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
          file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
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
