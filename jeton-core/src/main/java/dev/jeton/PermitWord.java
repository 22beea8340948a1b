package dev.jeton;

/**
 * The layout of {@link PermitQueue}'s state word, whose meaning and rules are explained there:
 *
 * <pre>
 *   state = free &lt;&lt; 33 | limit &lt;&lt; 3 | CLOSED | queue
 * </pre>
 *
 * <p>{@code free} takes 31 bits, signed: it runs from minus the largest limit to the largest limit.
 * The queue's state takes two bits, four values.
 */
final class PermitWord {
  static final int FREE_SHIFT = 33;
  static final int LIMIT_SHIFT = 3;

  /** The largest limit the word holds. */
  static final int MAX_LIMIT = (1 << 30) - 1;

  static final long LIMIT_MASK = (long) MAX_LIMIT << LIMIT_SHIFT;

  /** The bits of the queue's state, and its four values. */
  static final long QUEUE = 3;

  static final long EMPTY = 0;
  static final long QUEUED = 1;
  static final long WOKEN = 2;
  static final long STARVING = 3;

  /**
   * The bit set in QUEUED and STARVING: the head waits for a release to serve it, so nothing
   * changes the permits without the lock.
   */
  static final long AWAITS_RELEASE = 1;

  static final long CLOSED = 4;

  private PermitWord() {}

  /** The word of {@code free} permits, {@code limit}, and {@code flags} (CLOSED, the queue). */
  static long word(int free, int limit, long flags) {
    return ((long) free << FREE_SHIFT) | ((long) limit << LIMIT_SHIFT) | flags;
  }

  static int free(long s) {
    return (int) (s >> FREE_SHIFT);
  }

  static int limit(long s) {
    return (int) ((s & LIMIT_MASK) >>> LIMIT_SHIFT);
  }
}
