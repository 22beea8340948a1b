package dev.jeton.internal.engine;

import java.util.Comparator;

/**
 * The order in which queued work is served, best first: by priority, higher first, with optional
 * aging, and first come first served among equals; or newest first. The one order of every priority
 * queue in Jeton (a scheduler's tasks, an admission's waiters), so that there is one aging rule. A
 * plain class, not composed lambdas: Lincheck copies its state.
 */
public final class RankOrder implements Comparator<RankOrder.Ranked> {
  /*
   * By priority, with aging of A nanoseconds (0: none): by the rank enqueuedNanos - priority * A,
   * then seq, so that work that has waited A ranks like work arriving now a priority higher;
   * aging is continuous, so two entries' order never changes while both wait and nothing is
   * re-sorted. The rank needs up to 95 bits (a 32-bit priority times a 63-bit aging), so it is
   * never stored: two entries compare by the sign of the difference of their ranks,
   * (t1 - t2) - (p1 - p2) * A, where t1 - t2 is exact (two readings of one clock, however near
   * its ends) and a product beyond a long decides by its sign alone, being larger than any
   * t1 - t2. Exact, so the order is total and no two priorities ever tie. (A rank clamped to a
   * long tied the priorities beyond 2^63 / A, those past 2.6 million under an aging of an hour,
   * and on a clock near its lowest value, where nanoTime may well be, nearly all of them: the
   * scheduler ran Integer.MAX_VALUE - 1 before Integer.MAX_VALUE.) Without aging the clock is
   * not read: entries compare by priority, then seq.
   *
   * Newest first: by seq, descending.
   */

  /** What the order reads of a queued entry; fixed when it is queued. */
  public interface Ranked {
    /** Higher goes first. */
    int priority();

    /** When it was queued, on the queue's clock, read with {@link #seq()}; unused without aging. */
    long enqueuedNanos();

    /** Its arrival: unique in its queue, and increasing with {@link #enqueuedNanos()}. */
    long seq();
  }

  private final boolean newestFirst;
  private final long agingNanos; // 0: no aging

  private RankOrder(boolean newestFirst, long agingNanos) {
    this.newestFirst = newestFirst;
    this.agingNanos = agingNanos;
  }

  /**
   * Higher priorities first, first come first served within one; with {@code agingNanos} above 0,
   * an entry that has waited that long ranks like one queued now a priority higher. With every
   * priority equal this is first come first served.
   */
  public static RankOrder byPriority(long agingNanos) {
    if (agingNanos < 0) {
      throw new IllegalArgumentException("aging must not be negative, was " + agingNanos);
    }
    return new RankOrder(false, agingNanos);
  }

  /** The newest entry first (LIFO); priorities are ignored. */
  public static RankOrder newestFirst() {
    return new RankOrder(true, 0);
  }

  /** Whether this order needs {@link Ranked#enqueuedNanos()}: false spares the clock's reading. */
  public boolean ages() {
    return agingNanos != 0;
  }

  @Override
  public int compare(Ranked a, Ranked b) {
    if (newestFirst) {
      return Long.compare(b.seq(), a.seq());
    }
    int byRank = agingNanos == 0 ? Integer.compare(b.priority(), a.priority()) : compareRanks(a, b);
    return byRank != 0 ? byRank : Long.compare(a.seq(), b.seq());
  }

  /** The sign of rank(a) - rank(b), exactly, with rank = enqueuedNanos - priority * aging. */
  private int compareRanks(Ranked a, Ranked b) {
    long waited = a.enqueuedNanos() - b.enqueuedNanos();
    long priorities = (long) a.priority() - b.priority();
    long lift;
    try {
      lift = Math.multiplyExact(priorities, agingNanos);
    } catch (ArithmeticException beyondAnyLong) { // so beyond `waited` too: its sign decides
      return priorities > 0 ? -1 : 1;
    }
    return Long.compare(waited, lift);
  }
}
