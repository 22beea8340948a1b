package dev.jeton.bench;

import dev.jeton.redis.RedisRateLimiter;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;

/**
 * How close a fleet-wide rate limiter keeps to its rate with several processes competing, and how
 * many round trips to Redis each grant costs: Jeton's {@link RedisRateLimiter} beside Bucket4j's
 * Redis backend (compare-and-swap through Lettuce), in the same run. A plain program, not a JMH
 * benchmark: the measure is a count over a window, across processes.
 *
 * <pre>
 * java -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.FleetRateBenchmark \
 *     [processes [threads [permitsPerSecond [seconds [burst]]]]]
 * </pre>
 *
 * <p>Defaults: 4 processes of 8 threads, 1,000 a second, 10 s, burst 10. For each implementation it
 * starts a {@code redis-server} of its own ({@link RedisProcess}), then the processes, each opening
 * the limiter and saying so; when all have, it tells them to start. Each thread asks for one permit
 * at a time in a loop ({@code acquire()}, Bucket4j's {@code asBlocking().consume(1)}); a process
 * counts the grants that came within the window, from the start signal. The admitted rate is all
 * processes' grants over the window; round trips are the commands Redis processed ({@code
 * total_commands_processed}, which does not count the commands a script or function runs inside)
 * over the grants.
 */
public final class FleetRateBenchmark {
  private static final String NAME = "fleet-bench";
  private static final Duration WARM_UP = Duration.ofSeconds(2);

