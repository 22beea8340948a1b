package dev.jeton.http;

import java.util.Comparator;

/**
 * The order of an {@link AdmissionQueue}'s waiters: first come first served, LIFO, or by rank then
 * arrival. A plain class, not composed lambdas: Lincheck copies its state.
 */
final class WaiterOrder implements Comparator<Waiter> {
  /*
   * FIFO: by seq (arrival). LIFO: by -seq, newest first. Priorities, with aging of A nanoseconds: by the rank enqueuedNanos -
   * priority * A, then seq, so that a waiter that has waited A ranks like one arriving now a
   * priority higher; aging is continuous, so two waiters' order never changes while both wait
   * and nothing is re-sorted. The rank needs up to 95 bits (a 32-bit priority times a 63-bit
   * aging), so it is never stored: two waiters compare by the sign of the difference of their
   * ranks, (t1 - t2) - (p1 - p2) * A, where t1 - t2 is exact (two readings of one clock, however
   * near its ends) and a product beyond a long decides by its sign alone, being larger than any
   * t1 - t2. Exact, so the order is total and no two priorities ever tie. (A rank clamped to a
   * long tied the priorities beyond 2^63 / A, those past 2.6 million under an aging of an hour,
   * and on a clock near its lowest value, where nanoTime may well be, nearly all of them.)
   */

  private final boolean lifo;
  private final long agingNanos; // 0: no priorities

  WaiterOrder(boolean lifo, long agingNanos) {
    this.lifo = lifo;
    this.agingNanos = agingNanos;
  }

  @Override
  public int compare(Waiter a, Waiter b) {
    if (lifo) {
      return Long.compare(b.seq, a.seq);
    }
    int byRank = agingNanos == 0 ? 0 : compareRanks(a, b);
    return byRank != 0 ? byRank : Long.compare(a.seq, b.seq);
  }

  /** The sign of rank(a) - rank(b), exactly, with rank = enqueuedNanos - priority * aging. */
  private int compareRanks(Waiter a, Waiter b) {
    long waited = a.enqueuedNanos - b.enqueuedNanos;
    long priorities = (long) a.priority - b.priority;
    long lift;
    try {
      lift = Math.multiplyExact(priorities, agingNanos);
    } catch (ArithmeticException beyondAnyLong) { // so beyond `waited` too: its sign decides
      return priorities > 0 ? -1 : 1;
    }
    return Long.compare(waited, lift);
  }
}
