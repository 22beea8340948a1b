package dev.jeton.bench;

import java.util.concurrent.TimeUnit;
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

  /** What both kinds of trial share: the limit, where Redis is, and the trial's lifecycle. */
  @State(Scope.Benchmark)
  public abstract static class RedisState {
    @Param({"4"})
    public int limit = 4;

    /** Empty: start a redis-server for the trial. */
    @Param({""})
    public String redisUri = "";

    RedisTrial trial;

    /** The implementation measured (a {@code @Param} of each subclass). */
    abstract String impl();

    /** Permits a background client holds through the trial. */
    int holders() {
      return 0;
    }

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
      trial = new RedisTrial(impl(), redisUri, limit, holders(), params);
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
      RedisFleet.JETON_LEAKS_OFF,
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
