package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.engine.WaitTracking;
import dev.jeton.internal.engine.WithdrawingFuture;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * One task of a {@link TaskScope}: what runs it (and the default executor), the future {@code fork}
 * returned, and what a cancel of the task must reach besides it (the Jeton waits it queued, the
 * scopes opened in it).
 */
final class ScopeTask<T extends @Nullable Object> implements WaitTracking.Tracker {
  /*
   * Overview
   *
   * A task is blocking (`call` runs on the scope's executor; a cancel interrupts it) or
   * asynchronous (`stage`, stored once its supplier returned; a cancel cancels it). While its
   * body runs on a thread, it is the thread's tracker in the engine (WaitTracking): so
   * Scope.open() finds the parent of a child scope, and the engine's WaitQueue hands it every
   * asynchronous request it queues there (track, the engine's one hook: one thread-local
   * read, on the path of a request that has to wait). The engine's delivery loop takes the task
   * off the thread while it completes futures (WaitTracking.suspend, resume): their callbacks are
   * other code, run there only because the task granted or sent.
   *
   * `tracked` holds what the task's cancel must also cancel: the futures of its queued Jeton
   * waits, which leave the set once their outcome is delivered, and its child scopes, which leave
   * it when they end. `cancelled` and `tracked` change together under the task's monitor, so a
   * thing tracked while the task is being cancelled is either in the snapshot the cancel takes or
   * sees `cancelled` and is cancelled by the tracker. Cancels run outside the monitor. The
   * monitor is taken inside the scope's lock (isCancelled), never the other way round.
   *
   * The stage of an asynchronous task depends on its waits (`lock.lockAsync().thenAccept(...)`),
   * and a grant must never be lost between them: so the cancel withdraws the waits first and
   * cancels the stage last, once every wait it withdrew has been delivered. Each interleaving of
   * a grant with the withdrawal of its wait and the cancel of the stage then ends the same way:
   *   - the withdrawal wins the wait's claim (WithdrawingFuture): the wait leaves its queue, a
   *     grant made first is given back, and the stage sees the wait cancelled;
   *   - the grant's settle wins: the withdrawal is refused, and the stage is cancelled only after
   *     the grant's completion has returned, so the steps of the stage that the grant reached
   *     (the thenAccept that unlocks) have run. Cancelling the stage before that would make
   *     CompletableFuture skip them (a dependent already completed never runs its action), and
   *     withdrawing first alone would not do: a wait granted just before its withdrawal may not
   *     have run its callbacks yet.
   *   Invariant T1: after cancel(), the stage is cancelled exactly when `undelivered` has come
   *   down to 0 and the stage is known; `undelivered` counts the waits the cancel (or a tracker,
   *   after it) withdrew whose outcome is not delivered yet, plus one while the cancel runs.
   * Steps that a grant runs asynchronously (thenAcceptAsync), and waits queued by later steps on
   * other threads, are outside this: the stage's cancel can skip them, as any CompletableFuture
   * cancel skips its dependents (Scope's javadoc says so).
   *
   * The fork future is a WithdrawingFuture: a completion from outside claims it, cancels the
   * task (the waits withdrawn first, as above), and only then completes it, so that its callbacks
   * find the waits gone and a grant that came first given back. The task's end settles it, and
   * loses to such a claim.
   *
   * The task ends once, by `ended`'s CAS: when its call has really left (BlockingCall.settled),
   * when its stage completes, or when it never started (the executor refused it, the supplier
   * threw). Ending completes the user's future first, then tells the scope once that completion
   * is delivered (whenDelivered: a completion from outside that won may still be cancelling the
   * task, and the end may even run inside it), so that every fork future is done when join()
   * returns. A task the scope refuses (forked after its cancel) is ended at birth by refuse(),
   * which does not tell the scope: the scope never counted it, and nothing may end it into the
   * scope later (a cancel of its future loses the claim to refuse's settle).
   */

  final TaskScope scope;

  /** What fork returned. */
  final TaskFuture<T> future = new TaskFuture<>(this);

  /** The blocking call, or null for an asynchronous task. Set once, before sharing. */
  final @Nullable BlockingCall<T> call;

  /** The asynchronous task's stage, once its supplier returned. */
  @GuardedBy("this")
  private @Nullable CompletionStage<T> stage;

