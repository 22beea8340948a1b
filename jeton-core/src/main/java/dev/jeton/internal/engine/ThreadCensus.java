package dev.jeton.internal.engine;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * How many threads waited on a channel lately: the estimate by which a channel's waiter tells that
 * threads outnumber cores, and so yields its core rather than spin (decision 56).
 *
 * <p>Why: a spin pays when the thread that will end it runs on a core of its own. Where more
 * threads wait on channels than there are cores, as in a chain of channels with a thread per stage,
 * the spinner's core is one a runnable thread needs, most likely the one it waits for; yielding it
 * lets that thread run and often end the wait before it parks. Go's scheduler follows the same
 * rule: a thread spins looking for work only while a core is idle. A JVM does not say how many
 * threads are runnable; the threads that waited on a channel in the last period are the ones Jeton
 * sees.
 *
 * <p>Algorithm: time is cut into periods of {@link #PERIOD_NANOS}. A thread that notes itself
 * counts once per period: it keeps the start of the last period it was counted in, in a thread
 * local. The first thread to see that the period is over starts the next one (a CAS on the period's
 * start, which also names the period), keeping the count of the one that ended. The estimate is the
 * larger of the ended period's count and the current one's: a thread that stopped waiting drops out
 * after two periods at most.
 *
 * <p>Invariants: a period's start moves only by a CAS, at least PERIOD_NANOS forward; {@code
 * counted} only grows within a period, by one per thread, except at a period's turn: a thread
 * counted between the CAS and the reset is lost to the ended period, and one that read the old
 * start but counts after the reset is counted twice in the new one. That costs a thread more or
 * less in the estimate for a period, never more: the estimate steers a spin, never a value or a
 * wake-up. So there is no Lincheck model of it; its stress test checks that concurrent threads are
 * each counted exactly once within a period.
 */
public final class ThreadCensus {
  /** One millisecond: a thread that waits on a channel at all waits far more often than that. */
  static final long PERIOD_NANOS = 1_000_000L;

  /** The census every channel uses. */
  public static final ThreadCensus CHANNELS =
      new ThreadCensus(Runtime.getRuntime().availableProcessors(), System::nanoTime);

  private final int cores;
  private final LongSupplier clock;

  /** When the current period started: also its name in each thread's lastCounted. */
  private final AtomicLong periodStart;

  private final AtomicInteger counted = new AtomicInteger();
  private volatile int endedCount;

  /**
   * The start of the period this thread was last counted in; at first one no period has (starts are
   * a period apart).
   */
  private final ThreadLocal<long[]> lastCounted;

  ThreadCensus(int cores, LongSupplier clock) {
    this.cores = cores;
    this.clock = clock;
    this.periodStart = new AtomicLong(clock.getAsLong());
    this.lastCounted = ThreadLocal.withInitial(() -> new long[] {periodStart.get() - 1});
  }

  /** Counts the calling thread in this period if it is not yet, and returns the estimate. */
  int note() {
    long start = periodStart.get();
    long time = clock.getAsLong();
    if (time - start >= PERIOD_NANOS && periodStart.compareAndSet(start, time)) {
      endedCount = counted.getAndSet(0);
    }
    long period = periodStart.get();
    long[] last = lastCounted.get();
    int now = last[0] == period ? counted.get() : countIn(last, period);
    return Math.max(endedCount, now);
  }

  private int countIn(long[] last, long period) {
    last[0] = period;
    return counted.incrementAndGet();
  }

  /** Whether more threads waited lately than there are cores, counting the calling thread. */
  boolean crowded() {
    return note() > cores;
  }
}
