package dev.jeton.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.Blackhole;
import org.openjdk.jmh.infra.Control;

/**
 * The floors under {@link MutexBenchmark}: what a lock with nothing but its atomic instructions, or
 * with nothing but its thread handoffs, costs on this machine. Run them beside the mutex benchmark
 * to see how far each lock is from what no lock of its shape can beat.
 *
 * <ul>
 *   <li>{@code constantCas}: ReentrantLock's shape, a CAS from the constant 0 to lock and a
 *       volatile store to unlock, with the same interrupt check and critical section as {@code
 *       MutexBenchmark.uncontended}.
 *   <li>{@code loadThenCas}: Jeton's mutex shape (numbered grants, decision 42): the state word is
 *       read to compute the next grant, then CAS; unlock is a CAS from that grant. The read is what
 *       a lock whose unlock is idempotent from any thread cannot skip: the grant's number comes
 *       from the word it replaces.
 *   <li>{@code parkedHandoff}: {@code -t} threads pass a token round a ring, strictly in turn, as a
 *       strict-FIFO lock hands itself to its oldest waiter, with the same critical section and the
 *       same {@code outside} CPU between turns; a thread whose turn has not come parks, and the one
 *       passing the token unparks it. With more threads than cores, every strict-FIFO lock pays at
 *       least this per handoff: its next owner is, most of the time, not on a core. The throughput
 *       is in turns per microsecond, like {@code MutexBenchmark.contended}.
 *   <li>{@code yieldingHandoff}: the same ring, but a waiting thread never parks: it yields its
 *       core in a loop. No lock should wait this way (every waiter burns a core's time slices), but
 *       it is the cheapest way the scheduler knows to put the next owner on a core: the floor of a
 *       strict-FIFO handoff to a thread that is not running.
 * </ul>
 *
 * <pre>
 * java -jar jeton-bench/target/benchmarks.jar 'LockFloorBenchmark.(constantCas|loadThenCas)'
 * for t in 2 4 8; do java -jar jeton-bench/target/benchmarks.jar 'LockFloorBenchmark.*Handoff' -t $t; done
 * </pre>
 */
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
public class LockFloorBenchmark {

  private static final int INCREMENTS = 4;
  private static final int OUTSIDE = 20;

  /** A lock word and the counter it guards, for the uncontended floors. */
  @State(Scope.Thread)
  public static class Word {
    private static final VarHandle STATE;

    static {
      try {
        STATE = MethodHandles.lookup().findVarHandle(Word.class, "state", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    volatile long state;
    long counter;

    void section() {
      for (int i = 0; i < INCREMENTS; i++) {
        counter++;
      }
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  @Threads(1)
  public void constantCas(Word w) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (!Word.STATE.compareAndSet(w, 0L, 1L)) {
      throw new IllegalStateException("locked");
    }
    try {
      w.section();
    } finally {
      w.state = 0L;
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  @Threads(1)
  public void loadThenCas(Word w) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    long s = w.state;
    long grant = s + 6; // the next number, shifted by 2, with LOCKED (2): FifoMutex's encoding
    if ((s & 3) != 0 || !Word.STATE.compareAndSet(w, s, grant)) {
      throw new IllegalStateException("locked");
    }
    try {
      w.section();
    } finally {
      if (!Word.STATE.compareAndSet(w, grant, grant - 2)) {
        throw new IllegalStateException("not held");
      }
    }
  }

  /** The ring: whose turn it is, and every thread of the run by its place in the ring. */
  @State(Scope.Benchmark)
  public static class Ring {
    final AtomicInteger joined = new AtomicInteger();
    volatile int turn;
    volatile Thread[] threads;
    long counter;

    @Setup
    public void setUp(BenchmarkParams params) {
      threads = new Thread[params.getThreads()];
    }
  }

  /** A thread's place in the ring. */
  @State(Scope.Thread)
  public static class Place {
    int index;

    @Setup
    public void join(Ring ring) {
      index = ring.joined.getAndIncrement();
      ring.threads[index] = Thread.currentThread();
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Measurement(iterations = 5, time = 2)
  @Threads(4)
  public void parkedHandoff(Ring ring, Place place, Control control) {
    while (ring.turn != place.index) {
      if (control.stopMeasurement) {
        return; // the others have stopped passing the token
      }
      // The time-out only guards the end of the run; a turn arrives with an unpark.
      LockSupport.parkNanos(1_000_000L);
    }
    passOn(ring, place, true);
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  @Measurement(iterations = 5, time = 2)
  @Threads(4)
  public void yieldingHandoff(Ring ring, Place place, Control control) {
    while (ring.turn != place.index) {
      if (control.stopMeasurement) {
        return;
      }
      Thread.yield();
    }
    passOn(ring, place, false);
  }

  /** Runs the critical section, passes the turn on (unparking the next), burns the outside CPU. */
  private static void passOn(Ring ring, Place place, boolean unpark) {
    for (int i = 0; i < INCREMENTS; i++) {
      ring.counter++;
    }
    Thread[] threads = ring.threads;
    int next = place.index + 1 == threads.length ? 0 : place.index + 1;
    ring.turn = next;
    Thread successor = threads[next];
    if (unpark && successor != null) { // null only while the ring is still forming
      LockSupport.unpark(successor);
    }
    Blackhole.consumeCPU(OUTSIDE);
  }
}