  private final AtomicBoolean ended = new AtomicBoolean();

  @GuardedBy("this")
  private boolean cancelled;

  /** Futures of queued Jeton waits, child scopes. */
  @GuardedBy("this")
  private final Set<Object> tracked = new LinkedHashSet<>();

  /** See T1 in the overview. */
  @GuardedBy("this")
  private int undelivered;

  private ScopeTask(TaskScope scope, @Nullable BlockingTask<T, ?> body) {
    this.scope = scope;
    if (body == null) {
      this.call = null;
    } else {
      BlockingCall<T> c = new BlockingCall<>(() -> runInside(body));
      this.call = c;
      var unused = c.settled().whenComplete(this::end);
    }
  }

  static <T extends @Nullable Object> ScopeTask<T> blocking(
      TaskScope scope, BlockingTask<T, ?> body) {
    return new ScopeTask<>(scope, body);
  }

  static <T extends @Nullable Object> ScopeTask<T> async(TaskScope scope) {
    return new ScopeTask<>(scope, null);
  }

  /** The task whose body runs on this thread, or null. */
  static @Nullable ScopeTask<?> current() {
    // A scope's task is the only tracker there is.
    return WaitTracking.current() instanceof ScopeTask<?> task ? task : null;
  }

  /**
   * A Jeton wait queued on this thread by a task of a scope is tracked by the task, so that
   * cancelling it withdraws the wait. Outside any scope, one thread-local read.
   */
  static void trackWait(WithdrawingFuture<?> wait) {
    WaitTracking.track(wait);
  }

  /**
   * Takes the task off this thread while other code's callbacks run on it: a wait they queue is not
   * this task's. Returns the task, or null, for {@link #resume}.
   */
  static @Nullable ScopeTask<?> suspend() {
    return WaitTracking.suspend() instanceof ScopeTask<?> task ? task : null;
  }

  /** Puts back the task {@link #suspend} took off this thread, if any. */
  static void resume(@Nullable ScopeTask<?> task) {
    WaitTracking.resume(task);
  }

  /** Runs {@code body} with this task as the thread's current one. */
  private T runInside(BlockingTask<T, ?> body) throws Exception {
    WaitTracking.Tracker outer = WaitTracking.enter(this);
    try {
      return body.call();
    } finally {
      WaitTracking.exit(outer);
    }
  }

  /** Calls the asynchronous task's supplier inside the task, and follows its stage. */
  void startAsync(java.util.function.Supplier<? extends CompletionStage<T>> supplier) {
    WaitTracking.Tracker outer = WaitTracking.enter(this);
    CompletionStage<T> s;
    try {
      s = java.util.Objects.requireNonNull(supplier.get(), "the task returned a null stage");
    } catch (Throwable failure) {
      end(null, failure);
      return;
    } finally {
      WaitTracking.exit(outer);
    }
    boolean cancelNow;
    synchronized (this) {
      stage = s;
      cancelNow = cancelled && undelivered == 0; // cancelled while the supplier ran (T1)
    }
    if (cancelNow) {
      cancelStage(s);
    }
    var unused = Tasks.settled(s).whenComplete(this::end);
  }

  /**
   * Ends a task the scope refused: never counted, never to run (fork does not hand its call to the
   * executor); its future fails with {@code why}.
   */
  void refuse(Throwable why) {
    ended.set(true); // before the future is done, so that nothing reached from it ends the task
    future.settleExceptionally(why);
  }

