package dev.jeton.bench;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import org.jspecify.annotations.Nullable;

/** {@link java.util.concurrent.Semaphore}, fair or not. It has no asynchronous acquire. */
final class JucLimiter implements Limiter {
  private final Semaphore semaphore;

  JucLimiter(int limit, boolean fair) {
    this.semaphore = new Semaphore(limit, fair);
  }

  @Override
  public Object acquire() throws InterruptedException {
    semaphore.acquire();
    return HELD;
  }

  @Override
  public @Nullable Object tryAcquire() {
    return semaphore.tryAcquire() ? HELD : null;
  }

  @Override
  public CompletionStage<?> acquireAsync() {
    throw new UnsupportedOperationException("java.util.concurrent.Semaphore has no async acquire");
  }

  @Override
  public void release(@Nullable Object handle) {
    semaphore.release();
  }

  @Override
  public int available() {
    return semaphore.availablePermits();
  }

  @Override
  public Object unwrap() {
    return semaphore;
  }
}
