package dev.jeton.bench;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The floor: a bare {@link AtomicLong} counter taken by CAS and given back by an atomic add. No
 * queue, no fairness, no handle object; any counting semaphore does at least this much. Its {@link
 * #acquire()} spins, so it is only meaningful uncontended; it has no asynchronous acquire.
 */
final class CasFloorLimiter implements Limiter {
  private final AtomicLong free;

  CasFloorLimiter(int limit) {
    this.free = new AtomicLong(limit);
  }

  @Override
  public Object acquire() {
    for (; ; ) {
      Object handle = tryAcquire();
      if (handle != null) {
        return handle;
      }
      Thread.onSpinWait();
    }
  }

  @Override
  public @Nullable Object tryAcquire() {
    long f = free.get();
    while (f > 0) {
      if (free.compareAndSet(f, f - 1)) {
        return HELD;
      }
      f = free.get();
    }
    return null;
  }

  @Override
  public CompletionStage<?> acquireAsync() {
    throw new UnsupportedOperationException("cas-floor has no async acquire");
  }

  @Override
  public void release(@Nullable Object handle) {
    free.getAndIncrement();
  }

  @Override
  public int available() {
    return (int) free.get();
  }

  @Override
  public Object unwrap() {
    return free;
  }
}
