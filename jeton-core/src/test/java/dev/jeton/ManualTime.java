package dev.jeton;

import dev.jeton.internal.engine.Deadlines;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;

/**
 * A clock and timers that move only when a test says so: {@link #advance} runs each timer due, at
 * its own moment (the clock reads its due time while it runs), in the order they are due. For the
 * rate limiter's exact bounds, which a real clock can only approximate.
 */
final class ManualTime implements LongSupplier, Deadlines {
  private record Due(long at, long order, Runnable task, CompletableFuture<Void> handle) {}

  private final PriorityQueue<Due> due =
      new PriorityQueue<>(
          (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.order, b.order));
  private long now = 1_000_000_000_000L; // an arbitrary start, far from 0 and from overflow
  private long scheduled;

  @Override
  public synchronized long getAsLong() {
    return now;
  }

  @Override
  public synchronized Future<?> schedule(Runnable task, long delayNanos) {
    CompletableFuture<Void> handle = new CompletableFuture<>();
    due.add(new Due(now + Math.max(0, delayNanos), scheduled++, task, handle));
    return handle;
  }

  /** A limiter on this clock and these timers. */
  FifoRateLimiter limiter(long permits, java.time.Duration period, int burst) {
    return new FifoRateLimiter(null, permits, period, burst, true, null, this, this);
  }

  /** Moves the clock {@code nanos} ahead, running every timer due on the way, each at its time. */
  void advance(long nanos) {
    long target;
    synchronized (this) {
      target = now + nanos;
    }
    while (true) {
      Due next;
      synchronized (this) {
        next = due.peek();
        if (next == null || next.at - target > 0) {
          now = target;
          return;
        }
        due.poll();
        if (next.at - now > 0) {
          now = next.at;
        }
      }
      if (!next.handle.isCancelled()) {
        next.task.run(); // without the monitor, as a timer thread runs it
      }
    }
  }

  /** The timers set and not yet run nor cancelled. */
  synchronized long pending() {
    return due.stream().filter(d -> !d.handle.isCancelled()).count();
  }
}
