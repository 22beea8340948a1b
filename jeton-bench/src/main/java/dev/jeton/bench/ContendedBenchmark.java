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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Blocking threads contend for a semaphore of {@code limit} permits: each operation acquires one
 * permit, burns {@code inside} tokens of CPU holding it, releases it, then burns {@code outside}
 * tokens. Throughput in operations per microsecond, all threads together.
 *
 * <p>The thread count is given on the command line ({@code -t}); the default here is 4. Jeton is
 * strictly FIFO, so its fair comparison is juc-fair (goal: at least 10x juc-fair's throughput);
 * juc-unfair, which lets a releasing thread barge back in, is the upper reference.
 *
 * <p>Left out: kotlinx and ibm, which have no blocking acquire, and cas-floor, whose only way to
 * wait is to spin, which measures nothing a blocking semaphore does.
 *
 * <p>Run, once per thread count:
 *
 * <pre>
 * for t in 2 4 8; do java -jar jeton-bench/target/benchmarks.jar ContendedBenchmark -t $t -rf json -rff contended-t$t.json; done
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(4)
@State(Scope.Benchmark)
public class ContendedBenchmark {
  @Param({Limiter.JETON, Limiter.JUC_FAIR, Limiter.JUC_UNFAIR})
  public String impl = Limiter.JETON;

  @Param({"1", "4"})
  public int limit = 1;

  /** CPU tokens burnt while holding the permit ({@link Blackhole#consumeCPU}). */
  @Param({"20"})
  public int inside = 20;

  /** CPU tokens burnt between releasing and the next acquire. */
  @Param({"20"})
  public int outside = 20;

  Limiter limiter;

  @Setup
  public void setUp() {
    limiter = Limiter.create(impl, limit);
  }

  @TearDown
  public void check() {
    Checks.allFree(limiter, limit);
  }

  @Benchmark
  public void acquireRelease() throws InterruptedException {
    Limiter l = limiter;
    Object handle = l.acquire();
    Blackhole.consumeCPU(inside);
    l.release(handle);
    Blackhole.consumeCPU(outside);
  }
}
