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
 * <p>With {@code -p recordWaits=true}, every acquire's wait is recorded ({@link #acquireOnce}), and
 * with {@code -prof dev.jeton.bench.WaitTails} its p99.9 and longest wait print beside the
 * throughput ({@link WaitTails}). Timing every acquire costs two clock reads an operation, one of
 * them inside the critical section, which slows the fastest locks by half or more: so the waits are
 * recorded only with {@code -p recordWaits=true}, and the throughput to compare is the untimed one;
 * {@code -p recordWaits=false,true} measures both side by side. The same operation on 8 and 64
 * virtual threads is {@code VirtualLockBenchmark.semaphore} (src/main/java21, built on JDK 21 and
 * newer).
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
public class ContendedBenchmark {

  /** The semaphore and the shape of an operation. */
  @State(Scope.Benchmark)
  public static class Shared {
    @Param({Limiter.JETON, Limiter.JETON_BARGING, Limiter.JUC_FAIR, Limiter.JUC_UNFAIR})
    public String impl = Limiter.JETON;

    @Param({"1", "4"})
    public int limit = 1;

    /** CPU tokens burnt while holding the permit ({@link Blackhole#consumeCPU}). */
    @Param({"20"})
    public int inside = 20;

    /** CPU tokens burnt between releasing and the next acquire. */
    @Param({"20"})
    public int outside = 20;

    /** Whether every acquire's wait is timed. */
    @Param({"false"})
    public boolean recordWaits = false;

    Limiter limiter;

    @Setup
    public void setUp() {
      limiter = Limiter.create(impl, limit);
    }

    @TearDown
    public void check() {
      Checks.allFree(limiter, limit);
    }
  }

  /** One thread's acquire waits. */
  @State(Scope.Thread)
  public static class Waiter {
    final WaitHistogram waits = new WaitHistogram("wait");
  }

  /**
   * One operation. The wait is recorded after the release, so that recording does not lengthen the
   * time the permit is held.
   */
  static void acquireOnce(Shared shared, Waiter waiter) throws InterruptedException {
    Limiter l = shared.limiter;
    if (shared.recordWaits) {
      long start = System.nanoTime();
      Object handle = l.acquire();
      long acquired = System.nanoTime();
      Blackhole.consumeCPU(shared.inside);
      l.release(handle);
      waiter.waits.record(acquired - start);
    } else {
      Object handle = l.acquire();
      Blackhole.consumeCPU(shared.inside);
      l.release(handle);
    }
    Blackhole.consumeCPU(shared.outside);
  }

  @Benchmark
  public void acquireRelease(Shared shared, Waiter waiter) throws InterruptedException {
    acquireOnce(shared, waiter);
  }
}