  private FleetRateBenchmark() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("child")) {
      child(args);
      return;
    }
    int processes = args.length > 0 ? Integer.parseInt(args[0]) : 4;
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    long perSecond = args.length > 2 ? Long.parseLong(args[2]) : 1000;
    long seconds = args.length > 3 ? Long.parseLong(args[3]) : 10;
    int burst = args.length > 4 ? Integer.parseInt(args[4]) : 10;
    System.out.printf(
        Locale.ROOT,
        "%d processes x %d threads, %d a second, burst %d, %d s each%n",
        processes,
        threads,
        perSecond,
        burst,
        seconds);
    System.out.println("impl      admitted/s  of the rate  round trips per grant  grants");
    for (String impl : List.of("jeton", "bucket4j")) {
      try (RedisProcess redis = RedisProcess.start()) {
        run(impl, redis, processes, threads, perSecond, seconds, burst);
      }
    }
  }

  private static void run(
      String impl,
      RedisProcess redis,
      int processes,
      int threads,
      long perSecond,
      long seconds,
      int burst)
      throws Exception {
    List<Process> children = new ArrayList<>();
    List<BufferedReader> outputs = new ArrayList<>();
    for (int p = 0; p < processes; p++) {
      Process child =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  FleetRateBenchmark.class.getName(),
                  "child",
                  impl,
                  redis.uri(),
                  Integer.toString(threads),
                  Long.toString(perSecond),
                  Long.toString(seconds),
                  Integer.toString(burst))
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      children.add(child);
      outputs.add(
          new BufferedReader(
              new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)));
    }
    for (BufferedReader out : outputs) {
      expect(out, "READY");
    }
    long grants = 0;
    long allGrants = 0;
    long roundTrips;
    try (Monitor monitor = new Monitor(redis.uri())) {
      for (Process child : children) {
        PrintWriter in = new PrintWriter(child.getOutputStream(), true, StandardCharsets.UTF_8);
        in.println("go");
      }
      for (BufferedReader out : outputs) {
        String[] said = expect(out, "GRANTS ").split(" ", -1);
        grants += Long.parseLong(said[1]);
        allGrants += Long.parseLong(said[2]);
      }
      for (Process child : children) {
        child.waitFor();
      }
      roundTrips = monitor.clientCommands();
    }
    double rate = (double) grants / seconds;
    System.out.printf(
        Locale.ROOT,
        "%-9s %10.1f  %10.2f%%  %21.2f  %6d%n",
        impl,
        rate,
        100.0 * rate / perSecond,
        (double) roundTrips / allGrants,
        grants);
  }

  private static String expect(BufferedReader out, String prefix) throws IOException {
    for (String line; (line = out.readLine()) != null; ) {
      if (line.startsWith(prefix)) {
        return line;
      }
      System.err.println("child: " + line);
    }
    throw new IllegalStateException("a child process ended before saying " + prefix);
  }

  /**
   * Counts the commands clients send Redis, as {@code MONITOR} shows them: each is a round trip
   * (the commands a script or function runs inside show as {@code [0 lua]}, and are not counted).
   */
  private static final class Monitor implements AutoCloseable {
    private final Resp connection;
    private final Thread reader;
    private final java.util.concurrent.atomic.AtomicLong client =
        new java.util.concurrent.atomic.AtomicLong();

    Monitor(String uri) throws IOException {
      java.net.URI parsed = java.net.URI.create(uri);
      connection = Resp.connect(parsed.getHost(), parsed.getPort(), 5000);
      if (!"OK".equals(connection.call("MONITOR"))) {
        throw new IllegalStateException("MONITOR refused");
      }
      connection.readTimeout(0);
      reader =
          new Thread(
              () -> {
                try {
                  while (true) {
                    if (!String.valueOf(connection.read()).contains(" lua] ")) {
                      client.incrementAndGet();
                    }
                  }
                } catch (RuntimeException closed) {
                  // the connection was closed: done
                }
              },
              "monitor-reader");
      reader.setDaemon(true);
      reader.start();
    }

    long clientCommands() throws InterruptedException {
      Thread.sleep(500); // the last lines in flight
      return client.get();
    }

    @Override
    public void close() {
      connection.close();
    }
  }

  /** One way of waiting for a permit of the fleet's limiter. */
  private interface Gate extends AutoCloseable {
    void acquire() throws InterruptedException;

    @Override
    void close();
  }

  private static Gate open(String impl, String uri, long perSecond, int burst) {
    if (impl.equals("jeton")) {
      RedisRateLimiter limiter =
          RedisRateLimiter.builder(NAME)
              .uri(uri)
              .rate(perSecond, Duration.ofSeconds(1))
              .burst(burst)
              .open();
      return new Gate() {
        @Override
        public void acquire() throws InterruptedException {
          limiter.acquire();
        }

        @Override
        public void close() {
          limiter.close();
        }
      };
    }
    RedisClient client = RedisClient.create(uri);
    BucketConfiguration configuration =
        BucketConfiguration.builder()
            .addLimit(limit -> limit.capacity(burst).refillGreedy(perSecond, Duration.ofSeconds(1)))
            .build();
    BucketProxy bucket =
        Bucket4jLettuce.casBasedBuilder(client)
            .build()
            .builder()
            .build(NAME.getBytes(StandardCharsets.UTF_8), () -> configuration);
    return new Gate() {
      @Override
      public void acquire() throws InterruptedException {
        bucket.asBlocking().consume(1);
      }

      @Override
      public void close() {
        client.shutdown();
      }
    };
  }

  /** A child process: opens the limiter, says READY, waits for go, counts its window's grants. */
  private static void child(String[] args) throws Exception {
    String impl = args[1];
    String uri = args[2];
    int threads = Integer.parseInt(args[3]);
    long perSecond = Long.parseLong(args[4]);
    long seconds = Long.parseLong(args[5]);
    int burst = Integer.parseInt(args[6]);
    try (Gate gate = open(impl, uri, perSecond, burst)) {
      System.out.println("READY");
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      if (!"go".equals(in.readLine())) {
        return;
      }
      // a warm-up first, so that the window measures the fleet's pace, not the JVMs' start
      long start = System.nanoTime() + WARM_UP.toNanos();
      long end = start + Duration.ofSeconds(seconds).toNanos();
      LongAdder grants = new LongAdder();
      LongAdder all = new LongAdder();
      CountDownLatch done = new CountDownLatch(threads);
      for (int t = 0; t < threads; t++) {
        Thread thread =
            new Thread(
                () -> {
                  try {
                    while (true) {
                      gate.acquire();
                      all.increment();
                      long now = System.nanoTime();
                      if (now - end > 0) {
                        return; // granted after the window: not in the rate
                      }
                      if (now - start >= 0) {
                        grants.increment();
                      }
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } finally {
                    done.countDown();
                  }
                });
        thread.setDaemon(true);
        thread.start();
      }
      done.await();
      System.out.println("GRANTS " + grants.sum() + " " + all.sum());
    }
  }
}
