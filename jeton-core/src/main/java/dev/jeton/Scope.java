package dev.jeton;

import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A scope that owns the tasks started in it: none outlives it, and cancelling it cancels them all
 * and then runs its teardown hooks.
 *
 * <pre>{@code
 * try (Scope scope = Scope.open()) {
 *   CompletableFuture<User> user = scope.fork(() -> users.find(id));
 *   CompletableFuture<List<Order>> orders = scope.fork(() -> orders.of(id));
 *   scope.join();                           // both done, or the first failure thrown
 *   return new Page(user.join(), orders.join());
 * }                                         // close(): cancels what is left, waits for it
 * }</pre>
 *
 * <h2>Tasks</h2>
 *
 * <p>{@link #fork} runs a blocking task on the scope's executor (by default a new thread per task:
 * a virtual thread on JDK 21 and later, a platform daemon thread on JDK 17); {@link #forkAsync}
 * calls a supplier on the calling thread and follows the stage it returns. Each returns a future of
 * the task's result; cancelling that future, or completing it from outside in any other way,
 * cancels the task and the scopes opened in it, and withdraws the task's Jeton waits before the
 * future completes (a grant that came first is given back), so that its callbacks find them gone.
 *
 * <h2>Cancellation</h2>
 *
 * <p>A scope is cancelled by {@link #cancel()}, by its deadline, by the cancellation of its parent,
 * by {@link #close()} while tasks still run, and (unless it is a {@linkplain Builder#supervisor()
 * supervisor}) by the first task that fails. Cancelling interrupts the blocking tasks, cancels the
 * stages of the asynchronous ones, and withdraws every Jeton wait that a task of the scope has
 * queued ({@link Semaphore}, {@link Mutex}, {@link ReadWriteLock}, {@link Barrier}, {@link
 * Channel}, {@link Select}): a blocking one by the interrupt, an asynchronous one by cancelling its
 * future. Once every task has ended, the {@linkplain #teardown teardown hooks} run, in reverse
 * order of registration, once; then the scope has ended. A task that ignores its interrupt, or a
 * stage that ignores its cancel, keeps the scope from ending until it finishes: the scope never
 * lets a task outlive it.
 *
 * <p>A grant racing with the cancel is never lost. The waits are withdrawn first (a grant that came
 * first is given back, by the one rule of every Jeton wait), and an asynchronous task's stage is
 * cancelled only once the outcome of each wait has been delivered: the steps of the stage that a
 * grant reached synchronously have run by then. So in {@code scope.forkAsync(() ->
 * mutex.lockAsync().thenAccept(Guard::unlock))} a lock granted at the moment of the cancel is
 * unlocked by the {@code thenAccept}. What the scope does not track it cannot protect: a step that
 * a grant runs on an executor of its own ({@code thenAcceptAsync}), or a wait queued by a later
 * step on another thread, can be skipped by the stage's cancel, as cancelling any {@code
 * CompletableFuture} skips its dependents; to hold a grant across such steps, use {@code
 * callAsync}, which lets it go whatever happens to the stage.
 *
 * <p>A fork after cancellation is refused: its task never runs and its future fails with a {@link
 * CancellationException} saying so. A fork after {@link #close()} throws {@link
 * IllegalStateException}.
 *
 * <h2>Nesting</h2>
 *
 * <p>A scope opened inside a task of another scope is its child: cancelling the parent, or the fork
 * future of that task, cancels the child, and the parent does not end before the child has. The
 * thread that opens a scope is not one of its tasks; only tasks are inside it ({@link #current()}).
 *
 * <h2>Memory consistency</h2>
 *
 * <p>Actions of a task happen-before {@link #join()} or {@link #close()} returns, and before the
 * teardown hooks run.
 */
public interface Scope extends AutoCloseable {

  /**
   * Opens a scope that cancels its other tasks on the first failure, with no deadline, on the
   * default executor; inside a task of another scope, as its child.
   */
  static Scope open() {
    return builder().open();
  }

  /** Returns a builder for a scope. */
  static Builder builder() {
    return new Builder();
  }

  /** The scope of the task running on this thread, if this thread is running one. */
  static Optional<Scope> current() {
    ScopeTask<?> task = ScopeTask.current();
    return task == null ? Optional.empty() : Optional.of(task.scope);
  }

  /**
   * Runs {@code task} on the scope's executor.
   *
   * @return the task's result; cancelling it cancels the task (interrupting it if it runs) and the
   *     scopes opened in it. A task cancelled while it ran fails with a {@link
   *     CancellationException}, whatever it threw on its interrupt; one forked after the scope was
   *     cancelled fails so at once, never run. Completing it from outside in any other way ({@code
   *     complete}, {@code orTimeout}, ...) cancels the task too; either way the task's Jeton waits
   *     are withdrawn before the future completes. Obtruding is refused ({@link
   *     UnsupportedOperationException})
   * @throws IllegalStateException if the scope is closed
   */
  <T extends @Nullable Object, X extends Exception> CompletableFuture<T> fork(
      BlockingTask<T, X> task);

  /**
   * Calls {@code task} now, on this thread, inside the scope, and follows the stage it returns: the
   * task ends when the stage completes. Jeton waits that the supplier queues before it returns are
   * the task's and are withdrawn when the scope is cancelled; stages that run later, on other
   * threads, are not inside the scope.
   *
   * @return the stage's result; cancelling it, or completing it from outside in any other way
   *     ({@code complete}, {@code orTimeout}, ...), cancels the task (its Jeton waits, then its
   *     stage, the scopes opened in it), the waits withdrawn before the future completes. Obtruding
   *     is refused ({@link UnsupportedOperationException})
   * @throws IllegalStateException if the scope is closed
   */
  <T extends @Nullable Object> CompletableFuture<T> forkAsync(
      Supplier<? extends CompletionStage<T>> task);

  /**
   * Registers {@code hook} to run once when the scope ends, after every task has ended: hooks run
   * in reverse order of registration, on the thread that ends the scope (the last task to end, or
   * the one that cancels or closes it). An exception from a hook does not stop the others; it is
   * added as suppressed to the exception {@link #join()} throws, or, if the scope ends without one,
   * thrown by {@link #close()}.
   *
   * @throws IllegalStateException if the scope's hooks have begun to run: the caller still owns
   *     whatever the hook was to release
   */
  void teardown(Runnable hook);

  /**
   * Waits until every task forked so far (and every one forked meanwhile) has ended; if the scope
   * was cancelled, until it has ended.
   *
   * <p>In a supervisor scope it returns once the tasks have ended, whatever they did; {@link
   * #failures()} lists what failed.
   *
   * @throws InterruptedException if this thread is interrupted while waiting; the scope is left as
   *     it was ({@link #close()} cancels it)
   * @throws ExecutionException if a task failed, cancelling the scope: the first failure is the
   *     cause, with the teardown hooks' exceptions suppressed onto it
   * @throws CancellationException if the scope was cancelled otherwise: by {@link #cancel()}, its
   *     deadline (the cause is then a {@link java.util.concurrent.TimeoutException}), its parent,
   *     or {@link #close()} on another thread
   * @throws IllegalStateException if called by a task of this scope, which would wait for itself
   */
  void join() throws InterruptedException, ExecutionException;

  /**
   * Cancels the scope: every task, every child scope, every queued Jeton wait of its tasks; then,
   * once the tasks have ended, the teardown hooks. Does not wait for any of it ({@link #close()}
   * does).
   *
   * @return true if this call cancelled the scope, false if it was cancelled or ended already
   */
  boolean cancel();

  /** True once the scope stopped taking work: cancelled (by any cause) or closed. */
  boolean isCancelled();

  /**
   * The failures of the tasks of a supervisor scope, in the order they happened; of any other
   * scope, the one failure that cancelled it, if any. Failures of tasks that ended after the scope
   * was cancelled are consequences of the cancel and are not listed.
   */
  List<Throwable> failures();

  /**
   * Ends the scope: cancels the tasks still running (if any), waits until they and the teardown
   * hooks have finished. It waits even if this thread is interrupted, and then keeps the interrupt.
   * Does nothing if the scope has ended.
   *
   * @throws RuntimeException the first exception of a teardown hook, with the others suppressed, if
   *     the scope ended with no exception of {@link #join()} to carry them
   * @throws IllegalStateException if called by a task of this scope, which would wait for itself
   */
  @Override
  void close();

  /** Options of a scope; every setter checks its argument at once. */
  final class Builder {
    private @Nullable Duration deadline;
    private boolean supervisor;
    private @Nullable Executor executor;

    private Builder() {}

    /**
     * Cancels the scope when {@code timeout} has passed since {@link #open()}; {@link Scope#join()}
     * then throws a {@link CancellationException} caused by a {@link
     * java.util.concurrent.TimeoutException}.
     */
    public Builder deadline(Duration timeout) {
      Arguments.toNanos(Objects.requireNonNull(timeout, "timeout"));
      this.deadline = timeout;
      return this;
    }

    /**
     * A failing task does not cancel the others; {@link Scope#failures()} collects the failures and
     * {@link Scope#join()} does not throw them.
     */
    public Builder supervisor() {
      this.supervisor = true;
      return this;
    }

    /**
     * Runs the blocking tasks on {@code executor}, such as {@code
     * Executors.newVirtualThreadPerTaskExecutor()} on JDK 21. Cancelling interrupts the thread that
     * runs a task; the executor must run each task on a thread of its own for as long as it runs
     * (any thread pool does). If it rejects a task, that task fails with the rejection.
     */
    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /** Opens the scope; inside a task of another scope, as its child. */
    public Scope open() {
      return TaskScope.open(deadline, supervisor, executor);
    }
  }
}
