package dev.jeton;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A mutual-exclusion lock that can be locked by blocking or asynchronously: for a critical section
 * that spans asynchronous steps, where {@code synchronized} and {@code ReentrantLock} cannot
 * follow, and for a hot one, as fast as theirs.
 *
 * <p>Each lock is a {@link Guard}, unlocked once, by any thread. The mutex is not reentrant: a
 * holder that locks again waits for itself forever (or until its timeout).
 *
 * <h2>Ordering and cancellation</h2>
 *
 * <p>Blocking and asynchronous requests share one queue, served in the order they arrive. Who gets
 * a free lock ahead of the queue is the {@link Fairness} the mutex was built with: by default
 * ({@link Fairness#boundedBarging()}) a running thread may take it, {@link #tryLock()} included,
 * ahead of the waiter woken to take it, until a waiter has waited longer than the bound (1 ms), and
 * then the lock is handed to the waiters in arrival order until those that waited that long are
 * served; with {@link Fairness#strictFifo()} the lock is always handed to the oldest waiter, and
 * {@link #tryLock()} succeeds only when the mutex is free and no one is queued. An asynchronous
 * request first in line is handed the lock in both modes. A request that gives up (its future is
 * cancelled or completed from outside, its timeout expires, its thread is interrupted) leaves the
 * queue at once and never holds the lock afterwards; a lock granted at the same moment as the
 * cancellation is handed on to the next in line. Both happen before the request's future completes:
 * its own callbacks find it gone from {@link #queueLength()}, and such a lock handed on.
 *
 * <h2>Memory consistency</h2>
 *
 * <p>Actions in a thread before it unlocks happen-before actions in another thread after it obtains
 * the lock.
 *
 * <h2>Futures</h2>
 *
 * <p>Futures are never completed while an internal lock is held; by default by the thread whose
 * unlock granted them, in constant stack however long a chain of callbacks lock and unlock. {@link
 * Builder#completionExecutor(Executor)} moves completions to an executor instead.
 */
public interface Mutex {

  /** Creates a mutex with no name, whose futures are completed by the unlocking thread. */
  static Mutex create() {
    return builder().build();
  }

  /** Returns a builder for a mutex. */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Locks, waiting in the queue as long as it takes.
   *
   * @throws InterruptedException if the thread is interrupted before or while waiting; the request
   *     is withdrawn
   */
  Guard lock() throws InterruptedException;

  /**
   * Locks, waiting at most {@code timeout}.
   *
   * @throws TimeoutException if the timeout expires first; the request is withdrawn
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws InterruptedException if the thread is interrupted before or while waiting
   */
  Guard lock(Duration timeout) throws InterruptedException, TimeoutException;

  /**
   * Requests the lock without blocking. The future completes with the guard when the lock is
   * granted (at once, if {@link #tryLock()} would have taken it). Cancelling the future, or
   * completing it from outside, withdraws the request.
   */
  CompletableFuture<Guard> lockAsync();

  /**
   * Like {@link #lockAsync()}, but the future fails with {@link TimeoutException} if the lock is
   * not granted within {@code timeout}; the request is then withdrawn.
   *
   * @throws IllegalArgumentException at once if {@code timeout} is negative
   */
  CompletableFuture<Guard> lockAsync(Duration timeout);

  /**
   * Locks only if the mutex is free (with {@link Fairness#strictFifo()}: and no one is queued; with
   * bounded barging: and no waiter has waited past the bound); else returns empty at once.
   */
  Optional<Guard> tryLock();

  /** True while someone holds the lock. */
  boolean isLocked();

  /** The number of requests waiting now. */
  int queueLength();

  /**
   * Runs {@code task} while holding the lock, acquired by blocking, and returns its result. The
   * lock is let go when the task returns or throws; what the task throws is thrown as it is.
   *
   * @throws X what the task throws
   * @throws InterruptedException if the thread is interrupted while waiting for the lock (the task
   *     does not run), or if the task throws it
   */
  @SuppressWarnings("try") // the guard is held for the task, not used by it
  default <T extends @Nullable Object, X extends Exception> T call(BlockingTask<T, X> task)
      throws X, InterruptedException {
    try (Guard guard = lock()) {
      return task.call();
    }
  }

  /**
   * Locks asynchronously, then starts {@code task} and holds the lock until the stage it returns
   * completes. The returned future completes with the task's outcome, after the lock is let go.
   * Cancelling the returned future before the lock is granted withdraws the request, and the task
   * never starts; once it has started, the lock is held until its stage has completed.
   */
  default <T extends @Nullable Object> CompletableFuture<T> callAsync(
      Supplier<? extends CompletionStage<T>> task) {
    return Tasks.callAsync(lockAsync(), Guard::unlock, task);
  }

  /** Builds a mutex. Each setter checks its argument at once. */
  final class Builder extends GrantingBuilder<Builder> {
    private Fairness fairness = Fairness.boundedBarging();

    private Builder() {}

    /**
     * Who gets the lock when it is let go while others wait: {@link Fairness#boundedBarging()} by
     * default (a newcomer may take a free lock ahead of the waiters, until one has waited 1 ms), or
     * {@link Fairness#strictFifo()} (every request in arrival order, at the pace of thread
     * wake-ups). See {@link Fairness} for what each promises and costs.
     */
    public Builder fairness(Fairness fairness) {
      this.fairness = Objects.requireNonNull(fairness, "fairness");
      return this;
    }

    /** Builds the mutex. */
    public Mutex build() {
      return new FifoMutex(
          name, completionExecutor, fairness, leakTracker(FifoMutex.describe(name)));
    }
  }
}