  /**
   * Ends the task once: completes its future, then tells its scope, once the future's completion
   * has returned: its own, or that of a completion from outside which gave the task up and is
   * cancelling it on another thread (or on this one, which reached the end from inside it).
   */
  @SuppressWarnings("NullAway") // value is the task's result (a T, null only if T allows it)
  void end(@Nullable T value, @Nullable Throwable failure) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    if (failure == null) {
      future.settle(value);
    } else {
      future.settleExceptionally(failure);
    }
    future.whenDelivered(() -> scope.taskEnded(this, failure));
  }

  /** How many waits and child scopes the task tracks now: for tests of the deregistration. */
  synchronized int trackedCount() {
    return tracked.size();
  }

  synchronized boolean isCancelled() {
    return cancelled;
  }

  /**
   * Tracks a wait; withdraws it at once if the task is cancelled already. The engine's hook, while
   * this task's body runs on the thread: see the overview.
   */
  @Override
  public void track(WithdrawingFuture<?> wait) {
    boolean withdrawNow;
    synchronized (this) {
      withdrawNow = cancelled;
      if (withdrawNow) {
        undelivered++; // T1: the stage waits for this one too
      } else {
        tracked.add(wait);
      }
    }
    if (withdrawNow) {
      withdraw(wait);
    } else {
      // Untracked once its outcome is delivered, whichever way it left its queue.
      wait.whenDelivered(() -> untrack(wait));
    }
  }

  /** Tracks a child scope; cancels it at once if the task is cancelled already. */
  void track(TaskScope child) {
    synchronized (this) {
      if (!cancelled) {
        tracked.add(child);
        return;
      }
    }
    child.cancelByParent();
  }

  synchronized void untrack(Object thing) {
    tracked.remove(thing);
  }

  /**
   * Cancels the task: its call, its queued waits, its child scopes, and last its stage (T1). Once.
   */
  void cancel() {
    List<Object> things;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      things = new ArrayList<>(tracked);
      tracked.clear();
      undelivered = 1; // the cancel itself, until it has reached every wait
      for (Object thing : things) {
        undelivered += thing instanceof WithdrawingFuture ? 1 : 0;
      }
    }
    BlockingCall<T> c = call;
    if (c != null) {
      c.cancel();
    }
    for (Object thing : things) {
      if (thing instanceof TaskScope) {
        ((TaskScope) thing).cancelByParent();
      } else {
        withdraw((WithdrawingFuture<?>) thing);
      }
    }
    waitDelivered(); // the cancel's own count
  }

  /** Withdraws a wait counted in {@code undelivered}, and counts it out once delivered. */
  private void withdraw(WithdrawingFuture<?> wait) {
    wait.cancel(false); // refused if a grant won it: then its delivery is on its way
    wait.whenDelivered(this::waitDelivered);
  }

  /** One wait of T1 is delivered: cancels the stage when it was the last. */
  private void waitDelivered() {
    CompletionStage<T> s;
    synchronized (this) {
      if (--undelivered > 0) {
        return;
      }
      s = stage; // null while the supplier runs: startAsync cancels it then
    }
    if (s != null) {
      cancelStage(s);
    }
  }

  private static void cancelStage(CompletionStage<?> s) {
    try {
      s.toCompletableFuture().cancel(true);
    } catch (UnsupportedOperationException notAFuture) {
      // A stage that cannot be cancelled: the scope waits for it to complete (see Scope).
    }
  }

  /** A virtual thread per task on JDK 21+, else a platform daemon thread per task. */
  static Executor defaultExecutor() {
    try {
      // Thread.ofVirtual().name("jeton-scope-", 0).factory(), through reflection: the library
      // compiles for JDK 17.
      Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
      Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
      builder =
          ofVirtual.getMethod("name", String.class, long.class).invoke(builder, "jeton-scope-", 0L);
      ThreadFactory factory =
          (ThreadFactory)
              Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
      return task -> factory.newThread(task).start();
    } catch (ReflectiveOperationException | RuntimeException beforeJdk21) {
      AtomicLong count = new AtomicLong();
      return task -> {
        Thread thread = new Thread(task, "jeton-scope-" + count.getAndIncrement());
        thread.setDaemon(true);
        thread.start();
      };
    }
  }

  /**
   * The future fork returns. A completion from outside (cancel, complete, a failure, so {@code
   * orTimeout} and {@code completeOnTimeout} too) gives the task up: by {@link WithdrawingFuture}'s
   * one rule it is claimed first, then the task is cancelled (its waits withdrawn, a grant that
   * came first given back), and only then does the future complete, so that its callbacks find the
   * task's waits gone. The task's own end settles it ({@code settle}).
   */
  static final class TaskFuture<T extends @Nullable Object> extends WithdrawingFuture<T> {
    private final ScopeTask<T> task;

    TaskFuture(ScopeTask<T> task) {
      this.task = task;
    }

    @Override
    protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
      task.cancel();
      complete.run();
    }
  }
}
