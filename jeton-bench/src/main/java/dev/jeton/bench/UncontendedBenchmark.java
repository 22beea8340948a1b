package dev.jeton.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.CompilerControl;
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

/**
 * One thread takes one permit of a free semaphore (limit 1) and gives it back: the cost of the fast
 * paths, in ns per acquire+release.
 *
 * <ul>
 *   <li>{@code acquireRelease}: each library's regular acquire entry point on a free permit. jeton:
 *       blocking {@code acquire(1)} + {@code Permit.release()} (goal: within 1.2x of juc-unfair);
 *       juc-fair, juc-unfair: {@code acquire()} + {@code release()}; ibm: {@code acquire(1)}, which
 *       returns an already completed stage, + {@code release(1)}; kotlinx: the suspend {@code
 *       acquire}, called with a continuation as an existing coroutine would call it (it returns at
 *       once, the continuation is never used), + {@code release()}; cas-floor: one CAS + one atomic
 *       add.
 *   <li>{@code acquireReleaseInCall}: the same, in a method of its own that the loop calls and that
 *       the JIT does not inline into it, as a caller's method would be. In {@code acquireRelease}
 *       the whole acquire and release is inlined into JMH's loop, which then holds no call: a call
 *       that code can still make on a path the loop takes rarely (a sampled leak watch, one
 *       acquisition in 1,024) makes C2 keep the loop's values on the stack, a dozen stores and
 *       loads per operation, which no caller that makes any call of its own pays. This row measures
 *       the path as such callers see it (decision 107).
 *   <li>{@code tryAcquireRelease}: every library's non-waiting {@code tryAcquire} + release. For
 *       jeton it is {@code tryAcquire(1)}, which returns an {@code Optional<Permit>}.
 * </ul>
 *
 * <p>Run: {@code java -jar jeton-bench/target/benchmarks.jar UncontendedBenchmark}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class UncontendedBenchmark {

  /** A limiter of one permit, free at the start and end of every operation. */
  @State(Scope.Thread)
  public static class Free {
    @Param({
      Limiter.JETON,
      Limiter.JETON_LEAKS_OFF,
      Limiter.JETON_LEAKS_PARANOID,
      Limiter.JUC_UNFAIR,
      Limiter.JUC_FAIR,
      Limiter.IBM,
      Limiter.KOTLINX,
      Limiter.CAS_FLOOR
    })
    public String impl = Limiter.JETON;

    Limiter limiter;

    @Setup
    public void setUp() {
      limiter = Limiter.create(impl, 1);
    }

    @TearDown
    public void check() {
      Checks.allFree(limiter, 1);
    }
  }

  @Benchmark
  public void acquireRelease(Free state) throws InterruptedException {
    Limiter limiter = state.limiter;
    limiter.release(limiter.acquireUncontended());
  }

  @Benchmark
  public void acquireReleaseInCall(Free state) throws InterruptedException {
    inCall(state.limiter);
  }

  @CompilerControl(CompilerControl.Mode.DONT_INLINE)
  private static void inCall(Limiter limiter) throws InterruptedException {
    limiter.release(limiter.acquireUncontended());
  }

  @Benchmark
  public void tryAcquireRelease(Free state) {
    Limiter limiter = state.limiter;
    Object handle = limiter.tryAcquire();
    if (handle == null) {
      throw new IllegalStateException(state.impl + ": tryAcquire failed on a free permit");
    }
    limiter.release(handle);
  }
}
