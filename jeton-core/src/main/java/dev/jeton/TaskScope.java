package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.engine.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** The {@link Scope}: a state machine of tasks, child scopes and teardown hooks, under one lock. */
final class TaskScope implements Scope {
  /*
   * Overview
   *
   * State: OPEN -> CANCELLED -> TEARING_DOWN -> ENDED, each step once, under `lock`.
   *   OPEN        takes forks, child scopes and teardown hooks.
   *   CANCELLED   the tasks and child scopes are being cancelled; forks are refused (their
   *               futures fail, their tasks never run); hooks are still taken.
   *   TEARING_DOWN the last task has ended; one thread runs the hooks, in reverse order,
   *               without the lock. Hooks throw IllegalStateException; forks are refused.
   *   ENDED       the hooks have run; join and close return.
   * `closed` (set by close()) makes forks throw IllegalStateException instead: the owner is done
   * with the scope, so a fork then is a bug, where a fork racing with a cancel is not.
   * OPEN -> CANCELLED by cancel(), the deadline, the parent (cancelByParent), the first failure
   * of a task unless supervisor, or close(). CANCELLED -> TEARING_DOWN by whichever thread sees
   * `pending` reach 0 in CANCELLED (endIfDone): the last task or child to end, or the canceller
   * when nothing runs. So the hooks run once, after every task, and nothing runs after ENDED.
   *
   * Invariants:
   *   S1. `pending` counts the tasks forked and not yet ended (ScopeTask.end), the child
   *       scopes opened and not yet ended (`tasks` and `children` hold exactly those), and 1
   *       while the cancel pass runs (from cancelLocked to the end of finishCancel): a task that
   *       ends on its own meanwhile must not end the scope before the pass has withdrawn the
   *       waits it left queued. Only what leaves `tasks` or `children` is uncounted: a task
   *       the scope refused (ScopeTask.refuse) was never counted, and must not uncount a
   *       running one if it were ever reported as ended.
   *   S2. pending > 0 implies state is OPEN or CANCELLED: the scope never ends before its work.
   *   S3. A task is cancelled if it is in `tasks` when the scope leaves OPEN (the snapshot that
   *       cancelLocked returns), or if it is forked after: it is never started.
   *   S4. `reason` is set at most once, when leaving OPEN: the failure (failedByTask) or the
   *       CancellationException join throws; null when close() ended a scope with nothing left
   *       running, which join then treats as a normal end.
   *
   * Cancelling the snapshot, running hooks, and telling the parent happen outside the lock: a
   * task's cancel reaches its child scopes (their locks) and completes futures (user callbacks).
   * Lock order: a scope's lock, then a task's monitor (ScopeTask.isCancelled); a child's lock is
   * never taken while holding the parent's.
   *
   * The deadline is a timer on the engine's shared timer thread (Timer.shared()), stopped when
   * the scope ends.
   *
   * Field access: the fields `lock` guards, and the methods called with it held, carry
   * @GuardedBy("lock"), which the build checks; the others are final.
   */

  private static final int OPEN = 0;
  private static final int CANCELLED = 1;
  private static final int TEARING_DOWN = 2;
  private static final int ENDED = 3;

  /** A virtual thread per task on JDK 21+, else a platform daemon thread per task. */
  private static final Executor DEFAULT_EXECUTOR = ScopeTask.defaultExecutor();

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Executor executor;
  private final boolean supervisor;
  private final @Nullable TaskScope parent;
  private final @Nullable ScopeTask<?> parentTask;

  @GuardedBy("lock")
  private int state = OPEN;

  @GuardedBy("lock")
  private int pending;

  @GuardedBy("lock")
  private final Set<ScopeTask<?>> tasks = new LinkedHashSet<>();

  @GuardedBy("lock")
  private final Set<TaskScope> children = new LinkedHashSet<>();

  @GuardedBy("lock")
  private final List<Runnable> hooks = new ArrayList<>();

  @GuardedBy("lock")
  private @Nullable Throwable reason;

  @GuardedBy("lock")
  private boolean failedByTask;

  @GuardedBy("lock")
  private final List<Throwable> failures = new ArrayList<>();

  @GuardedBy("lock")
  private final List<Throwable> hookFailures = new ArrayList<>();

  @GuardedBy("lock")
  private boolean hookFailuresReported;

  /** Set by close(): forks throw from then on, rather than being refused quietly. */
  @GuardedBy("lock")
  private boolean closed;

  @GuardedBy("lock")
  private @Nullable Future<?> deadlineTimer;

  private TaskScope(
      Executor executor,
      boolean supervisor,
      @Nullable TaskScope parent,
      @Nullable ScopeTask<?> parentTask) {
    this.executor = executor;
    this.supervisor = supervisor;
    this.parent = parent;
    this.parentTask = parentTask;
  }

