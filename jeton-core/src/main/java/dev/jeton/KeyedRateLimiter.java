package dev.jeton;

import dev.jeton.internal.Gcra;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A rate limit per key (a client, an API token, a route): each key has a rate ({@code permits} per
 * {@code period}) and a burst of its own, as if each had a {@link RateLimiter}, in a table of at
 * most {@code maxKeys} keys. Thread-safe; it never blocks: a request passes now or is refused, with
 * the time it would have to wait ({@link Attempt#retryAfter()}), which is what an HTTP server needs
 * to answer 429 with a {@code Retry-After}.
 *
 * <pre>{@code
 * KeyedRateLimiter<String> perToken =
 *     KeyedRateLimiter.<String>builder().rate(100, Duration.ofMinutes(1)).burst(20).build();
 * if (!perToken.tryAcquire(token)) {
 *   return "429, retry after " + perToken.timeToAdmit(token, 1).toSeconds() + " s";
 * }
 * }</pre>
 *
 * <p><b>The bound.</b> For each key, over any window of length {@code t}, the weight admitted is at
 * most {@code burst + rate * t}, exactly (the generic cell rate algorithm, in exact fractions of a
 * nanosecond, as in {@link RateLimiter}); {@link #giveBack} takes an admission back only when that
 * keeps the bound.
 *
 * <p><b>Memory.</b> A key's state is one theoretical arrival time. A key whose bucket is full again
 * (it has admitted nothing for {@code burst / rate}) is in the same state as a key never seen, so
 * it may be dropped from the table with no loss of exactness; the table never holds more than
 * {@code maxKeys} keys. When it is full, the keys that are full again are dropped; if there is
 * none, a new key is refused (its attempt does not pass, and says when to retry: when the first key
 * in the table can be dropped), while the keys already in the table go on as before. A new key is
 * never given room by dropping one that is not idle: that key would get its burst again, over its
 * bound. Size {@code maxKeys} above the number of keys active within {@code burst / rate}.
 *
 * <p>There is no queue: requests of one key are decided in the order they take the key's lock, and
 * a heavy request may be passed by lighter ones that fit.
 *
 * @param <K> the key; its {@code equals} and {@code hashCode} identify it
 */
public interface KeyedRateLimiter<K> {

  /** {@return a builder; {@link Builder#rate} must be given} */
  static <K> Builder<K> builder() {
    return new Builder<>();
  }

  /** {@return whether one unit passed now for {@code key}} */
  default boolean tryAcquire(K key) {
    return tryAcquire(key, 1);
  }

  /**
   * {@return whether {@code weight} passed now for {@code key}}
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   */
  default boolean tryAcquire(K key, int weight) {
    return attempt(key, weight).passed();
  }

  /**
   * Tries to pass {@code weight} now for {@code key}, and says what remains: the attempt and the
   * state after it, read together under the key's lock.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   */
  Attempt attempt(K key, int weight);

  /**
   * What an attempt of {@code weight} for {@code key} would see now, without taking anything.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   */
  Attempt peek(K key, int weight);

  /**
   * {@return how long an attempt of {@code weight} for {@code key} made now would have to wait}
   * Zero if it would pass now. A key not in the table counts as new, though a full table may refuse
   * it.
   *
   * @throws IllegalArgumentException if {@code weight} is below 1 or above the burst
   */
  default Duration timeToAdmit(K key, int weight) {
    return peek(key, weight).retryAfter();
  }

  /**
   * Takes back {@code attempt}, which passed, when its request was not served after all (a
   * concurrency limit behind this one refused it): its key gets the weight back, as if it had not
   * passed. Only if nothing passed for that key since, so that the bound holds for what was kept: a
   * later admission was decided on the schedule that counted this one. Once per attempt.
   *
   * @return whether the weight was given back
   * @throws IllegalArgumentException if the attempt is not one of this limiter's
   */
  boolean giveBack(Attempt attempt);

  /** {@return the permits per {@link #period()}} */
  long permits();

  /** {@return the period of the rate} */
  Duration period();

  /** {@return the most weight one key may pass at once, and the largest weight of one request} */
  int burst();

  /** {@return the most keys the table holds} */
  int maxKeys();

  /** {@return the number of keys in the table now, at most {@link #maxKeys()}} */
  int keys();

  /**
   * One attempt's outcome for one key, and the key's state after it, at the moment it was decided.
   */
  final class Attempt {
    private final Object limiter;
    private final Object key;
    private final boolean passed;
    private final int weight;
    private final int available;
    private final long retryAfterNanos;
    private final long untilFullNanos;
    // For giveBack: the schedule this attempt moved, and where it left it; givenBack is guarded
    // by the schedule's monitor.
    final @Nullable Gcra schedule;
    final long tatNanos;
    final long tatFraction;
    boolean givenBack;

    Attempt(
        Object limiter,
        Object key,
        boolean passed,
        int weight,
        int available,
        long retryAfterNanos,
        long untilFullNanos,
        @Nullable Gcra schedule) {
      this.limiter = limiter;
      this.key = key;
      this.passed = passed;
      this.weight = weight;
      this.available = available;
      this.retryAfterNanos = retryAfterNanos;
      this.untilFullNanos = untilFullNanos;
      this.schedule = schedule;
      this.tatNanos = schedule == null ? 0 : schedule.tatNanos();
      this.tatFraction = schedule == null ? 0 : schedule.tatFraction();
    }

    /** {@return whether the weight passed} */
    public boolean passed() {
      return passed;
    }

    /** {@return the weight asked for} */
    public int weight() {
      return weight;
    }

    /**
     * {@return the weight the key could pass at once after this attempt, from 0 to the burst} What
     * the {@code r} of an HTTP {@code RateLimit} header says.
     */
    public int available() {
      return available;
    }

    /**
     * {@return how long this attempt would have had to wait to pass} Zero if it passed. What a
     * {@code Retry-After} says.
     */
    public Duration retryAfter() {
      return Duration.ofNanos(retryAfterNanos);
    }

    /**
     * {@return how long until the key's bucket is full again, if nothing more passes} Zero if it is
     * full. What the {@code t} of an HTTP {@code RateLimit} header says of an admitted request.
     */
    public Duration untilFull() {
      return Duration.ofNanos(untilFullNanos);
    }

    Object limiter() {
      return limiter;
    }

    Object key() {
      return key;
    }

    @Override
    public String toString() {
      return (passed ? "passed " : "refused ")
          + weight
          + ", available "
          + available
          + (passed ? "" : ", retry after " + retryAfter())
          + ", full in "
          + untilFull();
    }
  }

  /** Builds an in-process {@link KeyedRateLimiter}. */
  final class Builder<K> {
    /** The most keys the table holds unless set. */
    public static final int DEFAULT_MAX_KEYS = 100_000;

    private long permits;
    private @Nullable Duration period;
    private int burst;
    private int maxKeys = DEFAULT_MAX_KEYS;
    private LongSupplier clock = System::nanoTime;

    Builder() {}

    /**
     * The rate of each key: {@code permits} per {@code period}. Required.
     *
     * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive
     */
    public Builder<K> rate(long permits, Duration period) {
      Objects.requireNonNull(period, "period");
      new Gcra.Rate(permits, period, 1); // checks both, now rather than at build()
      this.permits = permits;
      this.period = period;
      return this;
    }

    /**
     * The most weight a key may pass at once, after a pause, and the largest weight of one request
     * (default: the rate's permits, at most 2^31-1).
     *
     * @throws IllegalArgumentException if {@code burst} is below 1
     */
    public Builder<K> burst(int burst) {
      this.burst = Gcra.checkBurst(burst);
      return this;
    }

    /**
     * The most keys the table holds (default {@value #DEFAULT_MAX_KEYS}); see {@link
     * KeyedRateLimiter} on what happens when it is full.
     *
     * @throws IllegalArgumentException if {@code maxKeys} is below 1
     */
    public Builder<K> maxKeys(int maxKeys) {
      if (maxKeys < 1) {
        throw new IllegalArgumentException("maxKeys must be 1 or more, was " + maxKeys);
      }
      this.maxKeys = maxKeys;
      return this;
    }

    /** The clock, in nanoseconds; for tests. */
    Builder<K> clock(LongSupplier nanoTime) {
      this.clock = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /**
     * {@return the limiter}
     *
     * @throws IllegalStateException if no {@link #rate} was given
     * @throws IllegalArgumentException if the rate is too fine to count exactly with this burst
     */
    public KeyedRateLimiter<K> build() {
      Duration p = period;
      if (p == null) {
        throw new IllegalStateException(
            "a keyed rate limiter needs a rate: call rate(permits, period)");
      }
      int b = burst != 0 ? burst : (int) Math.min(permits, Integer.MAX_VALUE);
      return new PerKeyRateLimiter<>(new Gcra.Rate(permits, p, b), maxKeys, clock);
    }
  }
}
