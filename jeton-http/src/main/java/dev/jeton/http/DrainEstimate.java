package dev.jeton.http;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Estimates how long a rejected client should wait before retrying, from the observed drain rate.
 */
final class DrainEstimate {
  /*
   * The rule (documented on AdmissionControl and in the README):
   *
   *   Retry-After = ceil((ahead + 1) / rate) seconds, clamped to [1, maxRetryAfter],
   *   rate = busy / latency  (completions per second),
   *
   * where `ahead` is the number of requests queued in front of the one rejected, `busy` the
   * number of permits held now (at least 1), and `latency` the smoothed mean time a ticket is
   * held. With no completion observed yet, 1 s.
   *
   * Why the rate comes from Little's law (completions per second = busy / latency) rather than
   * from counting completions per second over a window: a windowed count measures demand, not
   * capacity. After an idle minute it is near zero, and the first rejections of a spike would
   * send clients away for the maximum; while the server is saturated (the only time we reject)
   * the two agree. It also needs no timer: the latencies are folded in when a rejection reads
   * them.
   *
   * Completions only add to two LongAdders (cheap, contention-free). A reader folds the samples
   * since the last fold into an exponentially weighted mean, at most every FOLD_NANOS, under
   * a tryLock: a reader that finds the lock taken uses the mean as it is. `meanNanos` is NaN until
   * the first fold that saw a completion; after that it is always a finite, non-negative number.
   */
  static final long FOLD_NANOS = 100_000_000L;
  static final double WEIGHT = 0.25; // of each new batch's mean

  private final LongSupplier ticker;
  private final LongAdder completions = new LongAdder();
  private final LongAdder heldNanos = new LongAdder();
  private final ReentrantLock folding = new ReentrantLock();

  @GuardedBy("folding")
  private long foldedCompletions;

  @GuardedBy("folding")
  private long foldedNanos;

  private volatile long lastFold; // written under `folding`, read without it to skip the lock
  private volatile double meanNanos = Double.NaN;

  DrainEstimate(LongSupplier ticker) {
    this.ticker = ticker;
    this.lastFold = ticker.getAsLong();
  }

  /** A ticket was held for {@code nanos} and has now given its permit back. */
  void completed(long nanos) {
    heldNanos.add(Math.max(0, nanos));
    completions.increment();
  }

  /**
   * The Retry-After, in seconds, for a request with {@code ahead} requests queued in front of it,
   * while {@code busy} permits are held.
   */
  long retryAfterSeconds(int busy, int ahead, long maxSeconds) {
    return seconds(meanNanos(), busy, ahead, maxSeconds);
  }

  /** The smoothed mean time a ticket is held, in nanoseconds; NaN before the first completion. */
  double meanNanos() {
    double mean = meanNanos;
    boolean due = Double.isNaN(mean) || ticker.getAsLong() - lastFold >= FOLD_NANOS;
    if (!due || !folding.tryLock()) {
      return mean;
    }
    try {
      long now = ticker.getAsLong();
      long count = completions.sum();
      long nanos = heldNanos.sum();
      // The two sums are not one snapshot: a completion may be in one and not yet the other.
      // The next fold takes whatever this one missed, so nothing is lost, only shifted.
      long newCount = count - foldedCompletions;
      if (newCount > 0 && (Double.isNaN(mean) || now - lastFold >= FOLD_NANOS)) {
        double batch = Math.max(0, nanos - foldedNanos) / (double) newCount;
        mean = Double.isNaN(mean) ? batch : mean + WEIGHT * (batch - mean);
        meanNanos = mean;
        foldedCompletions = count;
        foldedNanos = nanos;
        lastFold = now;
      }
      return mean;
    } finally {
      folding.unlock();
    }
  }

  /** The rule, as a pure function: see the comment at the top. */
  static long seconds(double meanNanos, int busy, int ahead, long maxSeconds) {
    if (Double.isNaN(meanNanos)) {
      return 1;
    }
    double rate = Math.max(1, busy) * 1e9 / Math.max(1.0, meanNanos); // completions per second
    double seconds = Math.ceil((Math.max(0, ahead) + 1.0) / rate);
    return (long) Math.max(1, Math.min(maxSeconds, seconds));
  }
}
