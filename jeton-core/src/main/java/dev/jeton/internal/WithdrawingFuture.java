package dev.jeton.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The future of a queued request, which withdraws the request when it is completed from outside.
 *
 * <p>This is the one rule every Jeton primitive follows, in-process, machine-wide or fleet-wide:
 * <b>the first completion of the future wins</b>. A completion from outside ({@link #cancel},
 * {@link #complete}, {@link #completeExceptionally}, and so {@code orTimeout} and {@code
 * completeOnTimeout}) that wins calls {@link #withdraw}, once, on the completing thread, so that
 * the request leaves its queue. The owner completes the future only through {@link #settle} and
 * {@link #settleExceptionally}, which never withdraw; when {@code settle} loses to a completion
 * from outside it returns {@code false}, and the owner gives back what it was handing over (a
 * permit granted at the same moment as a cancel is released, never lost).
 *
 * <p>A caller that cancels and sees {@code true} therefore never holds the grant, whatever raced
 * with it; the price is that a grant may be made and given straight back. The withdrawal comes
 * after the completion, so the callbacks of the future run before it: a callback that looks at
 * the queue can still see the request there. A primitive that counts its queued requests (a
 * barrier's arrivals) skips those whose future is done.
 *
 * <p>A timed request can carry its timer here: {@link #expectTimer()} before the request is
 * queued, {@link #setTimer} once it is started, {@link #stopTimer()} when the request leaves.
 * Storing and stopping are both atomic on one field, so whichever comes second cancels the timer,
 * and a timer never keeps a finished request reachable. Obtruding a value ({@code obtrudeValue},
 * {@code obtrudeException}) bypasses all of this and is not supported.
 *
 * @param <T> the value a granted request completes with
 */
public abstract class WithdrawingFuture<T extends @Nullable Object> extends CompletableFuture<T> {
  /** {@link #timer} of a timed request whose timer is not stored yet. */
  private static final Future<?> PENDING = new CompletableFuture<Void>();

  /** {@link #timer} once the request has left: a timer stored now is cancelled at once. */
  private static final Future<?> STOPPED = new CompletableFuture<Void>();

  private static final VarHandle TIMER;

  static {
    try {
      TIMER =
          MethodHandles.lookup().findVarHandle(WithdrawingFuture.class, "timer", Future.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * Null for an untimed request; for a timed one {@link #PENDING}, then the timer, then {@link
   * #STOPPED}, or straight from PENDING to STOPPED when the request leaves before its timer is
   * stored. Changed by CAS and get-and-set (TIMER).
   */
  private volatile @Nullable Future<?> timer;

  /** For subclasses. */
  protected WithdrawingFuture() {}

  /**
   * Takes the request out of its queue after a completion from outside won. Called at most once,
   * on the thread that completed the future, after the future is done.
   *
   * @param timedOut true if the future was completed with a {@link TimeoutException} (its own
   *     timer, or {@code orTimeout}), false for a cancel or any other completion from outside
   */
  protected abstract void withdraw(boolean timedOut);

  /**
   * Whether a completion from outside may go ahead: false once the owner has claimed the request
   * for an outcome it cannot take back (a channel's value handed over), so that the owner's
   * completion wins. Called before each completion from outside; true by default.
   */
  protected boolean mayCompleteFromOutside() {
    return true;
  }

  /** Completes the future from inside; false if a completion from outside won first. */
  public final boolean settle(T value) {
    return super.complete(value);
  }

  /** Fails the future from inside, without withdrawing; false if it was done already. */
  public final boolean settleExceptionally(Throwable failure) {
    return super.completeExceptionally(failure);
  }

  /**
   * Cancels the future, as {@link CompletableFuture#cancel} does (a {@link CancellationException}
   * as its result; true if it is now cancelled, by this call or before), and withdraws the
   * request if this call is the one that completed it.
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (!mayCompleteFromOutside()) {
      return false;
    }
    // Not super.cancel: it answers true for a future cancelled before, too, which would
    // withdraw again (a channel's send reported its value twice when cancelled twice). A
    // CancellationException as the result is what super.cancel stores, so nothing else differs.
    var unused = won(super.completeExceptionally(new CancellationException()), false);
    return isCancelled();
  }

  @Override
  public boolean complete(T value) {
    return mayCompleteFromOutside() && won(super.complete(value), false);
  }

  @Override
  public boolean completeExceptionally(Throwable failure) {
    return mayCompleteFromOutside()
        && won(super.completeExceptionally(failure), failure instanceof TimeoutException);
  }

  private boolean won(boolean completed, boolean timedOut) {
    if (completed) {
      stopTimer();
      withdraw(timedOut);
    }
    return completed;
  }

  // ---------------------------------------------------------------- the timer

  /** Marks a timed request, before it is queued: its timer will be stored by {@link #setTimer}. */
  public final void expectTimer() {
    timer = PENDING;
  }

  /** Stores the timer of a queued timed request; cancels it if the request has left already. */
  public final void setTimer(Future<?> started) {
    if (!TIMER.compareAndSet(this, PENDING, started)) {
      started.cancel(false);
    }
  }

  /** The request has left its queue: cancels its timer, now or as it is stored. */
  public final void stopTimer() {
    Future<?> t = timer;
    if (t == null || t == STOPPED) {
      return; // untimed, or stopped already
    }
    t = (Future<?>) TIMER.getAndSet(this, STOPPED);
    if (t != PENDING && t != STOPPED && t != null) {
      t.cancel(false);
    }
  }
}
