package dev.jeton.internal.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The future of a queued request, which withdraws the request when it is completed from outside.
 *
 * <p>This is the one rule every Jeton primitive follows, in-process, machine-wide or fleet-wide:
 * <b>the first completion of the future wins</b>. A completion from outside ({@link #cancel},
 * {@link #complete}, {@link #completeExceptionally}, {@link #completeAsync}, and so {@code
 * orTimeout} and {@code completeOnTimeout}) that wins withdraws the request, once, on the
 * completing thread, so that the request leaves its queue. The owner completes the future only
 * through {@link #settle} and {@link #settleExceptionally}, which never withdraw; when {@code
 * settle} loses to a completion from outside it returns {@code false}, and the grant it was handing
 * over is given back (a permit granted at the same moment as a cancel is released, never lost).
 *
 * <p>A caller that cancels and sees {@code true} therefore never holds the grant, whatever raced
 * with it; the price is that a grant may be made and given straight back. Which completion wins is
 * decided by a claim made before anything else, so that a completion from outside can take the
 * request out of its queue before the future completes: the in-process queues do ({@link
 * #withdrawAndComplete}), so that the callbacks of a cancelled or timed-out future see the request
 * gone. Others (machine-wide, fleet-wide) complete first and withdraw after.
 *
 * <p>The outcome is <em>delivered</em> once the completion that won has returned: every callback
 * registered before it, and every stage that follows them synchronously, has run. {@link
 * #whenDelivered} waits for that, which is what a {@code Scope} needs before it cancels a stage
 * that depends on the request (cancelling it earlier would skip a step that a grant had reached).
 *
 * <p>A timed request can carry its timer here: {@link #expectTimer()} before the request is queued,
 * {@link #setTimer} once it is started, {@link #stopTimer()} when the request leaves. Storing and
 * stopping are both atomic on one field, so whichever comes second cancels the timer, and a timer
 * never keeps a finished request reachable. Obtruding a value ({@code obtrudeValue}, {@code
 * obtrudeException}) would bypass all of this, and is refused ({@link ObtrudeRefusingFuture}).
 *
 * @param <T> the value a granted request completes with
 */
public abstract class WithdrawingFuture<T extends @Nullable Object>
    extends ObtrudeRefusingFuture<T> {
  /*
   * State
   *
   * `claim` goes from OPEN to OWNER (settle) or to OUTSIDE (a completion from outside), once, by
   * CAS: its winner, and only its winner, completes the future. `delivery` goes from null (or the
   * actions whenDelivered queued, chained into one Runnable) to DELIVERED, once, when the winner's
   * completion has returned; the actions queued run then, on that thread.
   *
   * Invariants:
   *   W1. The future is completed only by the winner of the claim (obtrude is refused), after it
   *       won: a completion from outside after its withdrawal, or before it for the classes that
   *       keep the default order; the owner through settle.
   *   W2. DELIVERED is set only after the future is done and its completion's callbacks have run;
   *       an action given to whenDelivered runs exactly once, at or after that moment.
   *   W3. While `claim` is OUTSIDE and the future is not done yet, the winner is withdrawing: a
   *       second cancel on another thread waits for it so that it can answer whether the future
   *       is cancelled. For a request that window holds no user code (a lock, an unlink); for a
   *       scope's task it holds the callbacks of the waits the task's cancel withdraws, and a
   *       cancel made from one of those, on the withdrawing thread (`withdrawer`), answers at
   *       once, false (not cancelled yet), rather than wait for itself.
   */

  /** {@link #timer} of a timed request whose timer is not stored yet. */
  private static final Future<?> PENDING = new CompletableFuture<Void>();

  /** {@link #timer} once the request has left: a timer stored now is cancelled at once. */
  private static final Future<?> STOPPED = new CompletableFuture<Void>();

  /** {@link #delivery} once the outcome is delivered. */
  private static final Object DELIVERED = new Object();

  private static final int OPEN = 0;
  private static final int OWNER = 1;
  private static final int OUTSIDE = 2;

  private static final VarHandle TIMER;
  private static final VarHandle CLAIM;
  private static final VarHandle DELIVERY;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      TIMER = lookup.findVarHandle(WithdrawingFuture.class, "timer", Future.class);
      CLAIM = lookup.findVarHandle(WithdrawingFuture.class, "claim", int.class);
      DELIVERY = lookup.findVarHandle(WithdrawingFuture.class, "delivery", Object.class);
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

  /** OPEN, OWNER or OUTSIDE; see the state comment. Changed by CAS (CLAIM). */
  private volatile int claim;

  /** Null, the actions waiting for the delivery, or DELIVERED. Changed by CAS (DELIVERY). */
  private volatile @Nullable Object delivery;

  /**
   * The thread withdrawing the request for a completion from outside, while it does (W3). Plain:
   * only that thread's own read of it matters; another thread may see null and waits, rightly.
   */
  private @Nullable Thread withdrawer;

  /** For subclasses. */
  protected WithdrawingFuture() {}

  /**
   * Takes the request out of its queue after a completion from outside won and completed the
   * future: the default order of {@link #withdrawAndComplete}. Called at most once, on the thread
   * that completed the future, after the future is done. A subclass overrides this or {@code
   * withdrawAndComplete}; this one throws.
   *
   * @param timedOut true if the future was completed with a {@link TimeoutException} (its own
   *     timer, or {@code orTimeout}), false for a cancel or any other completion from outside
   */
  protected void withdraw(boolean timedOut) {
    throw new UnsupportedOperationException(
        getClass().getName() + " overrides neither withdraw nor withdrawAndComplete");
  }

  /**
   * Withdraws the request and completes the future ({@code complete} does that), for a completion
   * from outside that won the claim. Called once, on the completing thread. By default completes
   * first and then calls {@link #withdraw}, so the future's callbacks run before the request has
   * left; a subclass that can take the request out first overrides this to withdraw, give back a
   * grant that came first, and then run {@code complete}, so that the callbacks find the request
   * gone.
   *
   * @param timedOut as for {@link #withdraw}
   * @param complete completes the future with the outcome the outside gave
   */
  protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
    complete.run();
    withdraw(timedOut);
  }

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
    return settleBy(() -> super.complete(value));
  }

  /** Fails the future from inside, without withdrawing; false if it was claimed already. */
  public final boolean settleExceptionally(Throwable failure) {
    return settleBy(() -> super.completeExceptionally(failure));
  }

  private boolean settleBy(Runnable complete) {
    if (!CLAIM.compareAndSet(this, OPEN, OWNER)) {
      return false;
    }
    try {
      complete.run();
    } finally {
      delivered();
    }
    return true;
  }

  /**
   * True once a completion from outside has won, even before the future is done (while the request
   * is withdrawn): the request is given up, and the owner's settle will fail.
   */
  public final boolean isGivenUp() {
    return claim == OUTSIDE;
  }

  /**
   * Runs {@code action} once the outcome is delivered: the completion that won has returned, so the
   * callbacks registered before it, and the stages that follow them synchronously, have run. At
   * once, on this thread, if it is so already; else on the thread that completes the future.
   */
  public final void whenDelivered(Runnable action) {
    for (; ; ) {
      Object d = delivery;
      if (d == DELIVERED) {
        action.run();
        return;
      }
      Runnable next = d == null ? action : both((Runnable) d, action);
      if (DELIVERY.compareAndSet(this, d, next)) {
        return;
      }
    }
  }

  private static Runnable both(Runnable first, Runnable second) {
    return () -> {
      first.run();
      second.run();
    };
  }

  private void delivered() {
    Object waiting = DELIVERY.getAndSet(this, DELIVERED);
    if (waiting instanceof Runnable) {
      ((Runnable) waiting).run();
    }
  }

  /**
   * Cancels the future, as {@link CompletableFuture#cancel} does (a {@link CancellationException}
   * as its result; true if it is now cancelled, by this call or before), and withdraws the request
   * if this call is the one that completed it.
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    // Not super.cancel: it answers true for a future cancelled before, too, which would
    // withdraw again (a channel's send reported its value twice when cancelled twice). A
    // CancellationException as the result is what super.cancel stores, so nothing else differs.
    if (completeFromOutside(
        false, () -> super.completeExceptionally(new CancellationException()))) {
      return true;
    }
    while (claim == OUTSIDE && !isDone() && withdrawer != Thread.currentThread()) {
      Thread.yield(); // another completion from outside is withdrawing the request (W3)
    }
    return isCancelled();
  }

  @Override
  public boolean complete(T value) {
    return completeFromOutside(false, () -> super.complete(value));
  }

  @Override
  public boolean completeExceptionally(Throwable failure) {
    return completeFromOutside(
        failure instanceof TimeoutException, () -> super.completeExceptionally(failure));
  }

  /**
   * As {@link CompletableFuture#completeAsync}, a completion from outside: the JDK's own sets the
   * result without calling {@link #complete}, which would leave the request queued.
   */
  @Override
  public CompletableFuture<T> completeAsync(Supplier<? extends T> supplier, Executor executor) {
    Objects.requireNonNull(supplier, "supplier");
    Objects.requireNonNull(executor, "executor");
    executor.execute(
        () -> {
          T value;
          try {
            value = supplier.get();
          } catch (Throwable failure) {
            completeExceptionally(failure);
            return;
          }
          complete(value);
        });
    return this;
  }

  /** Claims the request for a completion from outside; if won, withdraws it and completes. */
  private boolean completeFromOutside(boolean timedOut, Runnable complete) {
    if (!mayCompleteFromOutside() || !CLAIM.compareAndSet(this, OPEN, OUTSIDE)) {
      return false;
    }
    withdrawer = Thread.currentThread();
    try {
      stopTimer();
      withdrawAndComplete(timedOut, complete);
    } finally {
      withdrawer = null;
      if (!isDone()) {
        complete.run(); // a withdrawal that threw must not leave a claimed future pending for ever
      }
      delivered();
    }
    return true;
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
