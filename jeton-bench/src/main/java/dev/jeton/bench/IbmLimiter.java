package dev.jeton.bench;

import com.ibm.asyncutil.locks.FairAsyncSemaphore;
import com.ibm.asyncutil.util.StageSupport;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * asyncutil's {@link FairAsyncSemaphore}: asynchronous only (no blocking acquire). Its stages
 * complete with {@code null}, which is the handle passed to {@link #release}.
 */
final class IbmLimiter implements Limiter {
  /** What {@code acquire} returns when it succeeds at once: a shared, completed stage. */
  private static final CompletionStage<Void> DONE = StageSupport.voidStage();

  private final FairAsyncSemaphore semaphore;

  IbmLimiter(int limit) {
    this.semaphore = new FairAsyncSemaphore(limit);
  }

  @Override
  public Object acquire() {
    throw new UnsupportedOperationException("FairAsyncSemaphore has no blocking acquire");
  }

  /** Its asynchronous acquire, which returns an already completed stage when a permit is free. */
  @Override
  public Object acquireUncontended() {
    CompletionStage<Void> stage = semaphore.acquire(1);
    if (stage != DONE && !stage.toCompletableFuture().isDone()) {
      throw new IllegalStateException("FairAsyncSemaphore.acquire(1) did not complete at once");
    }
    return HELD;
  }

  @Override
  public @Nullable Object tryAcquire() {
    return semaphore.tryAcquire(1) ? HELD : null;
  }

  @Override
  public CompletionStage<?> acquireAsync() {
    return semaphore.acquire(1);
  }

  @Override
  public void release(@Nullable Object handle) {
    semaphore.release(1);
  }

  @Override
  public int available() {
    return (int) semaphore.getAvailablePermits();
  }

  @Override
  public Object unwrap() {
    return semaphore;
  }
}
