package dev.jeton.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A request of a {@link RedisSemaphore} in progress: a future whose state goes once, by
 * compare-and-set, from pending to granted or withdrawn, so that a grant and a cancel racing each
 * other agree on the winner. Withdrawing (cancel, a failure, a timeout) sends a cancel before
 * the future completes, so that what the caller does next already sees the request gone.
 *
 * <p>Fields: {@code state} changes only by compare-and-set; {@code id} is changed only by the
 * semaphore when it resubmits the request under a new id; the rest are volatile flags and times
 * written by whichever thread handles a reply, a wake-up or the timer, each read as a whole.
 */
final class RedisRequest<T extends @Nullable Object> extends CompletableFuture<T> {
  private static final int PENDING = 0;
  private static final int GRANTED = 1;
  private static final int WITHDRAWN = 2;

  private final RedisSemaphore semaphore;
  final int weight; // 0: awaitIdle
  final boolean blocking;
  final @Nullable Duration timeout;
  volatile String id = RedisSemaphore.newId();
  final AtomicInteger state = new AtomicInteger(PENDING);
  volatile boolean answered;
  /**
   * When the latest request for this id that Redis answered "queued" was sent (at first, when
   * the id was first sent): a grant announced by wake-up came after it.
   */
  volatile long queuedSince;
  volatile boolean timeoutDue;
  volatile @Nullable Throwable lastFailure;
  volatile @Nullable ScheduledFuture<?> timer;

  RedisRequest(
      RedisSemaphore semaphore, int weight, boolean blocking, @Nullable Duration timeout) {
    this.semaphore = semaphore;
    this.weight = weight;
    this.blocking = blocking;
    this.timeout = timeout;
  }

  boolean isPending() {
    return state.get() == PENDING;
  }

  @SuppressWarnings("unchecked") // T is Lease, or Void for awaitIdle (granted with null)
  boolean grant(@Nullable Lease lease) {
    if (!state.compareAndSet(PENDING, GRANTED)) {
      return false;
    }
    semaphore.settled(this);
    stopTimer();
    deliver(() -> super.complete((T) lease));
    return true;
  }

  void queued() {
    answered = true;
    if (timeoutDue) {
      timedOut();
    }
  }

  void attemptFailed(Throwable failure) {
    lastFailure = failure;
    answered = true;
    if (timeoutDue) {
      timedOut();
    }
  }

  void timerFired() {
    if (answered) {
      timedOut();
    } else {
      timeoutDue = true; // decide when the first answer (or failure) comes
    }
  }

  private void timedOut() {
    TimeoutException e =
        new TimeoutException(
            "timed out after " + timeout + " waiting for " + weight + " permits of semaphore '"
                + semaphore.name() + "'");
    Throwable cause = lastFailure;
    if (cause != null) {
      e.initCause(cause);
    }
    fail(e);
  }

  /** Fails the request from inside (timeout, close, too big, Redis). */
  void fail(Throwable failure) {
    if (withdraw()) {
      deliver(() -> super.completeExceptionally(failure));
    }
  }

  private boolean withdraw() {
    if (!state.compareAndSet(PENDING, WITHDRAWN)) {
      return false;
    }
    stopTimer();
    semaphore.withdrawn(this);
    return true;
  }

  private void stopTimer() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
  }

  private void deliver(Runnable completion) {
    if (blocking) {
      completion.run(); // a thread waits in get(): no callbacks to keep off Lettuce's threads
      return;
    }
    try {
      semaphore.completionExecutor().execute(completion);
    } catch (RuntimeException rejected) {
      completion.run(); // never drop a completion
    }
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (withdraw()) {
      return super.cancel(mayInterruptIfRunning);
    }
    return isCancelled();
  }

  @Override
  public boolean completeExceptionally(Throwable failure) {
    return withdraw() && super.completeExceptionally(failure);
  }

  @Override
  public boolean complete(T value) {
    return withdraw() && super.complete(value);
  }
}
