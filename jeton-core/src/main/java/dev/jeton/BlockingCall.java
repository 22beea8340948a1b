package dev.jeton;

import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * A blocking call run by an executor, which can be cancelled: before it starts (then it never
 * runs), or while it runs (its thread is interrupted). {@link #settled()} completes when the call
 * has really finished: after a cancel, only once the thread has left the call, so that "settled"
 * means no more work is being done.
 *
 * <p>The runner is published in {@code state}: NEW, then the running thread, then DONE; or
 * CANCELLED from NEW; or INTERRUPTING then CANCELLED from a running thread. A cancel interrupts the
 * thread only while it is the state, and the runner, on leaving, waits out an interrupt in progress
 * and clears it, so that an interrupt never leaks to the executor's next task.
 */
final class BlockingCall<R extends @Nullable Object> implements Runnable {
  private static final Object NEW = "NEW";
  private static final Object DONE = "DONE";
  private static final Object INTERRUPTING = "INTERRUPTING";
  private static final Object CANCELLED = "CANCELLED";

  private final Callable<? extends R> call;
  private final AtomicReference<Object> state = new AtomicReference<>(NEW);
  private final CompletableFuture<R> settled = new CompletableFuture<>();

  BlockingCall(Callable<? extends R> call) {
    this.call = call;
  }

  CompletableFuture<R> settled() {
    return settled;
  }

  @Override
  public void run() {
    Thread me = Thread.currentThread();
    if (!state.compareAndSet(NEW, me)) {
      return; // cancelled before it started: settled already
    }
    R value = null;
    Throwable failure = null;
    try {
      value = call.call();
    } catch (Throwable t) {
      failure = t;
    }
    if (!state.compareAndSet(me, DONE)) {
      while (state.get() == INTERRUPTING) {
        Thread.onSpinWait(); // the canceller is between the state change and the interrupt
      }
      Thread.interrupted(); // ours, not the executor's next task's
      settled.completeExceptionally(new CancellationException("cancelled while running"));
      return;
    }
    if (failure != null) {
      settled.completeExceptionally(failure);
    } else {
      settled.complete(value);
    }
  }

  /** Cancels the call: it never starts, or its thread is interrupted; no-op once it is done. */
  void cancel() {
    while (true) {
      Object current = state.get();
      if (current == NEW) {
        if (state.compareAndSet(NEW, CANCELLED)) {
          settled.completeExceptionally(new CancellationException("cancelled before it started"));
          return;
        }
      } else if (current instanceof Thread) {
        if (state.compareAndSet(current, INTERRUPTING)) {
          ((Thread) current).interrupt();
          state.set(CANCELLED);
          return;
        }
      } else {
        return; // done, or already cancelled
      }
    }
  }
}
