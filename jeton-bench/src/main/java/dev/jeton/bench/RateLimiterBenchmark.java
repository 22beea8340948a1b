package dev.jeton.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one admission by a rate limiter that has a token to give (see {@link RateGate} for
 * the set-up of each), in ns per operation: one thread by default, contended with {@code -t N} (the
 * threads share one limiter).
 *
 * <ul>
 *   <li>{@code tryAcquire}: each library's non-waiting entry point.
 *   <li>{@code acquire}: each library's waiting entry point, which has nothing to wait for here.
 * </ul>
 *
 * <p>Run: {@code java -jar jeton-bench/target/benchmarks.jar RateLimiterBenchmark}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 2,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class RateLimiterBenchmark {

  /** One limiter, shared by the benchmark's threads. */
  @State(Scope.Benchmark)
  public static class Gate {
    @Param({RateGate.JETON, RateGate.GUAVA, RateGate.RESILIENCE4J, RateGate.BUCKET4J})
    public String impl = RateGate.JETON;

    RateGate gate;

    @Setup
    public void setUp() {
      gate = RateGate.create(impl);
    }
  }

  @Benchmark
  public boolean tryAcquire(Gate g) {
    boolean passed = g.gate.tryAcquire();
    if (!passed) {
      throw new IllegalStateException(g.impl + " had no token: the rate is set too low");
    }
    return passed;
  }

  @Benchmark
  public void acquire(Gate g) throws InterruptedException {
    g.gate.acquire();
  }
}
