package dev.jeton.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Control;

/**
 * Threads meeting at a barrier over and over: Jeton's {@code Barrier} (blocking {@code await()},
 * and {@code awaitAsync().join()}) beside {@code CyclicBarrier} and {@code Phaser}'s {@code
 * arriveAndAwaitAdvance()}. The barrier has as many parties as JMH has threads ({@code -t}, default
 * 4), and one operation is one arrival by each thread, so the time per operation is the time per
 * generation: the cost of the last arrival's trip and of waking every other party. Goal: Jeton
 * faster than CyclicBarrier.
 *
 * <p>Run, once per number of parties:
 *
 * <pre>
 * for t in 2 4 8; do java -jar jeton-bench/target/benchmarks.jar BarrierBenchmark -t $t; done
 * </pre>
 *
 * <p>The threads need not be on different cores: with more parties than cores, every generation
 * also costs context switches, which is what a barrier costs there.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(4)
public class BarrierBenchmark {
  /*
   * Why the run cannot hang at the end of an iteration
   *
   * JMH stops its threads one by one: each leaves the measured loop when it next sees the
   * iteration's time up, then keeps calling the benchmark (unmeasured warm-down) until every
   * thread has left the measured loop, then stops. A thread blocked at the barrier for a party
   * that has stopped would wait forever. So the first call made once the measurement is over
   * (Control.stopMeasurement, which each thread sets as it leaves the measured loop, so before its
   * own first warm-down call) opens the barrier for good (Meeter.open) before arriving: everyone
   * waiting is let through, and every later arrival passes at once.
   *
   * That is enough: while some thread is still in the measured loop, no thread has stopped (the
   * warm-down lasts until all have left it), so a party missing from a generation is either still
   * measuring, and will arrive, or in the warm-down, and its next call opens the barrier. Once it
   * is open, a thread still measuring makes at most one more (free) operation, the one under way,
   * since the time was up when the first thread left. This relies on JMH's synchronized
   * iterations (-si true, the default): without them a thread stops with no warm-down at all, so
   * the benchmark refuses to run.
   *
   * The cost to every operation is one read of a volatile field written once per iteration. The
   * barrier is made new for each iteration, since it ends open.
   */

  /** The barrier, made anew for each iteration. */
  @State(Scope.Benchmark)
  public static class Shared {
    @Param({Meeter.JETON, Meeter.JETON_ASYNC, Meeter.CYCLIC_BARRIER, Meeter.PHASER})
    public String impl = Meeter.JETON;

    Meeter meeter;
    private final AtomicBoolean opened = new AtomicBoolean();

    @Setup(Level.Iteration)
    public void setUp(BenchmarkParams params) {
      if (!params.shouldSynchIterations()) {
        throw new IllegalArgumentException(
            "BarrierBenchmark needs synchronized iterations (-si true) not to hang at the end of"
                + " an iteration");
      }
      meeter = Meeter.create(impl, params.getThreads());
      opened.set(false);
    }

    void openOnce() throws InterruptedException {
      if (!opened.get() && opened.compareAndSet(false, true)) {
        meeter.open();
      }
    }
  }

  @Benchmark
  public void generation(Shared shared, Control control) throws InterruptedException {
    if (control.stopMeasurement) {
      shared.openOnce();
    }
    shared.meeter.await();
  }
}
