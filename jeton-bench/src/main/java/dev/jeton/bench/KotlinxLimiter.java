package dev.jeton.bench;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import kotlin.Result;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlin.coroutines.intrinsics.IntrinsicsKt;
import kotlinx.coroutines.sync.Semaphore;
import kotlinx.coroutines.sync.SemaphoreKt;
import org.jspecify.annotations.Nullable;

/**
 * kotlinx.coroutines' {@link Semaphore}, driven from Java. Its {@code acquire} is a suspend
 * function: compiled, it takes a {@link Continuation} and either returns at once (the permit was
 * free) or returns {@code COROUTINE_SUSPENDED} and resumes the continuation later, on the thread
 * whose {@code release} hands it the permit. It has no blocking acquire.
 */
final class KotlinxLimiter implements Limiter {
  private static final Object SUSPENDED = IntrinsicsKt.getCOROUTINE_SUSPENDED();

  private final Semaphore semaphore;

  KotlinxLimiter(int limit) {
    this.semaphore = SemaphoreKt.Semaphore(limit, 0);
  }

  @Override
  public Object acquire() {
    throw new UnsupportedOperationException("kotlinx Semaphore has no blocking acquire");
  }

  /**
   * The suspend {@code acquire}, called as a coroutine that already exists would call it: with its
   * own continuation, here a shared one that must never be resumed, since a free permit is taken
   * without suspending.
   */
  @Override
  public Object acquireUncontended() {
    if (semaphore.acquire(NeverResumed.INSTANCE) == SUSPENDED) {
      throw new IllegalStateException("kotlinx Semaphore.acquire suspended on a free permit");
    }
    return HELD;
  }

  @Override
  public @Nullable Object tryAcquire() {
    return semaphore.tryAcquire() ? HELD : null;
  }

  /**
   * The suspend {@code acquire} as a {@link CompletableFuture}: the future is itself the
   * continuation, completed with {@link #HELD} when the semaphore resumes it.
   */
  @Override
  public CompletionStage<?> acquireAsync() {
    ResumingFuture future = new ResumingFuture();
    if (semaphore.acquire(future) != SUSPENDED) {
      future.complete(HELD);
    }
    return future;
  }

  @Override
  public void release(@Nullable Object handle) {
    semaphore.release();
  }

  @Override
  public int available() {
    return semaphore.getAvailablePermits();
  }

  @Override
  public Object unwrap() {
    return semaphore;
  }

  /**
   * A future that is also the continuation of one suspended {@code acquire}. It adds no fields to
   * {@link CompletableFuture}, so its size is that of a plain future. The context is empty: with no
   * dispatcher in it, the semaphore resumes it directly on the releasing thread.
   */
  static final class ResumingFuture extends CompletableFuture<Object>
      implements Continuation<Unit> {
    @Override
    public CoroutineContext getContext() {
      return EmptyCoroutineContext.INSTANCE;
    }

    @Override
    public void resumeWith(Object result) {
      if (result instanceof Result.Failure failure) {
        completeExceptionally(failure.exception);
      } else {
        complete(HELD);
      }
    }
  }

  /** The continuation of an acquire that cannot suspend. */
  private enum NeverResumed implements Continuation<Unit> {
    INSTANCE;

    @Override
    public CoroutineContext getContext() {
      return EmptyCoroutineContext.INSTANCE;
    }

    @Override
    public void resumeWith(Object result) {
      throw new IllegalStateException("an uncontended acquire was resumed: " + result);
    }
  }
}
