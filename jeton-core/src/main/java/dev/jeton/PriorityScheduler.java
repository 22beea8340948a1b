package dev.jeton;

import dev.jeton.internal.engine.RankOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
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
 *       never starved.
 *   <li><b>The limit.</b> Each running task holds one permit of a {@link Semaphore}: its own
 *       ({@link Builder#limit(int)}) or one given ({@link Builder#semaphore(Semaphore)}), which may
 *       be shared with other users, machine-wide or fleet-wide. A task holds its permit until its
 *       work has really finished, even if its future was completed or cancelled first.
 *   <li><b>Blocking and async tasks.</b> {@code submit} runs a blocking {@link Callable} on the
 *       {@linkplain Builder#executor(Executor) executor}. {@code submitAsync} calls its supplier on
 *       the thread that frees the slot (or the submitting thread) and must not block; the task runs
 *       until the stage it returns completes, and that stage is never cancelled.
 *   <li><b>Cancellation.</b> Completing a task's future from outside before the task starts ({@code
 *       cancel}, {@code complete}, {@code completeExceptionally}) withdraws it: it never runs and
 *       leaves the queue at once, before the future completes (its callbacks find it gone from
 *       {@link #queued()}). {@code cancel(true)} on a running blocking task interrupts its thread;
 *       {@code cancel(false)} does not.
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
   * Overview
   *
   * Queued tasks live in one TreeSet, `queue`, in the engine's RankOrder (priority with aging,
   * compared exactly; FIFO within a priority), guarded by `lock` with the counts, `pending`,
   * `pumping` and `shutdown`. Aging is continuous, so one task's place relative to another never
   * changes while both wait: the order is fixed at submission and nothing is ever re-sorted.
   * `seq` and, with aging, the enqueue time are read under the lock together.
   *
   * Tasks start through a single "pump", as in BoundedRun: it asks the semaphore for one permit;
   * when granted, it takes the best task queued at that moment (so a task that arrived late with
   * a higher priority still wins), starts it holding the permit, and loops while permits come at
   * once; otherwise it leaves a callback on its one pending acquire and returns. It ends when it
   * finds the queue empty. Submitting starts a pump if none is active. With an in-process
   * semaphore, a submission that finds no pump and a free permit starts its task directly.
   *
   * Invariants (each changes only under `lock`):
   *   I1. `pumping` is true iff a pump is looping or waiting on `pending`; there is at most one.
   *       Every queued task is seen by that pump: it ends only after seeing the queue empty,
   *       under the lock, and a submission that finds `pumping` false starts one.
   *   I2. The pump holds at most one acquire at a time. When the queue empties (a withdrawal,
   *       shutdownNow), the pending acquire is cancelled so that a shared semaphore is not held
   *       up; the pump publishes `pending` and then re-checks the queue, so one of the two sees
   *       the other. A cancelled acquire that finds a task queued (one submitted meanwhile)
   *       acquires again rather than end.
   *   I3. `running` is the number of permits held by started tasks. It drops before the permit
   *       is released, so it never shows more than the limit.
   *   I4. A task leaves the queue exactly once: started by the pump, withdrawn, failed, or
   *       cancelled by shutdownNow. Whoever removes it updates the counts.
   *
   * Nothing calls the semaphore, a task, or completes a future while holding `lock`.
   */

  private final Semaphore semaphore;
  private final boolean ownSemaphore;
  private final @Nullable Executor executor;
  private final long agingNanos; // 0: off
  private final RankOrder order;
  private final LongSupplier ticker;
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();

  private final ReentrantLock lock = new ReentrantLock();
  private final TreeSet<ScheduledTask<?>> queue;
  private final Map<Integer, Integer> queuedBy = new HashMap<>();
  private final Map<Integer, Integer> runningBy = new HashMap<>();
  private int running;
  private long nextSeq;
  private volatile boolean pumping; // read without the lock as a hint by tryAcquireIfIdle
  private @Nullable CompletableFuture<Permit> pending;
  private boolean shutdown;

  private PriorityScheduler(Builder b, Semaphore semaphore) {
    this.semaphore = semaphore;
    this.ownSemaphore = b.semaphore == null;
    this.executor = b.executor;
    this.agingNanos = b.agingNanos;
    this.order = RankOrder.byPriority(b.agingNanos);
    this.queue = new TreeSet<>(order);
    this.ticker = b.ticker;
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
    return enqueue(
        priority,
        (enqueuedNanos, seq) ->
            ScheduledTask.blocking(
                priority, enqueuedNanos, seq, task, requireExecutor(), this::withdraw));
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
            ScheduledTask.async(priority, enqueuedNanos, seq, task, this::withdraw));
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

  /** Makes a task given its place in the queue. */
  private interface TaskFactory<T extends @Nullable Object> {
    ScheduledTask<T> make(long enqueuedNanos, long seq);
  }

  private <T extends @Nullable Object> CompletableFuture<T> enqueue(
      int priority, TaskFactory<T> factory) {
    Permit permit = tryAcquireIfIdle();
    ScheduledTask<T> task = null;
    boolean startNow = false;
    boolean startPump = false;
    lock.lock();
    try {
      if (!shutdown) {
        task = factory.make(order.ages() ? ticker.getAsLong() : 0, nextSeq++);
        if (permit != null && queue.isEmpty()) {
          startNow = true;
          running++;
          add(runningBy, priority, 1);
        } else {
          queue.add(task);
          add(queuedBy, priority, 1);
          startPump = !pumping;
          pumping = true;
        }
      }
    } finally {
      lock.unlock();
    }
    if (task == null) {
      if (permit != null) {
        permit.release();
      }
      throw new RejectedExecutionException("the scheduler is shut down: " + this);
    }
    if (startNow) {
      start(task, Objects.requireNonNull(permit));
      return task;
    }
    if (permit != null) {
      permit.release(); // a task came first; the pump will have this permit for it
    }
    if (startPump) {
      pump();
    }
    return task;
  }

  /**
   * A permit if nothing is queued and the semaphore is in-process (its tryAcquire never blocks) and
   * has one free: then the task starts within submit, so that no observer (shutdownNow, the counts)
   * sees it queued while a slot was free.
   */
  private @Nullable Permit tryAcquireIfIdle() {
    if (pumping || !(semaphore instanceof FifoSemaphore)) {
      return null;
    }
    try {
      return semaphore.tryAcquire(1).orElse(null);
    } catch (RuntimeException closed) {
      return null; // the pump will meet the same refusal and report it
    }
  }

  // ------------------------------------------------------------------ the pump

  /** Starts queued tasks while permits come at once; see the Overview. */
  private void pump() {
    while (true) {
      CompletableFuture<Permit> acquiring;
      try {
        acquiring = semaphore.acquireAsync(1);
      } catch (RuntimeException refused) { // e.g. a given semaphore's limit lowered to 0
        acquiring = CompletableFuture.failedFuture(refused);
      }
      if (!acquiring.isDone()) {
        boolean queueEmpty;
        lock.lock();
        try {
          pending = acquiring;
          queueEmpty = queue.isEmpty();
        } finally {
          lock.unlock();
        }
        if (queueEmpty) {
          acquiring.cancel(false); // emptied before `pending` was visible: see I2
        }
        CompletableFuture<Permit> waiting = acquiring;
        var unused =
            acquiring.whenComplete(
                (permit, failure) -> {
                  if (granted(waiting, permit, failure)) {
                    pump();
                  }
                });
        return;
      }
      Permit permit = null;
      Throwable failure = null;
      try {
        permit = acquiring.join();
      } catch (CompletionException | CancellationException e) {
        failure = e.getCause() != null ? e.getCause() : e;
      }
      if (!granted(acquiring, permit, failure)) {
        return;
      }
    }
  }

  /**
   * Starts the best queued task with the permit the pump was granted. Returns whether the pump goes
   * on: true if it started one and more are queued, or if its acquire was cancelled as the queue
   * emptied and a task has arrived since.
   */
  private boolean granted(
      CompletableFuture<Permit> acquiring, @Nullable Permit permit, @Nullable Throwable failure) {
    ScheduledTask<?> task = null;
    List<ScheduledTask<?>> refused = List.of();
    boolean goOn = false;
    lock.lock();
    try {
      if (pending == acquiring) {
        pending = null;
      }
      if (permit != null) {
        while (task == null && !queue.isEmpty()) {
          ScheduledTask<?> best = queue.pollFirst();
          add(queuedBy, best.priority(), -1);
          if (!best.isDone()) { // else withdrawn: its own callback will find it gone
            task = best;
            running++;
            add(runningBy, best.priority(), 1);
          }
        }
        goOn = !queue.isEmpty();
      } else if (!queue.isEmpty()) {
        if (failure instanceof CancellationException) {
          return true; // withdrawn by us as the queue emptied; a task has come since
        }
        refused = drainQueue(); // the semaphore refuses us (closed, limit 0): none could start
      }
      pumping = goOn;
    } finally {
      lock.unlock();
    }
    for (ScheduledTask<?> t : refused) {
      t.completeExceptionally(Objects.requireNonNull(failure));
    }
    if (task != null) {
      start(task, Objects.requireNonNull(permit));
    } else if (permit != null) {
      permit.release();
    }
    checkTerminated();
    return goOn;
  }

  private <T extends @Nullable Object> void start(ScheduledTask<T> task, Permit permit) {
    var unused =
        task.start()
            .whenComplete(
                (value, failure) -> {
                  lock.lock();
                  try {
                    running--;
                    add(runningBy, task.priority(), -1);
                  } finally {
                    lock.unlock();
                  }
                  permit.release(); // before the caller sees the outcome
                  task.finish(value, failure);
                  checkTerminated();
                });
  }

  private void withdraw(ScheduledTask<?> task) {
    CompletableFuture<Permit> acquiring = null;
    lock.lock();
    try {
      if (!queue.remove(task)) {
        return;
      }
      add(queuedBy, task.priority(), -1);
      if (queue.isEmpty()) {
        acquiring = pending;
      }
    } finally {
      lock.unlock();
    }
    if (acquiring != null) {
      acquiring.cancel(false);
    }
    checkTerminated();
  }

  /** Empties the queue and its counts; under the lock. */
  private List<ScheduledTask<?>> drainQueue() {
    List<ScheduledTask<?>> drained = new ArrayList<>(queue);
    queue.clear();
    queuedBy.clear();
    return drained;
  }

  private static void add(Map<Integer, Integer> counts, int priority, int delta) {
    counts.merge(priority, delta, (a, b) -> a + b == 0 ? null : a + b);
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
    return locked(() -> queue.size());
  }

  /** The number of tasks waiting to start that were submitted with {@code priority}. */
  public int queued(int priority) {
    return locked(() -> queuedBy.getOrDefault(priority, 0));
  }

  /** The number of tasks waiting to start that were submitted with {@code priority}. */
  public int queued(Priority priority) {
    return queued(Objects.requireNonNull(priority, "priority").value());
  }

  /** The number of tasks started and not yet finished, each holding a permit. */
  public int running() {
    return locked(() -> running);
  }

  /** The number of running tasks that were submitted with {@code priority}. */
  public int running(int priority) {
    return locked(() -> runningBy.getOrDefault(priority, 0));
  }

  /** The number of running tasks that were submitted with {@code priority}. */
  public int running(Priority priority) {
    return running(Objects.requireNonNull(priority, "priority").value());
  }

  /** Queued plus running, in one snapshot (the two alone are not linearizable; see the tests). */
  int unfinished() {
    return locked(() -> queue.size() + running);
  }

  private int locked(Supplier<Integer> read) {
    lock.lock();
    try {
      return read.get();
    } finally {
      lock.unlock();
    }
  }

  // ------------------------------------------------------------------ shutdown

  /** Refuses new tasks; queued and running ones still run. Calling it again does nothing. */
  public void shutdown() {
    lock.lock();
    try {
      shutdown = true;
    } finally {
      lock.unlock();
    }
    checkTerminated();
  }

  /**
   * Refuses new tasks and cancels every queued one: their futures complete as cancelled and they
   * never run. Running tasks go on.
   *
   * @return the number of tasks cancelled
   */
  public int shutdownNow() {
    List<ScheduledTask<?>> cancelled;
    CompletableFuture<Permit> acquiring;
    lock.lock();
    try {
      shutdown = true;
      cancelled = drainQueue();
      acquiring = pending;
    } finally {
      lock.unlock();
    }
    if (acquiring != null) {
      acquiring.cancel(false);
    }
    for (ScheduledTask<?> task : cancelled) {
      task.cancel(false);
    }
    checkTerminated();
    return cancelled.size();
  }

  /** Whether {@link #shutdown()} or {@link #shutdownNow()} was called. */
  public boolean isShutdown() {
    lock.lock();
    try {
      return shutdown;
    } finally {
      lock.unlock();
    }
  }

  /** Whether the scheduler is shut down with nothing queued or running. */
  public boolean isTerminated() {
    return terminated.isDone();
  }

  /** Completes once the scheduler is shut down with nothing queued or running. */
  public CompletableFuture<Void> terminated() {
    return terminated.copy();
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
        terminated.get();
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

  private void checkTerminated() {
    lock.lock();
    try {
      if (!shutdown || !queue.isEmpty() || running != 0) {
        return;
      }
    } finally {
      lock.unlock();
    }
    terminated.complete(null);
  }

  @Override
  public String toString() {
    String limit = ownSemaphore ? "limit=" + semaphore.limit() : "semaphore=" + semaphore;
    lock.lock();
    try {
      return "PriorityScheduler["
          + limit
          + ", queued="
          + queue.size()
          + ", running="
          + running
          + (agingNanos != 0 ? ", aging=" + Duration.ofNanos(agingNanos) : "")
          + (shutdown ? ", shut down" : "")
          + "]";
    } finally {
      lock.unlock();
    }
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
