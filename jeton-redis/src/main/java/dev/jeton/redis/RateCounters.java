package dev.jeton.redis;

import dev.jeton.RateLimiterStats;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one {@link RedisRateLimiter} handle has seen of its own requests, if it keeps statistics;
 * the same record as the in-process limiter's. Each count is updated on its own (adders and
 * atomics), so a snapshot may be taken between the updates of one request.
 */
class RateCounters {
  /** The counters of a handle that keeps none. */
  static final RateCounters NONE = new RateCounters();

  /** Counters that count. */
  static RateCounters counting() {
    return new Counting();
  }

  void admitted(long waitedNanos) {}

  void timedOut() {}

  void cancelled() {}

  void rejected() {}

  void queued(int length) {}

  RateLimiterStats snapshot(int queueLength) {
    throw new IllegalStateException("this handle keeps no statistics");
  }

  private static final class Counting extends RateCounters {
    private final LongAdder admitted = new LongAdder();
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder cancelled = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder totalWait = new LongAdder();
    private final AtomicLong maxWait = new AtomicLong();
    private final AtomicInteger peakQueue = new AtomicInteger();

    @Override
    void admitted(long waitedNanos) {
      admitted.increment();
      totalWait.add(waitedNanos);
      maxWait.accumulateAndGet(waitedNanos, Math::max);
    }

    @Override
    void timedOut() {
      timedOut.increment();
    }

    @Override
    void cancelled() {
      cancelled.increment();
    }

    @Override
    void rejected() {
      rejected.increment();
    }

    @Override
    void queued(int length) {
      peakQueue.accumulateAndGet(length, Math::max);
    }

    @Override
    RateLimiterStats snapshot(int queueLength) {
      return new RateLimiterStats(
          admitted.sum(),
          timedOut.sum(),
          cancelled.sum(),
          rejected.sum(),
          queueLength,
          peakQueue.get(),
          Duration.ofNanos(totalWait.sum()),
          Duration.ofNanos(maxWait.get()));
    }
  }
}
