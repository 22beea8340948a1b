package dev.jeton.internal.engine;

import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters behind a primitive's statistics. Counts touched on the fast path are {@link
 * LongAdder}s; queue and wait figures change only under the wait queue's lock.
 */
public final class StatsRecorder {
  private final LongAdder acquired = new LongAdder();
  private final LongAdder released = new LongAdder();
  private final LongAdder rejected = new LongAdder();

  // Guarded by the wait queue's lock. Not @GuardedBy: the lock is the queue's, which the recorder
  // does not know, so the annotation could not name it; the queue calls queued, granted and
  // withdrawn from its own @GuardedBy("lock") methods, and a primitive takes the lock for snapshot.
  private long timedOut;
  private long cancelled;
  private int peakQueueLength;
  private long totalWaitNanos;
  private long maxWaitNanos;

  /** The figures of a snapshot, in the order the client's statistics type takes them. */
  @FunctionalInterface
  public interface Snapshot<S> {
    S of(
        long acquired,
        long released,
        long timedOut,
        long cancelled,
        long rejected,
        int queueLength,
        int peakQueueLength,
        Duration totalWait,
        Duration maxWait);
  }

  /** A grant made without waiting. */
  public void countAcquired() {
    acquired.increment();
  }

  /** A grant given back. */
  public void countReleased() {
    released.increment();
  }

  /** A try that found nothing free. */
  public void countRejected() {
    rejected.increment();
  }

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

  /** The figures now, as {@code snapshot} makes them. Lock held. */
  public <S> S snapshot(int queueLength, Snapshot<S> snapshot) {
    return snapshot.of(
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
