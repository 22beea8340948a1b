package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.engine.PermitPump;
import dev.jeton.internal.engine.RankOrder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The tasks of a {@link PriorityScheduler}, queued in front of its semaphore and started by the
 * engine's pump: the queue, the counts (queued and running, per priority) and the lifecycle
 * (shutdown, terminated). The scheduler is its public face.
 */
final class TaskQueue extends PermitPump<ScheduledTask<?>, Permit> {
  /*
   * Overview
   *
   * Queued tasks live in the pump's TreeSet, `queue`, in the engine's RankOrder (priority with
   * aging, compared exactly; FIFO within a priority), guarded by `lock` with the counts,
   * `nextSeq` and `shutdown` (each @GuardedBy, so the build checks it). Aging is continuous, so
   * one task's place relative to another never changes while both wait: the order is fixed at
   * submission and nothing is ever re-sorted.
   * `seq` and, with aging, the enqueue time are read under the lock together.
   *
   * Tasks start through the engine's pump (PermitPump: at most one, one acquire at a time, the
   * best task queued when a permit comes; see its P1-P3). Submitting starts a pump if none is
   * active. With an in-process semaphore, a submission that finds no pump and a free permit
   * starts its task directly (the idle fast path), counted running under the same lock as the
   * empty queue was seen, so no observer (shutdownNow, the counts) sees it queued while a slot was
   * free. If the semaphore refuses the pump (closed, limit 0), no task could start: every queued
   * one fails with the refusal.
   *
   * Invariants (each changes only under `lock`):
   *   I1. `running` is the number of permits held by started tasks. It drops before the permit
   *       is released, so it never shows more than the limit.
   *   I2. A task leaves the queue exactly once: started by the pump, withdrawn (a completion
   *       from outside: ScheduledTask), failed, or cancelled by shutdownNow. Whoever removes it
   *       updates the counts.
   *
   * Nothing calls the semaphore, a task, or completes a future while holding `lock`.
   */

  private final Semaphore semaphore;
  private final boolean idleFastPath; // an in-process semaphore: its tryAcquire never blocks
  private final boolean ages; // the order reads the enqueue time
  private final LongSupplier ticker;
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();

  @GuardedBy("lock")
  private final Map<Integer, Integer> queuedBy = new HashMap<>();

  @GuardedBy("lock")
  private final Map<Integer, Integer> runningBy = new HashMap<>();

  @GuardedBy("lock")
  private int running;

  @GuardedBy("lock")
  private long nextSeq;

  @GuardedBy("lock")
  private boolean shutdown;

  TaskQueue(Semaphore semaphore, RankOrder order, LongSupplier ticker) {
    super(order);
    this.semaphore = semaphore;
    this.idleFastPath = semaphore instanceof FifoSemaphore;
    this.ages = order.ages();
    this.ticker = ticker;
  }

  /** Makes a task given its place in the queue. */
  interface TaskFactory<T extends @Nullable Object> {
    ScheduledTask<T> make(long enqueuedNanos, long seq);
  }

  /**
   * Queues a task of {@code priority}, or starts it at once on the idle fast path; null if shut
   * down.
   */
  <T extends @Nullable Object> @Nullable ScheduledTask<T> enqueue(
      int priority, TaskFactory<T> factory) {
    Permit permit = idleFastPath ? tryAcquireIfIdle(startsNow(priority)) : null;
    if (permit != null) {
      ScheduledTask<T> task = factory.make(0, -1); // never queued: its place does not matter
      start(task, permit);
      return task;
    }
    ScheduledTask<T> task = null;
    boolean startPump = false;
    lock.lock();
    try {
      if (!shutdown) {
        task = factory.make(ages ? ticker.getAsLong() : 0, nextSeq++);
        queue.add(task);
        add(queuedBy, priority, 1);
        startPump = startPumpLocked();
      }
    } finally {
      lock.unlock();
    }
    if (startPump) {
      pump();
    }
    return task;
  }

  /**
   * {@link #startsNowLocked} as the idle fast path's {@code takeLocked}, which the pump calls with
   * its lock held (tryAcquireIfIdle's contract): the GuardedBy check cannot see that in a lambda.
   */
  @SuppressWarnings("GuardedBy")
  private BooleanSupplier startsNow(int priority) {
    return () -> startsNowLocked(priority);
  }