  static TaskScope open(
      @Nullable Duration deadline, boolean supervisor, @Nullable Executor executor) {
    ScopeTask<?> opener = ScopeTask.current();
    TaskScope scope =
        new TaskScope(
            executor != null ? executor : DEFAULT_EXECUTOR,
            supervisor,
            opener == null ? null : opener.scope,
            opener);
    if (opener != null) {
      opener.scope.adopt(scope, opener);
    }
    if (deadline != null) {
      scope.startDeadline(deadline);
    }
    return scope;
  }

  private void startDeadline(Duration deadline) {
    long nanos = Arguments.toNanos(deadline);
    Future<?> timer =
        Timer.shared()
            .schedule(
                () -> {
                  CancellationException e =
                      new CancellationException(
                          "the scope's deadline of " + Arguments.format(deadline) + " passed");
                  e.initCause(new TimeoutException("deadline " + Arguments.format(deadline)));
                  cancelFor(e);
                },
                nanos);
    lock.lock();
    try {
      if (state == OPEN) {
        deadlineTimer = timer;
        return;
      }
    } finally {
      lock.unlock();
    }
    timer.cancel(false); // cancelled already (its parent was): the timer has nothing to do
  }

  // ---------------------------------------------------------------- forks

  @Override
  public <T extends @Nullable Object, X extends Exception> CompletableFuture<T> fork(
      BlockingTask<T, X> task) {
    Objects.requireNonNull(task, "task");
    ScopeTask<T> t = ScopeTask.blocking(this, task);
    if (!admit(t)) {
      return t.future;
    }
    BlockingCall<T> call = Objects.requireNonNull(t.call);
    try {
      executor.execute(call);
    } catch (RuntimeException rejected) { // RejectedExecutionException, or a broken executor
      t.end(null, rejected); // first: the cancel below would end it as cancelled
      call.cancel(); // it must never run now
    }
    return t.future;
  }

  @Override
  public <T extends @Nullable Object> CompletableFuture<T> forkAsync(
      Supplier<? extends CompletionStage<T>> task) {
    Objects.requireNonNull(task, "task");
    ScopeTask<T> t = ScopeTask.async(this);
    if (admit(t)) {
      t.startAsync(task);
    }
    return t.future;
  }

