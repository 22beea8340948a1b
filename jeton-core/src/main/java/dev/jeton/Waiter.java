package dev.jeton;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * A queued request of a {@link FifoSemaphore}: a node of its waiter queue.
 *
 * <p>A waiter is either blocking (it has a {@link #thread}, which parks until {@link #status}
 * leaves {@link #WAITING}) or asynchronous (it has a {@link #future}, completed by {@link
 * #deliver}). A waiter with {@link #permits} 0 is an {@code awaitIdle} request: it waits for the
 * whole limit and is given straight back.
 *
 * <p>The status leaves {@code WAITING} exactly once, under the semaphore's lock, and the waiter
 * leaves the queue at the same moment. Everything that follows (unparking, completing the future)
 * happens after the lock is released, in {@link #deliver}.
 */
final class Waiter {
  static final int WAITING = 0;
  static final int GRANTED = 1;
  static final int CANCELLED = 2;
  static final int TIMED_OUT = 3;
  static final int FAILED_CLOSED = 4;
  static final int FAILED_LIMIT = 5;

  private static final VarHandle PREWOKEN;

  static {
    try {
      PREWOKEN = MethodHandles.lookup().findVarHandle(Waiter.class, "prewoken", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The permits requested; 0 for an {@code awaitIdle} request. */
  final int permits;

  final @Nullable Thread thread;
  final @Nullable WaiterFuture<?> future;

  /** Read by the blocked thread without the lock. */
  volatile int status;

  /** Queue links, guarded by the semaphore's lock; {@code next} also chains delivered waiters. */
  @Nullable Waiter prev;

  @Nullable Waiter next;

  /** {@code System.nanoTime()} when queued, kept only when statistics are on. */
  long queuedAt;

  /**
   * Set by the one releaser that unparks this thread ahead of its grant (see "Blocking waiters" in
   * FifoSemaphore). Releasers race for it without the lock, so it is claimed by CAS: {@link
   * #claimPrewake}.
   */
  private volatile boolean prewoken;

  private Waiter(int permits, @Nullable Thread thread, @Nullable WaiterFuture<?> future) {
    this.permits = permits;
    this.thread = thread;
    this.future = future;
  }

  /** True for the one caller that is to unpark this blocked waiter ahead of its grant. */
  boolean claimPrewake() {
    return !prewoken && PREWOKEN.compareAndSet(this, false, true);
  }

  static Waiter blocking(int permits) {
    return new Waiter(permits, Thread.currentThread(), null);
  }

  /** An asynchronous request; a {@code timed} one gets its timer after it is queued. */
  static Waiter async(FifoSemaphore semaphore, int permits, boolean timed) {
    WaiterFuture<Permit> future = new WaiterFuture<>(semaphore);
    if (timed) {
      future.timeout = WaiterFuture.PENDING;
    }
    return attached(new Waiter(permits, null, future));
  }

  static Waiter idle(FifoSemaphore semaphore) {
    return attached(new Waiter(0, null, new WaiterFuture<Void>(semaphore)));
  }

  private static Waiter attached(Waiter w) {
    java.util.Objects.requireNonNull(w.future).waiter = w;
    return w;
  }

  @SuppressWarnings("unchecked")
  CompletableFuture<Permit> permitFuture() {
    return (CompletableFuture<Permit>) java.util.Objects.requireNonNull(future);
  }

  @SuppressWarnings("unchecked")
  CompletableFuture<Void> idleFuture() {
    return (CompletableFuture<Void>) java.util.Objects.requireNonNull(future);
  }

  /**
   * Tells the requester its outcome, after the lock is released: unparks a blocked thread, or
   * completes the future. A permit whose future was completed by someone else first (a
   * cancellation that raced with the grant) is given back.
   */
  void deliver() {
    if (thread != null) {
      LockSupport.unpark(thread);
      return;
    }
    WaiterFuture<?> f = java.util.Objects.requireNonNull(future);
    FifoSemaphore semaphore = f.semaphore; // this waiter's own, whoever delivers it
    f.stopTimer();
    if (status == GRANTED) {
      if (permits == 0) {
        idleFuture().complete(null);
      } else {
        LocalPermit permit = new LocalPermit(semaphore, permits);
        if (!permitFuture().complete(permit)) {
          permit.release();
        }
      }
    } else {
      f.fail(semaphore.failure(status, permits));
    }
  }

  /**
   * The future of an asynchronous request. Completing it from outside (cancel, a timeout, {@code
   * completeExceptionally}) withdraws the request from the queue.
   */
  static final class WaiterFuture<T> extends CompletableFuture<T> {
    /** {@link #timeout} of a timed request whose timer is not stored yet. */
    static final Future<?> PENDING = new CompletableFuture<Void>();

    /** {@link #timeout} once the request has left: a timer stored now is cancelled at once. */
    private static final Future<?> STOPPED = new CompletableFuture<Void>();

    private static final VarHandle TIMEOUT;

    static {
      try {
        TIMEOUT =
            MethodHandles.lookup().findVarHandle(WaiterFuture.class, "timeout", Future.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    final FifoSemaphore semaphore;
    @Nullable Waiter waiter;

    /**
     * The timer that fails a timed request: null for an untimed request; for a timed one {@link
     * #PENDING}, then the timer ({@link #setTimer}), then {@link #STOPPED} ({@link #stopTimer}),
     * or straight from PENDING to STOPPED when the request leaves before its timer is stored.
     * Both moves are atomic, so whichever of storing and stopping comes second cancels the timer.
     */
    volatile @Nullable Future<?> timeout;

    WaiterFuture(FifoSemaphore semaphore) {
      this.semaphore = semaphore;
    }

    /** Stores the timer of a queued timed request; cancels it if the request has left already. */
    void setTimer(Future<?> timer) {
      if (!TIMEOUT.compareAndSet(this, PENDING, timer)) {
        timer.cancel(false);
      }
    }

    /** The request has left the queue: cancels its timer, now or as it is stored. */
    void stopTimer() {
      Future<?> timer = timeout;
      if (timer == null || timer == STOPPED) {
        return; // untimed, or stopped already
      }
      timer = (Future<?>) TIMEOUT.getAndSet(this, STOPPED);
      if (timer != PENDING && timer != STOPPED && timer != null) {
        timer.cancel(false);
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      if (cancelled) {
        withdraw(Waiter.CANCELLED);
      }
      return cancelled;
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
      boolean completed = super.completeExceptionally(failure);
      if (completed) {
        withdraw(failure instanceof TimeoutException ? Waiter.TIMED_OUT : Waiter.CANCELLED);
      }
      return completed;
    }

    /** Fails the future from inside the semaphore, without trying to withdraw. */
    void fail(Throwable failure) {
      super.completeExceptionally(failure);
    }

    private void withdraw(int reason) {
      stopTimer();
      Waiter w = waiter;
      if (w != null) {
        semaphore.withdraw(w, reason);
      }
    }
  }
}
