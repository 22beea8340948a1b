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
 * A read-write lock whose waiters are served in arrival order, that can be locked by blocking or
 * asynchronously: many readers at once, or one writer.
 *
 * <h2>Fairness</h2>
 *
 * <p>Readers and writers, blocking and asynchronous, wait in one queue and are granted in the order
 * they arrive. A queued writer holds back the readers that arrive after it, so writers never
 * starve; the readers queued behind a writer all enter together when it unlocks, up to the next
 * queued writer, so readers never starve either.
 *
 * <p>Who gets the lock when it is let go is the {@link Fairness} the lock was built with. By
 * default ({@link Fairness#boundedBarging()}), when the lock is let go for a blocked waiter that is
 * still waking up, a running reader or writer may take it first ({@link #tryRead()} and {@link
 * #tryWrite()} included), as with a non-fair {@code ReentrantReadWriteLock}, until a waiter has
 * waited past the bound; a reader never gets in past a queued writer that waits for the readers to
 * leave. With {@link Fairness#strictFifo()} the lock is handed over in arrival order at every
 * unlock (task-fair): a request waits for exactly the requests ahead of it, nothing else, and
 * {@link #tryRead()} and {@link #tryWrite()} succeed only when no one is queued.
 *
 * <h2>Downgrading, and no upgrading</h2>
 *
 * <p>A write lock can become a read lock atomically ({@link WriteGuard#downgrade()}): no writer can
 * come in between, and the readers queued at the head enter at once. A read lock cannot be
 * upgraded: two readers that both waited to upgrade would each wait for the other forever. Unlock
 * the read lock and lock for writing instead, and check again what was read.
 *
 * <h2>Cancellation</h2>
 *
 * <p>A request that gives up (its future is cancelled or completed from outside, its timeout
 * expires, its thread is interrupted) leaves the queue at once and never holds the lock afterwards.
 * A writer that gives up while readers wait behind it lets them in at once, and a lock granted at
 * the same moment as the cancellation is handed on, never lost. All of it happens before the
 * request's future completes: its own callbacks find it gone from {@link #queueLength()}.
 *
 * <h2>Memory consistency</h2>
 *
 * <p>Actions in a thread before it unlocks the write lock happen-before actions in another thread
 * after it obtains the read or the write lock; actions before unlocking a read lock happen-before
 * actions after obtaining the write lock.
 *
 * <p>The lock is not reentrant. At most 2<sup>30</sup>-1 readers hold it at once; more wait (and
 * with that many, {@link #readers()} and {@link #isWriteLocked()} take them for a writer). Futures
 * are completed as {@link Mutex}'s are: outside internal locks, in constant stack, or on the {@link
 * Builder#completionExecutor(Executor) completion executor}.
 */
public interface ReadWriteLock {

  /**
   * Creates a read-write lock with no name, whose futures are completed by the unlocking thread.
   */
  static ReadWriteLock create() {
    return builder().build();
  }

  /** Returns a builder for a read-write lock. */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Locks for reading, waiting in the queue as long as it takes.
   *
   * @throws InterruptedException if the thread is interrupted before or while waiting
   */
  Guard read() throws InterruptedException;

  /**
   * Locks for reading, waiting at most {@code timeout}.
   *
   * @throws TimeoutException if the timeout expires first; the request is withdrawn
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws InterruptedException if the thread is interrupted before or while waiting
   */
  Guard read(Duration timeout) throws InterruptedException, TimeoutException;

  /** Requests a read lock without blocking; cancelling the future withdraws the request. */
  CompletableFuture<Guard> readAsync();

  /**
   * Like {@link #readAsync()}, but the future fails with {@link TimeoutException} if the lock is
   * not granted within {@code timeout}.
   *
   * @throws IllegalArgumentException at once if {@code timeout} is negative
   */
  CompletableFuture<Guard> readAsync(Duration timeout);

  /**
   * Locks for reading only if no writer holds the lock and no one is queued (with bounded barging:
   * or the lock was let go for a waiter still waking up, and none has waited past the bound).
   */
  Optional<Guard> tryRead();

  /**
   * Locks for writing, waiting in the queue as long as it takes.
   *
   * @throws InterruptedException if the thread is interrupted before or while waiting
   */
  WriteGuard write() throws InterruptedException;

  /**
   * Locks for writing, waiting at most {@code timeout}.
   *
   * @throws TimeoutException if the timeout expires first; the request is withdrawn
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws InterruptedException if the thread is interrupted before or while waiting
   */
  WriteGuard write(Duration timeout) throws InterruptedException, TimeoutException;

  /** Requests the write lock without blocking; cancelling the future withdraws the request. */
  CompletableFuture<WriteGuard> writeAsync();

  /**
   * Like {@link #writeAsync()}, but the future fails with {@link TimeoutException} if the lock is
   * not granted within {@code timeout}.
   *
   * @throws IllegalArgumentException at once if {@code timeout} is negative
   */
  CompletableFuture<WriteGuard> writeAsync(Duration timeout);

  /**
   * Locks for writing only if no one holds the lock and no one is queued (with bounded barging: or
   * the lock was let go for a waiter still waking up, and none has waited past the bound).
   */
  Optional<WriteGuard> tryWrite();

  /** The number of readers holding the lock now. */
  int readers();

  /** True while a writer holds the lock. */
  boolean isWriteLocked();

  /** The number of requests waiting now, readers and writers. */
  int queueLength();

  /**
   * Runs {@code task} under a read lock, acquired by blocking, and returns its result.
   *
   * @throws X what the task throws
   * @throws InterruptedException if interrupted while waiting (the task does not run)
   */
  @SuppressWarnings("try") // the guard is held for the task, not used by it
  default <T extends @Nullable Object, X extends Exception> T callRead(BlockingTask<T, X> task)
      throws X, InterruptedException {
    try (Guard guard = read()) {
      return task.call();
    }
  }

  /**
   * Runs {@code task} under the write lock, acquired by blocking, and returns its result.
   *
   * @throws X what the task throws
   * @throws InterruptedException if interrupted while waiting (the task does not run)
   */
  @SuppressWarnings("try") // the guard is held for the task, not used by it
  default <T extends @Nullable Object, X extends Exception> T callWrite(BlockingTask<T, X> task)
      throws X, InterruptedException {
    try (Guard guard = write()) {
      return task.call();
    }
  }

  /**
   * Locks for reading asynchronously, runs {@code task}, and holds the lock until its stage
   * completes; as {@link Mutex#callAsync(Supplier)}.
   */
  default <T extends @Nullable Object> CompletableFuture<T> callReadAsync(
      Supplier<? extends CompletionStage<T>> task) {
    return Tasks.callAsync(readAsync(), Guard::unlock, task);
  }

  /**
   * Locks for writing asynchronously, runs {@code task}, and holds the lock until its stage
   * completes; as {@link Mutex#callAsync(Supplier)}.
   */
  default <T extends @Nullable Object> CompletableFuture<T> callWriteAsync(
      Supplier<? extends CompletionStage<T>> task) {
    return Tasks.callAsync(writeAsync(), Guard::unlock, task);
  }

  /** A held write lock, which can become a read lock. */
  interface WriteGuard extends Guard {
    /**
     * Turns this write lock into a read lock, atomically: no writer can take the lock in between,
     * and the readers queued at the head of the queue enter at once. This guard is unlocked by it;
     * the returned one holds the read lock.
     *
     * @throws IllegalStateException if this guard was unlocked or downgraded already
     */
    Guard downgrade();
  }

  /** Builds a read-write lock. Each setter checks its argument at once. */
  final class Builder extends GrantingBuilder<Builder> {
    private Fairness fairness = Fairness.boundedBarging();

    private Builder() {}

    /**
     * Who gets the lock when it is let go while others wait: {@link Fairness#boundedBarging()} by
     * default (readers and writers that are running take a free lock ahead of the queue, until the
     * oldest waiter has waited past the bound), or {@link Fairness#strictFifo()} (task-fair: every
     * request in arrival order, at the pace of thread wake-ups). See {@link Fairness} for what each
     * promises and costs.
     */
    public Builder fairness(Fairness fairness) {
      this.fairness = Objects.requireNonNull(fairness, "fairness");
      return this;
    }

    /** Builds the read-write lock. */
    public ReadWriteLock build() {
      return new FifoReadWriteLock(
          name, fairness, completionExecutor, leakTracker(FifoReadWriteLock.describe(name)));
    }
  }
}
