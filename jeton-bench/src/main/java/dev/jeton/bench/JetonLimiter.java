package dev.jeton.bench;

import dev.jeton.Fairness;
import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/** Jeton's in-process semaphore; the handle is its {@link Permit}. */
final class JetonLimiter implements Limiter {
  private final Semaphore semaphore;

  JetonLimiter(int limit, Fairness fairness) {
    this.semaphore = Semaphore.builder().limit(limit).fairness(fairness).build();
  }

  JetonLimiter(int limit, Fairness fairness, LeakDetection leaks) {
    this.semaphore =
        Semaphore.builder().limit(limit).fairness(fairness).leakDetection(leaks).build();
  }

  @Override
  public Object acquire() throws InterruptedException {
    return semaphore.acquire(1);
  }

  @Override
  public @Nullable Object tryAcquire() {
    return semaphore.tryAcquire(1).orElse(null);
  }

  @Override
  public CompletionStage<?> acquireAsync() {
    return semaphore.acquireAsync(1);
  }

  @Override
  public void release(@Nullable Object handle) {
    ((Permit) Objects.requireNonNull(handle)).release();
  }

  @Override
  public int available() {
    return semaphore.available();
  }

  @Override
  public Object unwrap() {
    return semaphore;
  }
}
