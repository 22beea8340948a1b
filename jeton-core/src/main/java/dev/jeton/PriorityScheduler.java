package dev.jeton;

import dev.jeton.internal.engine.RankOrder;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs tasks by priority, at most a limit at a time: higher priorities first, first come first
 * served within a priority.
 *
 * <pre>{@code
 * try (PriorityScheduler scheduler =
 *     PriorityScheduler.builder().limit(4).executor(virtualThreads).build()) {
 *   CompletableFuture<Report> urgent = scheduler.submit(Priority.HIGH, () -> build(today));
 *   CompletableFuture<Page> page = scheduler.submitAsync(Priority.LOW, () -> http.fetchAsync(url));
 * } // waits for both
 * }</pre>
 *
 * <ul>
 *   <li><b>Ordering.</b> A priority is any {@code int} ({@link Priority} names four); when a slot
 *       frees, the best task queued at that moment starts: the highest priority, and within one
 *       priority the earliest submitted. With {@link Builder#aging(Duration) aging}, a task that
 *       has waited one period ranks like one submitted now a priority higher, so low priorities are
 *       never starved; ranks are compared exactly, for any priority and period.
 *   <li><b>The limit.</b> Each running task holds one permit of a {@link Semaphore}: its own
 *       ({@link Builder#limit(int)}) or one given ({@link Builder#semaphore(Semaphore)}), which may
 *       be shared with other users, machine-wide or fleet-wide. A task holds its permit until its
 *       work has really finished, even if its future was completed or cancelled first.
 *   <li><b>Blocking and async tasks.</b> {@code submit} runs a blocking {@link Callable} on the
 *       {@linkplain Builder#executor(Executor) executor}. {@code submitAsync} calls its supplier on
 *       the thread that frees the slot (or the submitting thread) and must not block; the task runs
 *       until the stage it returns completes, and that stage is never cancelled.
 *   <li><b>Cancellation.</b> Completing a task's future from outside before the task starts ({@code
 *       cancel}, {@code complete}, {@code completeExceptionally}, {@code completeAsync}, {@code
 *       orTimeout}) withdraws it: it never runs and leaves the queue at once, before the future
 *       completes (its callbacks find it gone from {@link #queued()}). {@code cancel(true)} on a
 *       running blocking task interrupts its thread; {@code cancel(false)} does not.
 *   <li><b>Shutdown.</b> {@link #shutdown()} refuses new tasks and lets queued and running ones
 *       finish; {@link #shutdownNow()} also cancels the queued ones. {@link #close()} shuts down
 *       and waits. The scheduler never closes a semaphore it was given.
 *   <li><b>Memory consistency.</b> Actions in a thread before it submits a task happen-before the
 *       task runs; the task's actions happen-before its future completes, which happens after its
 *       permit is released.
 * </ul>
 */
public final class PriorityScheduler implements Executor, AutoCloseable {
  /*
   * The scheduler is the public face (submitting, the limit, counts, shutdown and close) of a
   * TaskQueue, which queues the tasks in the engine's rank order and starts them through the
   * engine's pump; its Overview has the algorithm and the invariants.
   */

  private final Semaphore semaphore;
  private final boolean ownSemaphore;
  private final @Nullable Executor executor;
  private final long agingNanos; // 0: off
  private final TaskQueue tasks;

  private PriorityScheduler(Builder b, Semaphore semaphore) {
    this.semaphore = semaphore;
    this.ownSemaphore = b.semaphore == null;
    this.executor = b.executor;
    this.agingNanos = b.agingNanos;
    this.tasks = new TaskQueue(semaphore, RankOrder.byPriority(b.agingNanos), b.ticker);
  }

  /** Returns a builder; a limit or a semaphore is required. */
  public static Builder builder() {
    return new Builder();
  }

  // ------------------------------------------------------------------ submitting

  /**
   * Queues the blocking {@code task} to run on the executor, and returns its result.
   *
   * @throws IllegalStateException if no executor was set
   * @throws RejectedExecutionException if the scheduler is shut down
   */
  public <T extends @Nullable Object> CompletableFuture<T> submit(int priority, Callable<T> task) {
    Objects.requireNonNull(task, "task");
    Executor e = requireExecutor(); // before a permit is taken for it
    return enqueue(
        priority,
        (enqueuedNanos, seq) ->
            ScheduledTask.blocking(priority, enqueuedNanos, seq, task, e, tasks::leave));
  }

  /** As {@link #submit(int, Callable)}, with a named priority. */
  public <T extends @Nullable Object> CompletableFuture<T> submit(
      Priority priority, Callable<T> task) {
    return submit(Objects.requireNonNull(priority, "priority").value(), task);
  }

  /**
   * Queues the async {@code task} and returns its result. The supplier is called when the task
   * starts, on the thread that starts it, and must not block; the task holds its slot until the
   * stage it returns completes. A supplier that throws or returns {@code null} fails the result.
   *
   * @throws RejectedExecutionException if the scheduler is shut down
   */
  public <T extends @Nullable Object> CompletableFuture<T> submitAsync(
      int priority, Supplier<? extends CompletionStage<T>> task) {
    Objects.requireNonNull(task, "task");
    return enqueue(
        priority,
        (enqueuedNanos, seq) ->
            ScheduledTask.async(priority, enqueuedNanos, seq, task, tasks::leave));
  }

  /** As {@link #submitAsync(int, Supplier)}, with a named priority. */
  public <T extends @Nullable Object> CompletableFuture<T> submitAsync(
      Priority priority, Supplier<? extends CompletionStage<T>> task) {
    return submitAsync(Objects.requireNonNull(priority, "priority").value(), task);
  }

  /**
   * Runs {@code command} as a {@link Priority#NORMAL} blocking task on the executor. What it throws
   * is lost, as with any {@code Executor}; use {@code submit} to see it.
   *
   * @throws IllegalStateException if no executor was set
   * @throws RejectedExecutionException if the scheduler is shut down
   */
  @Override
  public void execute(Runnable command) {
    Objects.requireNonNull(command, "command");
    var unused =
        submit(
            Priority.NORMAL,
            () -> {
              command.run();
              return null;
            });
  }

  private Executor requireExecutor() {
    Executor e = executor;
    if (e == null) {
      throw new IllegalStateException(
          "blocking tasks need an executor: set one with PriorityScheduler.Builder.executor");
    }
    return e;
  }

  private <T extends @Nullable Object> CompletableFuture<T> enqueue(
      int priority, TaskQueue.TaskFactory<T> factory) {
    ScheduledTask<T> task = tasks.enqueue(priority, factory);
    if (task == null) {
      throw new RejectedExecutionException("the scheduler is shut down: " + this);
    }
    return task;
  }

  // ------------------------------------------------------------------ limit and inspection

  /** The most tasks that run at once: the semaphore's limit. */
  public int limit() {
    return semaphore.limit();
  }

  /**
   * Changes the limit (the semaphore's), without blocking: growing starts queued tasks at once;
   * shrinking takes effect as running tasks finish.
   *
   * @throws IllegalArgumentException if {@code limit} is below 1
   */
  public void setLimit(int limit) {
    Builder.checkLimit(limit);
    semaphore.setLimit(limit);
  }

  /** The number of tasks waiting to start. */
  public int queued() {
    return tasks.queued();
  }

  /** The number of tasks waiting to start that were submitted with {@code priority}. */
  public int queued(int priority) {
    return tasks.queued(priority);
  }

  /** The number of tasks waiting to start that were submitted with {@code priority}. */
  public int queued(Priority priority) {
    return queued(Objects.requireNonNull(priority, "priority").value());
  }

  /** The number of tasks started and not yet finished, each holding a permit. */
  public int running() {
    return tasks.running();
  }

  /** The number of running tasks that were submitted with {@code priority}. */
  public int running(int priority) {
    return tasks.running(priority);
  }

  /** The number of running tasks that were submitted with {@code priority}. */
  public int running(Priority priority) {
    return running(Objects.requireNonNull(priority, "priority").value());
  }

  /** Queued plus running, in one snapshot (the two alone are not linearizable; see the tests). */
  int unfinished() {
    return tasks.unfinished();
  }

  // ------------------------------------------------------------------ shutdown

  /** Refuses new tasks; queued and running ones still run. Calling it again does nothing. */
  public void shutdown() {
    tasks.shutdown();
  }

  /**
   * Refuses new tasks and cancels every queued one: their futures complete as cancelled and they
   * never run. Running tasks go on.
   *
   * @return the number of tasks cancelled
   */
  public int shutdownNow() {
    return tasks.shutdownNow();
  }

  /** Whether {@link #shutdown()} or {@link #shutdownNow()} was called. */
  public boolean isShutdown() {
    return tasks.isShutdown();
  }

  /** Whether the scheduler is shut down with nothing queued or running. */
  public boolean isTerminated() {
    return tasks.terminated().isDone();
  }

  /** Completes once the scheduler is shut down with nothing queued or running. */
  public CompletableFuture<Void> terminated() {
    return tasks.terminated().copy();
  }

  /**
   * Shuts down and waits until every queued and running task has finished, like JDK 19's {@code
   * ExecutorService.close()}: if interrupted while waiting, it cancels the queued tasks ({@link
   * #shutdownNow()}), goes on waiting for the running ones, and returns with the interrupt status
   * set.
   */
  @Override
  public void close() {
    shutdown();
    boolean interrupted = false;
    while (true) {
      try {
        tasks.terminated().get();
        break;
      } catch (InterruptedException e) {
        if (!interrupted) {
          interrupted = true;
          shutdownNow();
        }
      } catch (ExecutionException cannotHappen) {
        break;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    String limit = ownSemaphore ? "limit=" + semaphore.limit() : "semaphore=" + semaphore;
    String aging = agingNanos != 0 ? ", aging=" + Duration.ofNanos(agingNanos) : "";
    return "PriorityScheduler[" + limit + ", " + tasks.describe(aging) + "]";
  }

  /**
   * Builds a {@link PriorityScheduler}. Each setter checks its argument at once.
   *
   * <pre>{@code
   * PriorityScheduler scheduler = PriorityScheduler.builder()
   *     .limit(8)
   *     .executor(Executors.newVirtualThreadPerTaskExecutor())
   *     .aging(Duration.ofSeconds(10))
   *     .build();
   * }</pre>
   */
  public static final class Builder {
    private int limit; // 0: not set
    private @Nullable Semaphore semaphore;
    private @Nullable Executor executor;
    private long agingNanos;
    private LongSupplier ticker = System::nanoTime;

    private Builder() {}

    /**
     * Runs at most {@code limit} tasks at once, under a semaphore of its own. This or {@link
     * #semaphore(Semaphore)} is required.
     *
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    public Builder limit(int limit) {
      checkLimit(limit);
      this.limit = limit;
      return this;
    }

    /**
     * Runs tasks under {@code semaphore}, each running task holding one of its permits; it may be
     * shared with other users, and is never closed by the scheduler. This or {@link #limit(int)} is
     * required.
     */
    public Builder semaphore(Semaphore semaphore) {
      this.semaphore = Objects.requireNonNull(semaphore, "semaphore");
      return this;
    }

    /** Where blocking tasks run; required for {@code submit} and {@code execute}. */
    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Turns aging on: a task that has waited {@code period} ranks like one submitted now one
     * priority higher, two periods two higher, and so on, so that low priorities are not starved.
     *
     * @throws IllegalArgumentException if {@code period} is not positive
     */
    public Builder aging(Duration period) {
      Objects.requireNonNull(period, "period");
      if (period.isNegative() || period.isZero()) {
        throw new IllegalArgumentException("aging period must be positive, was " + period);
      }
      this.agingNanos = saturatedNanos(period);
      return this;
    }

    /** The clock aging reads, in nanoseconds; for tests. */
    Builder ticker(LongSupplier nanoTime) {
      this.ticker = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /**
     * Builds the scheduler.
     *
     * @throws IllegalStateException unless exactly one of a limit and a semaphore was set
     */
    public PriorityScheduler build() {
      Semaphore given = semaphore;
      if ((limit == 0) == (given == null)) {
        throw new IllegalStateException(
            "set exactly one of limit(int) and semaphore(Semaphore) before build(), "
                + (given == null ? "neither was set" : "both were set"));
      }
      return new PriorityScheduler(this, given != null ? given : Semaphore.create(limit));
    }

    static void checkLimit(int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException("limit must be at least 1, was " + limit);
      }
      FifoSemaphore.checkLimit(limit);
    }

    private static long saturatedNanos(Duration period) {
      try {
        return period.toNanos();
      } catch (ArithmeticException tooLong) {
        return Long.MAX_VALUE;
      }
    }
  }
}