  /** The idle fast path, under the lock with the queue empty: the task starts unless shut down. */
  @GuardedBy("lock")
  private boolean startsNowLocked(int priority) {
    if (shutdown) {
      return false;
    }
    running++;
    add(runningBy, priority, 1);
    return true;
  }

  /** A completion from outside won before the task started: it leaves the queue, if still there. */
  void leave(ScheduledTask<?> task) {
    if (withdraw(task) >= 0) {
      checkTerminated();
    }
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

  // ------------------------------------------------------------------ the pump's hooks

  @Override
  protected CompletableFuture<Permit> acquire() {
    return semaphore.acquireAsync(1);
  }

  @Override
  protected Optional<Permit> tryAcquire() {
    return semaphore.tryAcquire(1);
  }

  @Override
  protected void release(Permit permit) {
    permit.release();
  }

  @Override
  @GuardedBy("lock")
  protected void leftLocked(ScheduledTask<?> task, boolean granted) {
    add(queuedBy, task.priority(), -1);
    if (granted) {
      running++;
      add(runningBy, task.priority(), 1);
    }
  }

  @Override
  protected void grant(ScheduledTask<?> task, Permit permit) {
    start(task, permit);
  }

  @Override
  @GuardedBy("lock")
  protected List<ScheduledTask<?>> refusedLocked(Throwable failure) {
    return drainCountedLocked(); // the semaphore refuses us (closed, limit 0): none could start
  }

  @Override
  protected void refuse(List<ScheduledTask<?>> refused, Throwable failure, int left) {
    for (ScheduledTask<?> t : refused) {
      t.completeExceptionally(failure);
    }
    checkTerminated();
  }

  /** Empties the queue and its counts; under the lock. */
  @GuardedBy("lock")
  private List<ScheduledTask<?>> drainCountedLocked() {
    queuedBy.clear();
    return drainLocked();
  }

  private static void add(Map<Integer, Integer> counts, int priority, int delta) {
    counts.merge(priority, delta, (a, b) -> a + b == 0 ? null : a + b);
  }

  // ------------------------------------------------------------------ counts

  // Each reads under the lock, written out: a read in a lambda handed to a helper that locks is
  // one the GuardedBy check cannot prove.

  int queued() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  int queued(int priority) {
    lock.lock();
    try {
      return queuedBy.getOrDefault(priority, 0);
    } finally {
      lock.unlock();
    }
  }

  int running() {
    lock.lock();
    try {
      return running;
    } finally {
      lock.unlock();
    }
  }

  int running(int priority) {
    lock.lock();
    try {
      return runningBy.getOrDefault(priority, 0);
    } finally {
      lock.unlock();
    }
  }

  /** Queued plus running, in one snapshot. */
  int unfinished() {
    lock.lock();
    try {
      return queue.size() + running;
    } finally {
      lock.unlock();
    }
  }

  // ------------------------------------------------------------------ shutdown

  void shutdown() {
    lock.lock();
    try {
      shutdown = true;
    } finally {
      lock.unlock();
    }
    checkTerminated();
  }

  /** Shuts down and cancels the queued tasks; how many. */
  int shutdownNow() {
    List<ScheduledTask<?>> cancelled;
    CompletableFuture<Permit> acquiring;
    lock.lock();
    try {
      shutdown = true;
      cancelled = drainCountedLocked();
      acquiring = pendingLocked();
    } finally {
      lock.unlock();
    }
    cancel(acquiring);
    for (ScheduledTask<?> task : cancelled) {
      task.cancel(false);
    }
    checkTerminated();
    return cancelled.size();
  }

  boolean isShutdown() {
    lock.lock();
    try {
      return shutdown;
    } finally {
      lock.unlock();
    }
  }

  /** Completes once shut down with nothing queued or running; not to be completed by others. */
  CompletableFuture<Void> terminated() {
    return terminated;
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

  /** The counts and state, for the scheduler's toString; {@code options} before the state. */
  String describe(String options) {
    lock.lock();
    try {
      return "queued="
          + queue.size()
          + ", running="
          + running
          + options
          + (shutdown ? ", shut down" : "");
    } finally {
      lock.unlock();
    }
  }
}
