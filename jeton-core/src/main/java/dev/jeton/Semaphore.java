package dev.jeton;

import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A counting semaphore with weighted requests, served in strict arrival order, that can be acquired
 * by blocking or asynchronously.
 *
 * <p>A semaphore has a <em>limit</em>: the number of permits it hands out in all. A request asks
 * for a number of permits (its weight), from 1 to the limit, and is granted a {@link Permit}
 * holding them; releasing the permit gives them back.
 *
 * <h2>Ordering</h2>
 *
 * <p>Requests are granted in the order they arrive, whatever their weight and whether they block or
 * wait on a future: blocking and asynchronous requests share one queue. A large request at the head
 * of the queue holds back the smaller ones behind it, so large requests never starve. {@link
 * #tryAcquire(int)} never jumps ahead of a queued request: it succeeds only when no one is queued
 * and enough permits are free.
 *
 * <p>That is the {@link Fairness#strictFifo()} of every implementation. The in-process semaphore
 * can be built with {@link Fairness#boundedBarging()} instead ({@link Builder#fairness}): permits
 * released for a blocked waiter that is still waking up may then go to a running request first,
 * {@code tryAcquire} included, until a waiter has waited longer than the bound; while the waiter at
 * the head needs more permits than are free, newcomers queue behind it.
 *
 * <h2>Cancellation</h2>
 *
 * <p>A request that gives up (its future is cancelled, its timeout expires, its thread is
 * interrupted) leaves the queue at once; if it was at the head, the requests behind it are examined
 * at once. A permit granted at the same moment as the cancellation is given back, never lost.
 * In-process, both happen before the request's future completes: its own callbacks find it gone
 * from {@link #queueLength()}, and such a permit back.
 *
 * <h2>Changing the limit and closing</h2>
 *
 * <p>{@link #setLimit(int)} never blocks: growing grants waiters that now fit; shrinking takes
 * effect as permits come back, and a queued request larger than the new limit fails with {@link
 * IllegalArgumentException}. {@link #close()} fails every queued request with {@link
 * SemaphoreClosedException} and refuses new ones; permits already held stay valid, and their
 * release still counts toward {@link #awaitIdle()}.
 *
 * <h2>Bad input</h2>
 *
 * <p>A request for fewer than 1 or more than {@link #limit()} permits, a negative limit or a
 * negative timeout throws {@link IllegalArgumentException} at once, with a message naming the
 * value: nothing waits on a request that could never be granted.
 *
 * <h2>Memory consistency</h2>
 *
 * <p>Actions in a thread before it releases a permit happen-before actions in another thread after
 * an acquire that obtains those permits.
 *
 * <h2>Futures</h2>
 *
 * <p>Futures are never completed while an internal lock is held. By default a future is completed
 * by the thread whose release granted it; a chain of releases that grant futures whose callbacks
 * release again runs in constant stack. {@link Builder#completionExecutor(Executor)} moves
 * completions to an executor instead.
 *
 * <p>Implementations: {@link #create(int)} and {@link #builder()} make the in-process semaphore;
 * other Jeton modules provide machine-wide and fleet-wide ones behind the same interface.
 */
public interface Semaphore extends AutoCloseable {

  /**
   * Creates an in-process semaphore with the given limit, no name, statistics off, and futures
   * completed by the releasing thread.
   *
   * @throws IllegalArgumentException if {@code limit} is negative
   */
  static Semaphore create(int limit) {
    return builder().limit(limit).build();
  }

  /** Returns a builder for an in-process semaphore. */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Acquires {@code permits}, waiting in the queue as long as it takes.
   *
   * @throws IllegalArgumentException if {@code permits} is below 1 or above the limit, or if the
   *     limit is lowered below it while the request waits
   * @throws InterruptedException if the thread is interrupted before or while waiting; the request
   *     is withdrawn
   * @throws SemaphoreClosedException if the semaphore is closed, or is closed while waiting
   */
  Permit acquire(int permits) throws InterruptedException;

  /**
   * Acquires {@code permits}, waiting at most {@code timeout}.
   *
   * @throws TimeoutException if the timeout expires first; the request is withdrawn
   * @throws IllegalArgumentException if {@code permits} is out of range or {@code timeout} is
   *     negative
   * @throws InterruptedException if the thread is interrupted before or while waiting
   * @throws SemaphoreClosedException if the semaphore is closed, or is closed while waiting
   */
  Permit acquire(int permits, Duration timeout) throws InterruptedException, TimeoutException;

  /**
   * Acquires {@code permits} only if no one is queued and enough permits are free now (with bounded
   * barging: or the waiter at the head is being woken for permits that cover this request too, and
   * none has waited past the bound).
   *
   * @return the permit, or empty if the request would have had to wait
   * @throws IllegalArgumentException if {@code permits} is below 1 or above the limit
   * @throws SemaphoreClosedException if the semaphore is closed
   */
  Optional<Permit> tryAcquire(int permits);

  /**
   * Requests {@code permits} without blocking. The future completes with the permit when it is
   * granted (at once, if it can be). Cancelling the future, or completing it exceptionally,
   * withdraws the request; a permit granted concurrently is given back. {@code obtrudeValue} and
   * {@code obtrudeException}, which would bypass that, throw {@link UnsupportedOperationException}.
   *
   * <p>If the semaphore is closed, or closed while the request waits, the future fails with {@link
   * SemaphoreClosedException}; if the limit is lowered below the request, with {@link
   * IllegalArgumentException}.
   *
   * @throws IllegalArgumentException at once if {@code permits} is below 1 or above the limit
   */
  CompletableFuture<Permit> acquireAsync(int permits);

  /**
   * Like {@link #acquireAsync(int)}, but the future fails with {@link TimeoutException} if the
   * permit is not granted within {@code timeout}; the request is then withdrawn.
   *
   * @throws IllegalArgumentException at once if {@code permits} is out of range or {@code timeout}
   *     is negative
   */
  CompletableFuture<Permit> acquireAsync(int permits, Duration timeout);

  /** The number of permits this semaphore hands out in all. */
  int limit();

  /**
   * The number of permits free now. It is negative while permits taken before the limit was lowered
   * are still held. Free permits may be waiting for a larger request at the head of the queue.
   */
  int available();

  /** The number of requests waiting now, {@link #awaitIdle()} waiters included. */
  int queueLength();

  /**
   * Changes the limit, without blocking. Growing it grants queued requests that now fit; shrinking
   * it takes effect as held permits come back. Queued requests larger than the new limit fail with
   * {@link IllegalArgumentException}.
   *
   * @throws IllegalArgumentException if {@code limit} is negative
   */
  void setLimit(int limit);

  /**
   * Returns a future that completes once every permit is free, as if a request for the whole limit
   * had joined the queue and been given straight back when granted. It queues like any request, so
   * requests that arrive after it wait behind it. It keeps working after {@link #close()},
   * completing when the last held permit is released. Cancelling the future withdraws it.
   */
  CompletableFuture<Void> awaitIdle();

  /**
   * Closes the semaphore: queued requests fail with {@link SemaphoreClosedException}, new ones are
   * refused, and permits already held stay valid until released. {@link #awaitIdle()} waiters are
   * not failed. Closing twice does nothing.
   */
  @Override
  void close();

  /** The statistics, if they were enabled with {@link Builder#statistics(boolean)}. */
  Optional<SemaphoreStats> stats();

  /**
   * Runs {@code task} while holding {@code permits}, acquired by blocking, and returns its result.
   * The permits are released when the task returns or throws. What the task throws is thrown as it
   * is, with its own type: {@code s.call(1, () -> Files.readString(path))} throws {@code
   * IOException} and {@code InterruptedException}, and nothing else checked.
   *
   * @throws X what the task throws
   * @throws InterruptedException if the thread is interrupted while waiting for the permits (the
   *     task does not run), or if the task throws it
   * @throws IllegalArgumentException if {@code permits} is below 1 or above the limit
   * @throws SemaphoreClosedException if the semaphore is closed, or is closed while waiting
   */
  @SuppressWarnings("try") // the permit is held for the task, not used by it
  default <T extends @Nullable Object, X extends Exception> T call(
      int permits, BlockingTask<T, X> task) throws X, InterruptedException {
    try (Permit permit = acquire(permits)) {
      return task.call();
    }
  }

  /**
   * Acquires {@code permits} asynchronously, then starts {@code task} and holds the permits until
   * the stage it returns completes. The returned future completes with the task's outcome, after
   * the permits are released.
   *
   * <p>Cancelling the returned future (or letting a timeout fail it) before the permits are granted
   * withdraws the request, and the task never starts. Once the task has started, the permits stay
   * held until its stage has really completed: the limit bounds real work, not just futures. The
   * task's stage is not cancelled.
   *
   * @throws IllegalArgumentException at once if {@code permits} is out of range
   */
  default <T extends @Nullable Object> CompletableFuture<T> callAsync(
      int permits, Supplier<? extends CompletionStage<T>> task) {
    return Tasks.callAsync(acquireAsync(permits), task);
  }

  /**
   * Wraps an asynchronous function so that every call runs under {@code permits}, as by {@link
   * #callAsync(int, Supplier)}.
   *
   * @throws IllegalArgumentException at once if {@code permits} is out of range
   */
  default <A extends @Nullable Object, R extends @Nullable Object>
      Function<A, CompletableFuture<R>> wrapAsync(
          int permits, Function<? super A, ? extends CompletionStage<R>> function) {
    Arguments.checkWeight(permits, limit());
    return argument -> callAsync(permits, () -> function.apply(argument));
  }

  /**
   * Builds an in-process semaphore. Each setter checks its argument at once.
   *
   * <pre>{@code
   * Semaphore db = Semaphore.builder().name("db").limit(10).statistics(true).build();
   * }</pre>
   */
  final class Builder extends GrantingBuilder<Builder> {
    private int limit = -1;
    private boolean statistics;
    private Fairness fairness = Fairness.strictFifo();

    private Builder() {}

    /**
     * The number of permits the semaphore hands out in all. Required.
     *
     * @throws IllegalArgumentException if {@code limit} is negative or above 2<sup>30</sup>-1
     */
    public Builder limit(int limit) {
      FifoSemaphore.checkLimit(limit);
      this.limit = limit;
      return this;
    }

    /**
     * Who gets permits that come free while others wait: {@link Fairness#strictFifo()} by default
     * (every request in arrival order, so a large request is never starved by small ones; each
     * handoff waits for the next thread to wake up), or {@link Fairness#boundedBarging()} (a
     * running request takes free permits ahead of the queue, so a hot semaphore stays busy, until
     * the oldest waiter has waited past the bound). See {@link Fairness} for what each promises and
     * costs.
     */
    public Builder fairness(Fairness fairness) {
      this.fairness = Objects.requireNonNull(fairness, "fairness");
      return this;
    }

    /** Records {@link SemaphoreStats}; off by default, and free when off. */
    public Builder statistics(boolean enabled) {
      this.statistics = enabled;
      return this;
    }

    /**
     * Builds the semaphore.
     *
     * @throws IllegalStateException if no limit was set
     */
    public Semaphore build() {
      if (limit < 0) {
        throw new IllegalStateException("limit is required: call limit(int) before build()");
      }
      return new FifoSemaphore(
          name,
          limit,
          fairness,
          completionExecutor,
          statistics,
          leakTracker(FifoSemaphore.describe(FifoSemaphore.SEMAPHORE, name)));
    }
  }
}