  /** Counts a new task in, or refuses it: false (its future failed) if the scope is cancelled. */
  private boolean admit(ScopeTask<?> t) {
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("the scope is closed: cannot fork now");
      }
      if (state == OPEN) {
        pending++;
        tasks.add(t);
        return true;
      }
    } finally {
      lock.unlock();
    }
    t.refuse(new CancellationException("the scope is cancelled: the forked task was not run"));
    return false;
  }

  /** Counts a child scope in; a child opened in a cancelled scope is cancelled at once. */
  private void adopt(TaskScope child, ScopeTask<?> opener) {
    boolean counted;
    lock.lock();
    try {
      counted = state == OPEN;
      if (counted) {
        pending++;
        children.add(child);
      }
    } finally {
      lock.unlock();
    }
    if (counted) {
      opener.track(child); // cancelling the opener's fork future cancels the child
    } else {
      child.cancelByParent(); // not counted: the opener, still running, keeps this scope open
    }
  }

  @Override
  public void teardown(Runnable hook) {
    Objects.requireNonNull(hook, "hook");
    lock.lock();
    try {
      if (state >= TEARING_DOWN) {
        throw new IllegalStateException("the scope has ended: its teardown hooks have run");
      }
      hooks.add(hook);
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- ends of tasks and children

  /** A task has ended (ScopeTask.end, once per task). */
  void taskEnded(ScopeTask<?> t, @Nullable Throwable failure) {
    List<Object> toCancel = null;
    lock.lock();
    try {
      if (tasks.remove(t)) {
        pending--;
      } // else a task the scope never counted: ending it must not uncount another (S1)
      if (failure != null && state == OPEN && !t.isCancelled()) {
        failures.add(failure);
        if (!supervisor) {
          toCancel = cancelLocked(failure, true);
        }
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    finishCancel(toCancel);
  }

  private void childEnded(TaskScope child) {
    lock.lock();
    try {
      if (children.remove(child)) {
        pending--;
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
    endIfDone();
  }

  // ---------------------------------------------------------------- cancellation

  @Override
  public boolean cancel() {
    return cancelFor(new CancellationException("the scope was cancelled"));
  }

  void cancelByParent() {
    cancelFor(
        new CancellationException(
            "the parent scope (or the task that opened this one) was cancelled"));
  }

  private boolean cancelFor(Throwable why) {
    List<Object> toCancel;
    lock.lock();
    try {
      toCancel = cancelLocked(why, false);
    } finally {
      lock.unlock();
    }
    finishCancel(toCancel);
    return toCancel != null;
  }

  /**
   * Leaves OPEN; returns what to cancel outside the lock, or null if it was not OPEN. Lock held.
   */
  @GuardedBy("lock")
  private @Nullable List<Object> cancelLocked(@Nullable Throwable why, boolean byTask) {
    if (state != OPEN) {
      return null;
    }
    state = CANCELLED;
    reason = why;
    failedByTask = byTask;
    changed.signalAll();
    pending++; // the cancel pass itself, until finishCancel has cancelled everything (S1)
    List<Object> toCancel = new ArrayList<>(tasks);
    toCancel.addAll(children);
    if (deadlineTimer != null) {
      toCancel.add(deadlineTimer);
      deadlineTimer = null;
    }
    return toCancel;
  }

  private void finishCancel(@Nullable List<Object> toCancel) {
    if (toCancel != null) {
      for (Object thing : toCancel) {
        if (thing instanceof ScopeTask) {
          ((ScopeTask<?>) thing).cancel();
        } else if (thing instanceof TaskScope) {
          ((TaskScope) thing).cancelByParent();
        } else {
          ((Future<?>) thing).cancel(false);
        }
      }
      lock.lock();
      try {
        pending--; // the cancel pass has reached everything: the scope may end now
      } finally {
        lock.unlock();
      }
    }
    endIfDone();
  }

  /** Runs the hooks and ends the scope if it is cancelled and nothing runs; see the overview. */
  private void endIfDone() {
    List<Runnable> toRun;
    lock.lock();
    try {
      if (state != CANCELLED || pending > 0) {
        return;
      }
      state = TEARING_DOWN;
      toRun = new ArrayList<>(hooks);
      hooks.clear();
    } finally {
      lock.unlock();
    }
    List<Throwable> thrown = new ArrayList<>();
    for (int i = toRun.size() - 1; i >= 0; i--) {
      try {
        toRun.get(i).run();
      } catch (Throwable t) { // every hook runs; what they throw is reported, see teardown()
        thrown.add(t);
      }
    }
    lock.lock();
    try {
      hookFailures.addAll(thrown);
      Throwable r = reason;
      if (r != null) {
        thrown.forEach(r::addSuppressed);
      }
      state = ENDED;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    TaskScope p = parent;
    if (p != null) {
      Objects.requireNonNull(parentTask).untrack(this);
      p.childEnded(this);
    }
  }

  // ---------------------------------------------------------------- waiting

  @Override
  public void join() throws InterruptedException, ExecutionException {
    checkNotOwnTask("join");
    lock.lockInterruptibly();
    try {
      while (state != ENDED) {
        if (state == OPEN && pending == 0) {
          return;
        }
        changed.await();
      }
      Throwable r = reason;
      if (r == null) {
        return; // closed with nothing left running
      }
      hookFailuresReported = true;
      if (failedByTask) {
        throw new ExecutionException("a task of the scope failed", r);
      }
      throw (CancellationException) r;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    checkNotOwnTask("close");
    List<Object> toCancel;
    lock.lock();
    try {
      closed = true;
      toCancel =
          cancelLocked(
              pending == 0
                  ? null
                  : new CancellationException(
                      "the scope was closed while " + pending + " of its tasks ran"),
              false);
    } finally {
      lock.unlock();
    }
    finishCancel(toCancel);
    boolean interrupted = false;
    lock.lock();
    try {
      while (state != ENDED) {
        try {
          changed.await();
        } catch (InterruptedException e) {
          interrupted = true; // a task must not outlive its scope: wait on, keep the interrupt
        }
      }
      if (reason == null && !hookFailures.isEmpty() && !hookFailuresReported) {
        hookFailuresReported = true;
        Throwable first = hookFailures.get(0);
        hookFailures.subList(1, hookFailures.size()).forEach(first::addSuppressed);
        if (first instanceof Error) {
          throw (Error) first;
        }
        throw first instanceof RuntimeException
            ? (RuntimeException) first
            : new IllegalStateException("a teardown hook failed", first);
      }
    } finally {
      lock.unlock();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void checkNotOwnTask(String what) {
    ScopeTask<?> current = ScopeTask.current();
    if (current != null && current.scope == this) {
      throw new IllegalStateException(
          "a task of the scope cannot " + what + " it: it would wait for itself");
    }
  }

  // ---------------------------------------------------------------- inspection

  @Override
  public boolean isCancelled() {
    lock.lock();
    try {
      return state != OPEN;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<Throwable> failures() {
    lock.lock();
    try {
      return List.copyOf(failures);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      String[] names = {"open", "cancelled", "tearing down", "ended"};
      return "Scope["
          + names[state]
          + ", "
          + pending
          + " running"
          + (supervisor ? ", supervisor" : "")
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
