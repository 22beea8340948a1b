package dev.jeton.internal.engine;

import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The engine's spin policy: how a waiter stays awake before it parks, and the one gate that bounds
 * how many threads spin at once.
 *
 * <p>Three spins, for three kinds of waiter:
 *
 * <ul>
 *   <li><b>The head spin</b> ({@link #HEAD_STEPS}): the waiter at the head of a wait queue is next
 *       in line for a handoff from a holder that is running, so it busy-waits {@link #HEAD_WAITS}
 *       steps, then yields {@link #HEAD_YIELDS} times, which hands the core to the holder when
 *       threads outnumber cores (decision 8, chosen with ContendedBenchmark, see BENCHMARKS.md).
 *       The budget is spent once per request (a node reaches the head once), never refilled by a
 *       wake-up. It needs no gate: a queue has one head, and its granter prewakes the next one.
 *   <li><b>The brief spin</b> ({@link #STEPS}): a short busy wait for a waiter whose other side may
 *       well be running right now: a channel's receiver waiting for the next send, its sender for
 *       the next receive, a blocked select. It goes through the gate.
 *   <li><b>The newcomer spin</b> ({@link #NEWCOMER_STEPS}, {@link #beforeQueueing}): a request of a
 *       barging lock (bounded barging) that finds it taken tries again for a few steps before it
 *       queues, as AQS's acquire and Go's sync.Mutex do: a hot lock comes free within a critical
 *       section, and a thread that takes it then never enqueues, parks nor is woken. That is what a
 *       virtual thread pays most for: with it, the barging locks went from about 0.5x to above the
 *       non-fair JUC locks on virtual threads (decision 105). It goes through the gate: one spinner
 *       per two cores took as much on virtual threads as no gate, and cost nothing on eight
 *       platform threads, where seven ungated spinners took the cores from the holder (the mutex
 *       fell from 34 to 24 ops/µs). Strict FIFO does not spin so: there, once anyone has queued, a
 *       newcomer can take nothing until the queue drains, and its spin would only burn the core the
 *       holder needs.
 * </ul>
 *
 * <p><b>The gate</b>: at most {@link #MAX_SPINNERS} threads of the process are inside a gated spin
 * at once ({@link #tryEnter}, {@link #exit}): the brief spin here, and any other spin of Jeton that
 * waits for another thread (jeton-redis's wait for a reply). A thread that finds the gate full
 * parks at once.
 *
 * <p>Why the brief spin: parking and being unparked cost tens of microseconds on a virtual machine,
 * where a round trip between two running threads takes about one; a channel that parked at once was
 * 50 times slower than its spinning peers in ping-pong on an idle machine (decision 54). Why not
 * the engine's long spin at the head (decision 8): it ends in thousands of {@code Thread.yield}s
 * and took the core from the other side whenever threads outnumbered cores.
 *
 * <p>Algorithm: at most {@link #MAX_SPINNERS} threads of the process spin at once (half the cores,
 * at least one); a thread that finds them all taken parks at once. When threads outnumber cores, as
 * in a chain of channels with a thread per stage, the one spinner then leaves the other cores to
 * the threads that have work, which is how Go's scheduler bounds its spinning threads. A spinner
 * stops after {@link #STEPS} steps, when its node is no longer waiting, or when it is interrupted
 * (its flag is kept for the caller's wait loop to see). Whether a waiter spins at all, each channel
 * learns from how its waiters' spins went ({@link Score}, decision 55): where they mostly run out,
 * its waiters park at once. While more threads wait on channels than there are cores, a waiter does
 * not spin at all: it yields a few times, then parks (decision 56).
 *
 * <p>Invariant: {@code spinners} counts the threads inside a gated spin; it never exceeds
 * MAX_SPINNERS, and every increment is undone in a finally.
 */
public final class Spin {
  /**
   * How long the head waiter stays awake before parking: this many busy-wait steps, then {@link
   * #HEAD_YIELDS} {@code Thread.yield()}s, which hand the core to the holder when threads outnumber
   * cores. Chosen with ContendedBenchmark (see BENCHMARKS.md).
   */
  static final int HEAD_WAITS = 1 << 10;

  /** The head spin's yields, after its busy-wait steps. */
  static final int HEAD_YIELDS = 1 << 12;

  /** The whole head spin budget, in steps. */
  public static final int HEAD_STEPS = HEAD_WAITS + HEAD_YIELDS;

  /**
   * Busy-wait steps: 10 to 14 µs on the 2-core AMD EPYC VM of BENCHMARKS.md (512 {@code
   * onSpinWait}s timed in a loop on JDK 17 and 25: the PAUSE instruction is slow on recent AMD
   * cores), ten times a round trip between two running threads. Fewer do not serve: a waiter whose
   * other side is waking from a park needs the whole spin to catch it, and with 128 steps ping-pong
   * stayed in parks, at 30 µs a round trip (decision 55).
   */
  public static final int STEPS = 512;

  /**
   * Yields before parking in a crowded process. A few: Go's runtime locks spin a few times and then
   * yield once before they sleep; here 1, 4, 8 and 16 all put the buffered chain 2 to 4 times ahead
   * of parking at once, and 4 was best there (decision 56).
   */
  static final int YIELDS = 4;

  /**
   * The newcomer spin's steps: about 1.5 µs on the VM of BENCHMARKS.md (see STEPS), about the
   * critical section of a hot lock plus a handoff between running threads. Chosen by a sweep of 16,
   * 64 and 256, with and without the gate (decision 105).
   */
  static final int NEWCOMER_STEPS = 64;

  /** Whether a spin can see another thread's work at all: not on one core. */
  static final boolean MULTICORE = Runtime.getRuntime().availableProcessors() > 1;

  /**
   * The newcomer spin: before a request of a barging queue appends itself, it tries {@code take}
   * again for up to {@link #NEWCOMER_STEPS} steps, through the gate, and returns what it took; null
   * if it took nothing (the gate was full, or the steps ran out): then it queues.
   */
  public static <T> @Nullable T beforeQueueing(Barge<T> take) {
    if (!MULTICORE || !tryEnter()) {
      return null;
    }
    try {
      for (int i = 0; i < NEWCOMER_STEPS; i++) {
        Thread.onSpinWait();
        T taken = take.tryTake();
        if (taken != null) {
          return taken;
        }
      }
      return null;
    } finally {
      exit();
    }
  }

  /** A newcomer's attempt to take what it asks for without queueing: null if it cannot now. */
  @FunctionalInterface
  public interface Barge<T> {
    @Nullable T tryTake();
  }

  /** The most threads inside a gated spin at once. */
  public static final int MAX_SPINNERS =
      Math.max(1, Runtime.getRuntime().availableProcessors() / 2);

  private static final AtomicInteger spinners = new AtomicInteger();

  private Spin() {}

  /** What a thread spins on: a channel waiter's node, a select. */
  public interface Awaited {
    /** Whether the thread still waits: false once the outcome it waits for is there. */
    boolean isPending();
  }

  /**
   * One step of the head spin, with {@code left} steps left after it: a busy wait while the budget
   * is above its yields, then a yield.
   */
  @SuppressWarnings("ThreadPriorityCheck") // yield hands the core to the holder; see HEAD_YIELDS
  static void headStep(int left) {
    if (left >= HEAD_YIELDS) {
      Thread.onSpinWait();
    } else {
      Thread.yield();
    }
  }

  /**
   * Enters the gate: true if fewer than MAX_SPINNERS threads were inside, and then the caller must
   * {@link #exit} in a finally; false if it is full, and the caller parks instead of spinning. A
   * lost race for a free place is tried again: only a full gate turns a thread away.
   */
  public static boolean tryEnter() {
    for (int n = spinners.get(); n < MAX_SPINNERS; n = spinners.get()) {
      if (spinners.compareAndSet(n, n + 1)) {
        return true;
      }
    }
    return false;
  }

  /** Leaves the gate that {@link #tryEnter} entered. */
  public static void exit() {
    spinners.decrementAndGet();
  }

  /**
   * Spins while {@code w} is pending, unless MAX_SPINNERS threads spin already: the steps spun (0
   * when it did not spin; STEPS when nothing happened meanwhile).
   */
  public static int await(Awaited w) {
    if (!tryEnter()) {
      return 0;
    }
    try {
      Thread self = Thread.currentThread();
      int steps = 0;
      while (steps < STEPS && w.isPending() && !self.isInterrupted()) {
        Thread.onSpinWait();
        steps++;
      }
      return steps;
    } finally {
      exit();
    }
  }

  /**
   * Yields while {@code w} is pending, at most {@link #YIELDS} times: the yields made. For a waiter
   * in a crowded process, whose core a runnable thread needs, most likely the one it waits for.
   */
  @SuppressWarnings("ThreadPriorityCheck") // handing the core over is the point
  public static int yieldWhilePending(Awaited w) {
    Thread self = Thread.currentThread();
    int yields = 0;
    while (yields < YIELDS && w.isPending() && !self.isInterrupted()) {
      Thread.yield();
      yields++;
    }
    return yields;
  }

  /**
   * Before {@code w} parks: yields if the process is crowded; else spins if {@code score} says
   * spinning pays on its channel, and tells the score how the spin went.
   */
  public static void await(Awaited w, Score score) {
    if (score.crowded()) {
      yieldWhilePending(w);
    } else if (score.spins()) {
      score.record(await(w));
    }
  }

  /**
   * Whether spinning pays on one channel, learnt from its waiters' spins (decision 55).
   *
   * <p>Why: where threads outnumber cores, as in a chain of channels with a thread per stage, a
   * spin mostly runs out, and the core it burnt is one a runnable stage needed: the chain rows were
   * 1.5 to 2 times slower with the spin than parking at once. Where the other side runs on a core
   * of its own, as in ping-pong, the outcome comes within the spin, and parking instead costs tens
   * of microseconds. Shortening the spin does not tell the two apart (see STEPS), nor did counting
   * a catch late in the spin as a miss (ping-pong fell back into parks); this does.
   *
   * <p>The score alone did not serve a buffered channel in a chain (decision 56): its spins still
   * caught their outcome often enough to keep spinning, but late (after about 125 steps, where
   * ping-pong catches after 6), and each burnt a core that one of the 9 threads needed. Scoring
   * late catches as misses trapped the one-pair transfer in parks: there, too, a waiter whose other
   * side wakes from a park catches late. What tells the two apart is not on the channel but in the
   * process: how many threads wait on channels ({@link ThreadCensus}).
   *
   * <p>Algorithm: while more threads waited on channels lately than there are cores ({@link
   * #crowded}), a waiter yields instead (Spin.YIELDS), and its wait tells the score nothing.
   * Otherwise a score from 0 to CAP decides: a spin that ends with its outcome adds UP; one that
   * runs out takes 1. A waiter spins while the score is positive; at 0, one wait in PROBE_EVERY
   * spins anyway, so that a channel whose traffic changed learns it again. A wait that did not spin
   * (all spinners busy) tells nothing. So a channel keeps spinning while more than one spin in UP +
   * 1 catches its outcome.
   *
   * <p>Field access: plain ints, read and written by every waiter of the channel without
   * synchronization: a lost update costs a spin more or less, never a value or a wake-up.
   */
  public static final class Score {
    public static final int CAP = 8;
    static final int UP = 2;
    static final int PROBE_EVERY = 16;

    private int score = CAP; // a new channel tries spinning
    private int waitsAtZero;
    private final ThreadCensus census;

    /** A score whose waiters are counted in {@code census}. */
    public Score(ThreadCensus census) {
      this.census = census;
    }

    /**
     * Whether more threads waited on channels lately than there are cores, counting the caller:
     * then it yields instead of spinning, and tells the score nothing.
     */
    public boolean crowded() {
      return census.crowded();
    }

    /** Whether a waiter spins now; see the algorithm. */
    public boolean spins() {
      return score > 0 || ++waitsAtZero % PROBE_EVERY == 0;
    }

    /** Tells the score how a spin went: the steps it spun (0: it did not spin). */
    public void record(int steps) {
      if (steps == 0) {
        return; // did not spin
      }
      int s = score;
      score = steps < STEPS ? Math.min(CAP, s + UP) : Math.max(0, s - 1);
    }

    /** For tests. */
    public int score() {
      return score;
    }
  }

  /** The threads inside the gate now: for tests. */
  static int spinners() {
    return spinners.get();
  }
}
