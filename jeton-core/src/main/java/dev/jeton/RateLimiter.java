package dev.jeton;

import dev.jeton.internal.Gcra;
import dev.jeton.internal.engine.Timer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Bounds how many things start per unit of time, where a {@link Semaphore} bounds how many run at
 * once: a rate ({@code permits} per {@code period}) and a burst. Each request has a weight (1
 * unless given) and passes when the limiter can admit that much; nothing is given back afterwards.
 *
 * <pre>{@code
 * RateLimiter vendorApi = RateLimiter.builder().rate(10, Duration.ofSeconds(1)).burst(5).build();
 * vendorApi.acquire();          // waits for its turn, then goes on
 * callVendor();
 * }</pre>
 *
 * <p><b>The bound.</b> Over any window of length {@code t}, the weight admitted is at most {@code
 * burst + rate * t}, exactly (the generic cell rate algorithm, kept in exact fractions of a
 * nanosecond): a full limiter lets {@code burst} pass at once, then one unit every {@code period /
 * permits}. A weight above the burst could never pass, and is refused at once.
 *
 * <p><b>Waiting.</b> Requests that cannot pass yet wait in one first-come-first-served queue,
 * blocking or asynchronous: a heavy request is never passed by lighter ones behind it, and {@link
 * #tryAcquire} fails while anyone waits. The head of the queue waits on a timer set for the moment
 * it can pass, never spinning. A request that gives up (cancel, timeout, interrupt) leaves the
 * queue at once and the ones behind it move up; one that gives up as it passed gives its weight
 * back. A future completed from outside (cancelled, timed out) never leaves its request admitted,
 * as with {@link Semaphore}.
 *
 * <p><b>Changing the rate</b> ({@link #setRate}) takes effect at once, for the waiting requests
 * too; what the limiter owes from the weight already admitted drains at the new rate.
 */
public interface RateLimiter {

  /**
   * A limiter of {@code permits} per {@code period}, with a burst of one period's permits.
   *
   * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive
   */
  static RateLimiter create(long permits, Duration period) {
    return builder().rate(permits, period).build();
  }

  /** {@return a builder; {@link Builder#rate} must be given} */
  static Builder builder() {
    return new Builder();
  }

  /** Waits until one unit passes. */
  default void acquire() throws InterruptedException {
    acquire(1);
  }

  /**
   * Waits until {@code weight} passes.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   * @throws InterruptedException if interrupted while waiting; nothing was admitted
   */
  void acquire(int weight) throws InterruptedException;

  /**
   * Waits up to {@code timeout} until {@code weight} passes.
   *
   * @throws TimeoutException if it did not pass in time; nothing was admitted
   * @throws InterruptedException if interrupted while waiting; nothing was admitted
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst, or {@code
   *     timeout} is negative
   */
  void acquire(int weight, Duration timeout) throws InterruptedException, TimeoutException;

  /** {@return whether one unit passed now} */
  default boolean tryAcquire() {
    return tryAcquire(1);
  }

  /**
   * {@return whether {@code weight} passed now} It does not if anyone is waiting, however much the
   * limiter could admit: they came first.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   */
  boolean tryAcquire(int weight);

  /**
   * {@return a future that completes when {@code weight} passes} Cancelling it withdraws the
   * request; if it had passed meanwhile, its weight is given back.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   */
  CompletableFuture<Void> acquireAsync(int weight);

  /**
   * As {@link #acquireAsync(int)}, failing with a {@link TimeoutException} if {@code weight} has
   * not passed within {@code timeout}.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst, or {@code
   *     timeout} is negative
   */
  CompletableFuture<Void> acquireAsync(int weight, Duration timeout);

  /**
   * Changes the rate to {@code permits} per {@code period}, from now on, for the waiting requests
   * too. The burst stays.
   *
   * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive;
   *     the rate is then unchanged
   */
  void setRate(long permits, Duration period);

  /** {@return the permits per {@link #period()}} */
  long permits();

  /** {@return the period of the rate} */
  Duration period();

  /** {@return the most weight that may pass at once, and the largest weight of one request} */
  int burst();

  /** {@return the number of requests waiting} */
  int queueLength();

  /**
   * {@return how long a request of {@code weight} made now would wait} At the current rate, if no
   * one ahead of it gives up: zero if it would pass at once. What a {@code Retry-After} says.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   */
  Duration timeToAdmit(int weight);

  /** {@return the statistics, if the limiter keeps them ({@link Builder#statistics})} */
  Optional<RateLimiterStats> stats();

  /** Builds an in-process {@link RateLimiter}. */
  final class Builder extends PrimitiveBuilder<Builder> {
    private long permits;
    private @Nullable Duration period;
    private int burst;
    private boolean statistics;

    Builder() {}

    /**
     * The rate: {@code permits} per {@code period}. Required.
     *
     * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive
     */
    public Builder rate(long permits, Duration period) {
      Objects.requireNonNull(period, "period");
      new Gcra(permits, period, 1, 0); // checks both, now rather than at build()
      this.permits = permits;
      this.period = period;
      return this;
    }

    /**
     * The most weight that may pass at once, after a pause (default: the rate's permits, at most
     * 2^31-1): a limiter that has admitted nothing for a while lets this much through at once, then
     * paces the rest. 1 makes it smooth.
     *
     * @throws IllegalArgumentException if {@code burst} is below 1
     */
    public Builder burst(int burst) {
      this.burst = Gcra.checkBurst(burst);
      return this;
    }

    /** Whether to keep {@link RateLimiterStats statistics} (default: false). */
    public Builder statistics(boolean keep) {
      this.statistics = keep;
      return this;
    }

    /**
     * {@return the limiter}
     *
     * @throws IllegalStateException if no {@link #rate} was given
     * @throws IllegalArgumentException if the rate is too fine to count exactly with this burst
     */
    public RateLimiter build() {
      Duration p = period;
      if (p == null) {
        throw new IllegalStateException("a rate limiter needs a rate: call rate(permits, period)");
      }
      int b = burst != 0 ? burst : (int) Math.min(permits, Integer.MAX_VALUE);
      return new FifoRateLimiter(
          name, permits, p, b, statistics, completionExecutor, Timer.shared(), System::nanoTime);
    }
  }
}
