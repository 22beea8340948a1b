package dev.jeton;

import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters behind {@link SemaphoreStats}. Counts touched on the fast path are {@link
 * LongAdder}s; queue and wait figures change only under the semaphore's lock.
 */
final class StatsRecorder {
  final LongAdder acquired = new LongAdder();
  final LongAdder released = new LongAdder();
  final LongAdder rejected = new LongAdder();

  // Guarded by the semaphore's lock.
  private long timedOut;
  private long cancelled;
  private int peakQueueLength;
  private long totalWaitNanos;
  private long maxWaitNanos;

  void queued(int queueLength) {
    peakQueueLength = Math.max(peakQueueLength, queueLength);
  }

  void granted(long waitNanos) {
    acquired.increment();
    totalWaitNanos += waitNanos;
    maxWaitNanos = Math.max(maxWaitNanos, waitNanos);
  }

  void withdrawn(int reason) {
    if (reason == WaitNode.TIMED_OUT) {
      timedOut++;
    } else {
      cancelled++;
    }
  }

  SemaphoreStats snapshot(int queueLength) {
    return new SemaphoreStats(
        acquired.sum(),
        released.sum(),
        timedOut,
        cancelled,
        rejected.sum(),
        queueLength,
        peakQueueLength,
        Duration.ofNanos(totalWaitNanos),
        Duration.ofNanos(maxWaitNanos));
  }
}
