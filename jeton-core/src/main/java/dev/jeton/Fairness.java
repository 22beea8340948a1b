package dev.jeton;

import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Who gets a lock when it is let go while others wait: what a primitive promises about order, and
 * what that costs in throughput. A builder option of the in-process locks ({@link
 * Mutex.Builder#fairness}, {@link ReadWriteLock.Builder#fairness}, both bounded barging by default)
 * and semaphore ({@link Semaphore.Builder#fairness}, strict FIFO by default: there a request may be
 * large, and the order is what keeps it from waiting behind a stream of small ones).
 *
 * <ul>
 *   <li>{@link #strictFifo()}: every request is served in the order it arrived, and a free lock is
 *       handed straight to the oldest waiter. No request is ever overtaken; but each handoff waits
 *       for the next thread to wake up (tens of microseconds), during which no one holds the lock,
 *       so a lock taken millions of times a second runs at the pace of those wake-ups, as a fair
 *       {@code ReentrantLock} does.
 *   <li>{@link #boundedBarging(Duration)}: a free lock goes to whoever asks for it first, a running
 *       thread ahead of the woken waiter (barging), as a non-fair {@code ReentrantLock} or {@code
 *       synchronized} does, which keeps a hot lock busy; but as soon as the oldest waiter has
 *       waited longer than the bound, the lock switches to strict FIFO handoffs until it has served
 *       every waiter that waited that long. So no wait exceeds the bound by more than the handoffs
 *       to the waiters queued ahead, where a non-fair lock lets a waiter starve for seconds. This
 *       is the mode of Go's {@code sync.Mutex}. A blocking request that finds the lock taken tries
 *       again for about a microsecond before it queues, as the non-fair JUC locks and Go's do: a
 *       hot lock comes free within that time, and a thread that takes it then never parks (on a
 *       multicore machine, by at most half the cores' threads at once).
 * </ul>
 *
 * <p>For permits (a semaphore, and the read-write lock, whose writer takes them all), barging
 * happens only while a release has covered a waiter that is being woken: while the waiter at the
 * head needs more permits than are free, newcomers queue behind it, so a stream of small requests
 * cannot starve a large one. A run of waiters that one release covers (the readers queued behind a
 * writer) is let in together.
 *
 * <p>The switch is made by the next release after the bound, or by the woken waiter when it finds
 * the lock taken: a waiter woken just before its wait passed the bound can lose the lock once more,
 * to a request that takes it before the waiter runs.
 *
 * <p>Both modes keep every other promise: cancellation and timeouts withdraw a request at once, a
 * request that gives up never holds the lock, asynchronous requests are served as blocking ones,
 * and {@code queueLength} is exact.
 */
public final class Fairness {
  /** The bound of {@link #boundedBarging()}: Go's {@code sync.Mutex} uses the same. */
  public static final Duration DEFAULT_BOUND = Duration.ofMillis(1);

  private static final Fairness STRICT_FIFO = new Fairness(null);

  private static final Fairness DEFAULT_BARGING = new Fairness(DEFAULT_BOUND);

  /** The bound of barging; null for strict FIFO. */
  private final @Nullable Duration bound;

  private Fairness(@Nullable Duration bound) {
    this.bound = bound;
  }

  /** Strict FIFO: every request served in arrival order, handed over at each release. */
  public static Fairness strictFifo() {
    return STRICT_FIFO;
  }

  /** Bounded barging with the {@linkplain #DEFAULT_BOUND default bound} of 1 ms. */
  public static Fairness boundedBarging() {
    return DEFAULT_BARGING;
  }

  /**
   * Bounded barging: newcomers may take a free lock ahead of the waiters, until the oldest waiter
   * has waited longer than {@code bound}.
   *
   * <p>A bound too long to count in nanoseconds (292 years) counts as that long.
   *
   * @throws IllegalArgumentException if {@code bound} is zero or negative ({@link #strictFifo()} is
   *     the lock that never lets anyone overtake)
   */
  public static Fairness boundedBarging(Duration bound) {
    Objects.requireNonNull(bound, "bound");
    if (bound.isZero() || bound.isNegative()) {
      throw new IllegalArgumentException(
          "the bound must be positive, not " + bound + "; strictFifo() never lets anyone overtake");
    }
    return new Fairness(bound);
  }

  /** True for strict FIFO. */
  public boolean isStrictFifo() {
    return bound == null;
  }

  /** The bound on waits before the lock turns strict FIFO; empty for strict FIFO. */
  public Optional<Duration> bound() {
    return java.util.Optional.ofNullable(bound);
  }

  /** The bound in nanoseconds; 0 for strict FIFO, where every waiter is past it at once. */
  long boundNanos() {
    return bound == null ? 0L : Arguments.toNanos(bound);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Fairness && Objects.equals(bound, ((Fairness) o).bound);
  }

  @Override
  public int hashCode() {
    return Objects.hashCode(bound);
  }

  @Override
  public String toString() {
    return bound == null ? "strictFifo" : "boundedBarging(" + bound + ")";
  }
}
