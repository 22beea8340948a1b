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
import org.openjdk.jmh.infra.Blackhole;

/**
 * Mutual exclusion: Jeton's {@code Mutex} beside {@code ReentrantLock} fair and non-fair, a {@code
 * synchronized} block and kotlinx.coroutines' {@code Mutex}. The critical section adds one to a
 * shared counter {@code increments} times (default 4).
 *
 * <ul>
 *   <li>{@code uncontended}: one thread locks the free mutex, runs the section and unlocks, in ns
 *       per operation. Goal: Jeton within 1.2x of juc-unfair. kotlinx's suspend {@code lock} is
 *       called with a continuation, as an existing coroutine would call it; it never suspends.
 *   <li>{@code contended}: every thread ({@code -t}, default 4) does the same in a loop, burning
 *       {@code outside} tokens of CPU (default 20) between operations; throughput in operations per
 *       microsecond, all threads together. {@code jeton} is the default mutex, bounded barging: its
 *       comparison is juc-unfair and {@code synchronized}, which let a thread barge in ahead of the
 *       queue (goal: at least 0.8x juc-unfair, issue 31), with its waits beside theirs. {@code
 *       jeton-fifo} is strictly FIFO, as juc-fair and kotlinx are: its comparison is juc-fair. How
 *       a blocking thread waits for kotlinx's mutex, which has no blocking lock, is in {@link
 *       Locker.Kotlinx}. With {@code -p recordWaits=true}, every lock's wait is recorded ({@link
 *       #lockOnce}), and with {@code -prof dev.jeton.bench.WaitTails} its p99.9 and longest wait
 *       print beside the throughput ({@link WaitTails}).
 * </ul>
 *
 * <p>Timing every acquire costs two clock reads an operation, one of them inside the critical
 * section, which slows the fastest locks by half or more: so the waits are recorded only with
 * {@code -p recordWaits=true}, and the throughput to compare is the untimed one; {@code -p
 * recordWaits=false,true} measures both side by side.
 *
 * <p>The same operation on 8 and 64 virtual threads is {@code VirtualLockBenchmark.mutex}
 * (src/main/java21, built on JDK 21 and newer). Run, the contended one once per thread count:
 *
 * <pre>
 * java -jar jeton-bench/target/benchmarks.jar 'MutexBenchmark.uncontended'
 * for t in 2 4 8; do java -jar jeton-bench/target/benchmarks.jar 'MutexBenchmark.contended' -t $t -p recordWaits=false,true -prof dev.jeton.bench.WaitTails; done
 * </pre>
 */
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
public class MutexBenchmark {

  /** The mutex and the counter it guards. */
  @State(Scope.Benchmark)
  public static class Shared implements Locker.Section {
    @Param({
      Locker.JETON,
      Locker.JETON_FIFO,
      Locker.JUC_FAIR,
      Locker.JUC_UNFAIR,
      Locker.SYNCHRONIZED,
      Locker.KOTLINX
    })
    public String impl = Locker.JETON;

    /** Increments of the shared counter in the critical section. */
    @Param({"4"})
    public int increments = 4;

    /** CPU tokens burnt between unlocking and the next lock ({@code contended} only). */
    @Param({"20"})
    public int outside = 20;

    /** Whether {@code contended} times every lock's wait ({@link #lockOnce}). */
    @Param({"false"})
    public boolean recordWaits = false;

    Locker locker;
    long counter;

    @Setup
    public void setUp() {
      locker = Locker.create(impl);
    }

    @TearDown
    public void check() {
      if (locker.isLocked()) {
        throw new IllegalStateException(impl + ": still locked after the run");
      }
      if (counter == 0) {
        throw new IllegalStateException(impl + ": the critical section never ran");
      }
    }

    @Override
    public void run() {
      for (int i = 0; i < increments; i++) {
        counter++;
      }
    }
  }

  /**
   * One thread's lock waits, and the section it runs under the lock to time them: it reads the
   * clock first thing after the acquire returned, then runs the shared section.
   */
  @State(Scope.Thread)
  public static class Waiter implements Locker.Section {
    final WaitHistogram waits = new WaitHistogram("wait");
    private Shared shared;
    long acquired;

    @Setup(Level.Trial)
    public void setUp(Shared shared) {
      this.shared = shared;
    }

    @Override
    public void run() {
      acquired = System.nanoTime();
      shared.run();
    }
  }

  /**
   * One contended operation: lock, the section, unlock, then {@code outside} tokens of CPU. The
   * wait is recorded after the unlock, so that recording does not lengthen the time the lock is
   * held; the section object differs with {@code recordWaits}, but within one fork it is always the
   * same, so the adapter's call to it stays monomorphic.
   */
  static void lockOnce(Shared shared, Waiter waiter) throws InterruptedException {
    if (shared.recordWaits) {
      long start = System.nanoTime();
      shared.locker.locked(waiter);
      waiter.waits.record(waiter.acquired - start);
    } else {
      shared.locker.locked(shared);
    }
    Blackhole.consumeCPU(shared.outside);
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  @Threads(1)
  public void uncontended(Shared shared) throws InterruptedException {
    shared.locker.lockedUncontended(shared);
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Measurement(iterations = 5, time = 2)
  @Threads(4)
  public void contended(Shared shared, Waiter waiter) throws InterruptedException {
    lockOnce(shared, waiter);
  }
}
