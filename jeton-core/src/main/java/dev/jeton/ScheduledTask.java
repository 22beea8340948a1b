package dev.jeton;

import dev.jeton.internal.engine.RankOrder;
import dev.jeton.internal.engine.WithdrawingFuture;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A task of a {@link PriorityScheduler}, which is also the future its caller holds: being the
 * future lets {@link #cancel(boolean)} tell an interrupting cancel from a polite one, which a
 * callback on a plain {@code CompletableFuture} cannot see. It is a {@link WithdrawingFuture}: the
 * first completion wins, and a completion from outside ({@code cancel}, {@code complete}, {@code
 * completeExceptionally}, {@code completeAsync}, {@code orTimeout}) takes a queued task out of the
 * queue before the future completes; the scheduler completes it only through {@code settle}, once
 * the work has finished. Obtrude is refused.
 *
 * <p>Its place in the queue (its priority, when it was queued and its arrival: {@link RankOrder})
 * is fixed at submission. Once the scheduler starts it, {@link #start()} returns a future that
 * completes when the work has really finished: a blocking task's thread has left the call; an async
 * task's stage has completed.
 */
final class ScheduledTask<T extends @Nullable Object> extends WithdrawingFuture<T>
    implements RankOrder.Ranked {
  private final int priority;
  private final long enqueuedNanos;
  private final long seq;
  private final @Nullable Callable<T> blocking;
  private final @Nullable Executor executor;
  private final @Nullable Supplier<? extends CompletionStage<T>> async;

  /** Takes this task out of its scheduler's queue if it is still there. */
  private final Consumer<ScheduledTask<?>> leaveQueue;

  /** Set before the blocking call is handed to the executor; read by {@link #cancel}. */
  private volatile @Nullable BlockingCall<T> call;

  private ScheduledTask(
      int priority,
      long enqueuedNanos,
      long seq,
      @Nullable Callable<T> blocking,
      @Nullable Executor executor,
      @Nullable Supplier<? extends CompletionStage<T>> async,
      Consumer<ScheduledTask<?>> leaveQueue) {
    this.priority = priority;
    this.enqueuedNanos = enqueuedNanos;
    this.seq = seq;
    this.blocking = blocking;
    this.executor = executor;
    this.async = async;
    this.leaveQueue = leaveQueue;
  }

  static <T extends @Nullable Object> ScheduledTask<T> blocking(
      int priority,
      long enqueuedNanos,
      long seq,
      Callable<T> task,
      Executor executor,
      Consumer<ScheduledTask<?>> leaveQueue) {
    return new ScheduledTask<>(priority, enqueuedNanos, seq, task, executor, null, leaveQueue);
  }

  static <T extends @Nullable Object> ScheduledTask<T> async(
      int priority,
      long enqueuedNanos,
      long seq,
      Supplier<? extends CompletionStage<T>> task,
      Consumer<ScheduledTask<?>> leaveQueue) {
    return new ScheduledTask<>(priority, enqueuedNanos, seq, null, null, task, leaveQueue);
  }

  @Override
  public int priority() {
    return priority;
  }

  @Override
  public long enqueuedNanos() {
    return enqueuedNanos;
  }

  @Override
  public long seq() {
    return seq;
  }

  /**
   * Cancels the future; {@code true} also interrupts a blocking task that is running. A task still
   * queued leaves the queue first.
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    BlockingCall<T> running = call;
    if (cancelled && mayInterruptIfRunning && running != null) {
      running.cancel();
    }
    return cancelled;
  }

  /**
   * A completion from outside won: a task still queued leaves the queue, then the future completes.
   */
  @Override
  protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
    leaveQueue.accept(this); // a task started has left already: nothing to do
    complete.run();
  }

  /**
   * Starts the work, unless this future was completed from outside first. The last check that it
   * was not is made just before the task's own code is called, on the thread that calls it.
   */
  CompletableFuture<T> start() {
    Callable<T> task = blocking;
    if (task == null) {
      return startAsync(Objects.requireNonNull(async));
    }
    BlockingCall<T> c = new BlockingCall<>(() -> callUnlessWithdrawn(task));
    call = c;
    try {
      Objects.requireNonNull(executor).execute(c);
    } catch (RuntimeException rejected) {
      return CompletableFuture.failedFuture(rejected);
    }
    return c.settled();
  }

  private CompletableFuture<T> startAsync(Supplier<? extends CompletionStage<T>> task) {
    if (isGivenUp()) {
      return CompletableFuture.failedFuture(
          new CancellationException("completed from outside before it started"));
    }
    CompletionStage<T> stage;
    try {
      stage = Objects.requireNonNull(task.get(), "the task returned a null stage");
    } catch (Throwable failure) {
      return CompletableFuture.failedFuture(failure);
    }
    return Tasks.settled(stage);
  }

  private T callUnlessWithdrawn(Callable<T> task) {
    if (isGivenUp()) {
      throw new CancellationException("completed from outside before it started");
    }
    try {
      return task.call();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new CompletionException(e); // unwrapped again before the caller sees it
    }
  }

  /** Completes this future with the work's outcome, if nobody completed it first. */
  @SuppressWarnings("NullAway") // value is the work's T: null only if T allows it
  void finish(@Nullable T value, @Nullable Throwable failure) {
    var unused = failure == null ? settle(value) : settleExceptionally(Tasks.unwrap(failure));
  }
}
