package dev.jeton;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The wait-queue engine that every waiting primitive of this package shares, as {@code
 * AbstractQueuedSynchronizer} serves the locks of {@code java.util.concurrent}: one FIFO queue of
 * blocking and asynchronous requests, their withdrawal, their delivery, and their timers. What a
 * request asks for, and when it is granted, is the subclass's business ({@link FifoSemaphore},
 * {@link FifoBarrier}).
 */
abstract class WaitQueue {
  /*
   * Overview
   *
   * Requests that wait are WaitNodes in a doubly linked queue, guarded by `lock`. A node leaves
   * the queue only under the lock, and its status leaves WAITING at the same moment: granted or
   * failed by the subclass (which unlinks them with unlinkRun or removeLocked and returns them
   * chained through `next`), or withdrawn (withdraw: cancel, timeout, interrupt). After a
   * withdrawal the subclass re-examines the queue at once (afterWithdrawLocked), so a request
   * that gives up at the head never strands the ones behind it.
   *
   * Invariants:
   *   Q1. A node is linked if and only if its status is WAITING.
   *   Q2. A node's status leaves WAITING exactly once, under the lock; from SETTLING it becomes
   *       final exactly once, without the lock, before the node is delivered.
   *   Q3. Every node that leaves the queue is delivered exactly once, after the lock is released
   *       (a withdrawn node needs none: its requester is the one withdrawing it).
   *   Q4. A future is never done while its node is linked, and a grant that reaches no one is
   *       given back before the future that gave it up completes: so the callbacks of a
   *       cancelled, timed-out or failed future see the request gone from queueLength and what
   *       it was granted back in the primitive's counts.
   *
   * Delivery. Blocked threads are unparked, futures completed, never under the lock. Completing a
   * future runs its callbacks, which may release, which may grant and complete another future:
   * to keep that in constant stack, each thread delivers through a thread-local trampoline, and
   * a delivery started inside another one is queued for the outer loop instead of recursing. The
   * trampoline is per thread, not per queue: a delivery that releases another primitive queues
   * that one's nodes here, and each node is completed by its own queue.
   *
   * A future completed from outside (cancel, its timer, any completion: WithdrawingFuture's one
   * rule) withdraws its node here, in withdrawFromOutside, and only here. The future's claim is
   * won first, so from then on the owner's settle fails; then, under the lock, the node is
   * unlinked if it still waits, or, if a grant reached it first, the grant is given back
   * (giveBackLocked); only then is the future completed, so that its callbacks find the request
   * gone and its grant back (Q4); then the grants the withdrawal made are delivered, in the order
   * the future's completion used to come first. The owner whose settle failed does nothing more:
   * whoever wins the claim gives the grant back, exactly once. A primitive whose grant cannot be
   * given back (a channel's value, once handed over) claims the node first
   * (WaitNode.claimForOutcome, under the lock): a completion from outside is then refused, and
   * a blocked thread interrupted after the grant keeps it (keepsOutcomeWhenInterrupted). A node
   * whose future was claimed from outside first may be unlinked by the primitive before its
   * withdrawal comes; the withdrawal then finds it gone and says so (leftBeforeWithdrawal), on
   * the thread that gave it up.
   *
   * Timers. A timed asynchronous request gets its timer after it is queued, so it may be granted
   * or withdrawn before the timer is stored; WithdrawingFuture settles that race. One daemon
   * thread runs every timer of every queue.
   *
   * Blocking waiters. A blocked thread spins briefly (busy-waits, then yields) while it is at the
   * head of the queue before it parks, and when a grant moves a new blocking waiter to the head,
   * the granter unparks it ahead of its turn ("prewake") so that it is spinning, not parked, when
   * its grant comes. This is what makes a strict FIFO handoff cost a cache miss rather than a
   * context switch. The spin budget is spent once per request (a node reaches the head once),
   * never refilled by a wake-up, and every step first looks at the interrupt and the deadline.
   *
   * Scopes. An asynchronous request that queues on a thread running a task of a Scope is
   * tracked by that task (ScopeTask.trackWait, in futureOf) until its outcome is delivered, so
   * that cancelling the scope cancels the future, which withdraws the request by the one rule
   * above; the task cancels its stage only once that outcome is delivered (ScopeTask).
   * A blocking request needs nothing: the scope interrupts its thread. The check is one
   * thread-local read, made only by requests that queue, never on a grant without waiting. The
   * outermost delivery loop runs with no task on its thread (ScopeTask.suspend): the callbacks
   * of the futures it completes are not the task's, though a release or send of the task ran
   * them, so a request they queue is not tracked by it (one more thread-local read a delivery).
   *
   * Field access follows the rule in package-info.java. `queueLength` and `tail` are plain,
   * guarded by the lock. `head` is written under the lock but read without it (a blocked waiter
   * asking whether to spin, prewakeHead), so it is volatile: a stale answer there costs one park
   * or one needless unpark, never a lost grant (the grant unparks).
   */

  /**
   * How long the head waiter stays awake before parking: this many busy-wait steps, then this many
   * {@code Thread.yield()}s, which hand the core to the holder when threads outnumber cores. Chosen
   * with ContendedBenchmark (see BENCHMARKS.md).
   */
  private static final int SPIN_WAITS = 1 << 10;

  private static final int SPIN_YIELDS = 1 << 12;

  /** The whole spin budget, in steps. */
  static final int SPIN_STEPS = SPIN_WAITS + SPIN_YIELDS;

  private static final ThreadLocal<Trampoline> TRAMPOLINE =
      ThreadLocal.withInitial(Trampoline::new);

  final ReentrantLock lock = new ReentrantLock();

  private final @Nullable Executor completionExecutor;
  final @Nullable StatsRecorder stats;
  private final Timers timers;

  /** Run at every step of the spin: null except in tests that watch the spin. */
  private final @Nullable Runnable spinStep;

  /** Guarded by the lock. */
  private int queueLength;

  /** Written under the lock; read without it, see the overview. */
  private volatile @Nullable WaitNode head;

  private @Nullable WaitNode tail;

  WaitQueue(
      @Nullable Executor completionExecutor,
      @Nullable StatsRecorder stats,
      Timers timers,
      @Nullable Runnable spinStep) {
    this.completionExecutor = completionExecutor;
    this.stats = stats;
    this.timers = timers;
    this.spinStep = spinStep;
  }

  // ---------------------------------------------------------------- what the subclass decides

  /**
   * Re-examines the queue after a node left it by withdrawal; returns the nodes now granted,
   * unlinked and chained. Lock held.
   */
  abstract @Nullable WaitNode afterWithdrawLocked();

  /** The value a granted asynchronous request's future completes with. */
  abstract @Nullable Object grantedValue(WaitNode node);

  /**
   * Gives back the grant of {@code node}, which reached no one: its future was completed from
   * outside first, or its blocked thread was interrupted; returns the nodes that this grants,
   * unlinked and chained. Lock held.
   */
  abstract @Nullable WaitNode giveBackLocked(WaitNode node);

  /** The exception for a node that left with a failure status. */
  abstract RuntimeException failure(WaitNode node);

  /**
   * Whether a blocked request whose thread is interrupted after its outcome was decided (it could
   * no longer be withdrawn) gets that outcome, returning or throwing its failure with the interrupt
   * status set again, rather than InterruptedException (its grant given back): for an outcome that
   * cannot be given back, such as a channel's value handed over or a barrier's arrival counted.
   * False by default.
   */
  boolean keepsOutcomeWhenInterrupted(WaitNode node) {
    return false;
  }

  /**
   * Called after {@code node} was withdrawn (cancel, timeout, interrupt) and the queue re-examined,
   * without the lock, on the withdrawing thread. Does nothing by default.
   */
  void withdrawn(WaitNode node) {}

  /**
   * Called when a completion of {@code node}'s future from outside (cancel, timeout) went to
   * withdraw it and found it already out of the queue: the subclass took it out meanwhile (a
   * channel unlinks a node whose future was completed from outside when it meets it). Without the
   * lock, on the withdrawing thread. Does nothing by default.
   */
  void leftBeforeWithdrawal(WaitNode node) {}

  /**
   * Whether the future of {@code node} may be completed from outside, which then withdraws it:
   * unless the primitive has claimed the node for an outcome that cannot be given back ({@link
   * WaitNode#claimForOutcome}). Called before each completion from outside, without the lock.
   */
  boolean mayGiveUp(WaitNode node) {
    return node.claimForWithdrawal();
  }

  /** The exception for a request that waited {@code timeout} in vain. */
  abstract TimeoutException timeoutException(WaitNode node, Duration timeout);

  // ---------------------------------------------------------------- the queue (lock held)

  final @Nullable WaitNode head() {
    return head;
  }

  final int queueLengthLocked() {
    return queueLength;
  }

  final void append(WaitNode w) {
    w.prev = tail;
    if (tail == null) {
      head = w;
    } else {
      tail.next = w;
    }
    tail = w;
    int length = queueLength + 1;
    queueLength = length;
    StatsRecorder s = stats;
    if (s != null) {
      w.queuedAt = System.nanoTime();
      s.queued(length);
    }
  }

  private void unlink(WaitNode w) {
    WaitNode prev = w.prev;
    WaitNode next = w.next;
    if (prev == null) {
      head = next;
    } else {
      prev.next = next;
    }
    if (next == null) {
      tail = prev;
    } else {
      next.prev = prev;
    }
    w.prev = null;
    w.next = null;
    queueLength--;
  }

  /**
   * Unlinks the run of nodes from the head up to {@code newHead} (exclusive, null for all), gives
   * them {@code status}, and returns them chained through {@code next}.
   */
  final @Nullable WaitNode unlinkRun(@Nullable WaitNode newHead, int status) {
    WaitNode first = head;
    if (first == null || first == newHead) {
      return null;
    }
    StatsRecorder st = status == WaitNode.GRANTED ? stats : null;
    long now = st != null ? System.nanoTime() : 0L;
    for (WaitNode w = first; w != null && w != newHead; w = w.next) {
      w.status = status;
      queueLength--;
      if (st != null && w.weight != 0) {
        st.granted(now - w.queuedAt);
      }
    }
    // The run keeps its `next` links as the delivery chain; cut it from the queue.
    WaitNode last = newHead == null ? tail : newHead.prev;
    Objects.requireNonNull(last).next = null;
    first.prev = null;
    head = newHead;
    if (newHead == null) {
      tail = null;
    } else {
      newHead.prev = null;
    }
    return first;
  }

  /** Unlinks the nodes that match, with {@code status}; returns them chained. */
  final @Nullable WaitNode removeLocked(Predicate<WaitNode> test, int status) {
    WaitNode first = null;
    WaitNode last = null;
    for (WaitNode w = head; w != null; ) {
      WaitNode next = w.next;
      if (test.test(w)) {
        unlink(w);
        w.status = status;
        if (last == null) {
          first = w;
        } else {
          last.next = w;
        }
        last = w;
      }
      w = next;
    }
    return first;
  }

  static @Nullable WaitNode concat(@Nullable WaitNode a, @Nullable WaitNode b) {
    if (a == null) {
      return b;
    }
    WaitNode end = a;
    while (end.next != null) {
      end = end.next;
    }
    end.next = b;
    return a;
  }

  // ---------------------------------------------------------------- withdrawal and delivery

  /**
   * Takes a waiting request out of the queue. Returns false if it had already left (granted,
   * failed, or settling), in which case its status tells, or will tell, the outcome.
   */
  final boolean withdraw(WaitNode w, int reason) {
    WaitNode delivered;
    lock.lock();
    try {
      if (w.status != WaitNode.WAITING) {
        return false;
      }
      delivered = withdrawLocked(w, reason);
    } finally {
      lock.unlock();
    }
    deliver(delivered);
    withdrawn(w);
    return true;
  }

  /** Unlinks a waiting node with {@code reason}; returns what the queue then grants. Lock held. */
  private @Nullable WaitNode withdrawLocked(WaitNode w, int reason) {
    unlink(w);
    w.status = reason;
    StatsRecorder s = stats;
    if (s != null) {
      s.withdrawn(reason);
    }
    return afterWithdrawLocked();
  }

  /**
   * Withdraws the node of a future that a completion from outside has claimed, and runs {@code
   * complete}, which completes the future; see the overview. Takes the node out if it still waits,
   * else gives back the grant that reached it first; then completes the future; then delivers what
   * the withdrawal granted, and tells the subclass.
   */
  final void withdrawFromOutside(WaitNode w, int reason, Runnable complete) {
    WaitNode delivered = null;
    boolean withdrawn = false;
    lock.lock();
    try {
      if (w.status == WaitNode.WAITING) {
        delivered = withdrawLocked(w, reason);
        withdrawn = true;
      } else if (w.status == WaitNode.GRANTED) {
        delivered = giveBackLocked(w); // its settle fails: the claim is ours
      } // else failed, or settling an outcome that is never given back (a barrier's)
    } finally {
      lock.unlock();
    }
    try {
      complete.run();
    } finally {
      deliver(delivered);
    }
    if (withdrawn) {
      withdrawn(w);
    } else {
      leftBeforeWithdrawal(w);
    }
  }

  /** Gives back the grant of a node that reached no one, and delivers what that grants. */
  private void giveBack(WaitNode w) {
    WaitNode delivered;
    lock.lock();
    try {
      delivered = giveBackLocked(w);
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /** Delivers a chain of nodes that left the queue; see "Delivery" in the overview. */
  final void deliver(@Nullable WaitNode chain) {
    if (chain == null) {
      prewakeHead();
      return;
    }
    Trampoline t = TRAMPOLINE.get();
    for (WaitNode w = chain; w != null; ) {
      WaitNode next = w.next;
      w.next = null;
      t.pending.add(w);
      w = next;
    }
    prewakeHead();
    if (t.running) {
      return; // an outer deliver() on this thread will get to them
    }
    t.running = true;
    ScopeTask<?> task = ScopeTask.suspend(); // see "Scopes" in the overview
    try {
      WaitNode w;
      while ((w = t.pending.poll()) != null) {
        deliverOne(w);
      }
    } finally {
      t.running = false;
      ScopeTask.resume(task);
    }
  }

  /** Delivers one node, which may belong to another queue: its own queue completes it. */
  private static void deliverOne(WaitNode w) {
    Thread thread = w.thread();
    if (thread != null) {
      LockSupport.unpark(thread);
      return;
    }
    WaitNode.NodeFuture<?> future = w.future();
    if (future == null) {
      Objects.requireNonNull(w.selection()).delivered(w);
      return;
    }
    WaitQueue queue = future.queue;
    if (queue.completionExecutor == null) {
      queue.complete(w); // no executor: no need to wrap the completion
    } else {
      queue.runCompletion(() -> queue.complete(w));
    }
  }

  /** Runs the completion of a future on the completion executor, if any, else here. */
  final void runCompletion(Runnable completion) {
    Executor executor = completionExecutor;
    if (executor == null) {
      completion.run();
      return;
    }
    try {
      executor.execute(completion);
    } catch (RuntimeException rejected) { // RejectedExecutionException, or a broken executor
      completion.run(); // a grant must reach its requester, or it is stranded
    }
  }

  /** Completes the future of a delivered asynchronous node with its outcome. */
  @SuppressWarnings("unchecked")
  private void complete(WaitNode w) {
    WaitNode.NodeFuture<@Nullable Object> f =
        (WaitNode.NodeFuture<@Nullable Object>) Objects.requireNonNull(w.future());
    f.stopTimer();
    if (w.status == WaitNode.GRANTED) {
      if (!f.isGivenUp()) { // else the completion from outside that won gives the grant back
        var unused = f.settle(grantedValue(w)); // false only for the same reason
      }
    } else {
      f.settleExceptionally(failure(w));
    }
  }

  /**
   * Whether the head waiter spins and is prewoken now. A barrier's head is only the first to
   * arrive, waiting for the last one: spinning there pays when every party has a core of its own,
   * and burns the cores the others need to get there when they do not.
   */
  boolean spinAtHead() {
    return true; // the head is next in line for a handoff
  }

  /**
   * The record by which a waiter at the head decides whether to spin briefly before it first parks
   * (BriefSpin), for a queue whose head waits for another thread that may well be running: a
   * channel's; null for the others.
   */
  BriefSpin.@Nullable Score briefSpin() {
    return null;
  }

  /**
   * Unparks a blocking waiter newly at the head so that it spins, rather than sleeps, into its
   * grant.
   */
  final void prewakeHead() {
    if (!spinAtHead()) {
      return;
    }
    WaitNode h = head; // without the lock: a stale answer costs one needless unpark or one park
    if (h == null) {
      return;
    }
    Thread thread = h.thread();
    if (thread != null && h.claimPrewake()) {
      LockSupport.unpark(thread);
    }
  }

  // ---------------------------------------------------------------- waiting

  /**
   * Waits for the outcome of a queued blocking node, up to {@code nanos} unless that is {@code
   * Long.MAX_VALUE} ({@code timeout} is the same wait, for the message). Returns when it is
   * granted; throws its failure, or TimeoutException or InterruptedException after withdrawing it.
   *
   * <p>Every turn of the loop looks at the interrupt, then the outcome, then the deadline, and only
   * then spins one step or parks: so a spinning waiter sees an interrupt or its deadline at the
   * next step. The interrupt comes first: an interrupted request that can still be withdrawn
   * throws; one whose outcome was decided meanwhile gives back its grant and throws, unless the
   * outcome cannot be given back (keepsOutcomeWhenInterrupted).
   */
  @SuppressWarnings("ThreadPriorityCheck") // yield hands the core to the holder; see SPIN_YIELDS
  final void awaitBlocking(WaitNode w, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    long start = System.nanoTime();
    boolean timed = nanos != Long.MAX_VALUE;
    int spins = spinAtHead() ? SPIN_STEPS : 0;
    BriefSpin.Score briefSpin = briefSpin();
    if (briefSpin != null && head == w) {
      BriefSpin.await(w, briefSpin); // the loop below sees what happened meanwhile
    }
    for (; ; ) {
      if (Thread.interrupted()) {
        if (!withdraw(w, WaitNode.CANCELLED)) {
          awaitFinal(w);
          if (keepsOutcomeWhenInterrupted(w)) {
            Thread.currentThread().interrupt(); // the interrupt came too late, but is kept
            if (w.status == WaitNode.GRANTED) {
              return;
            }
            throw failure(w);
          }
          if (w.status == WaitNode.GRANTED) {
            giveBack(w); // granted as we were interrupted
          }
        }
        throw new InterruptedException();
      }
      int status = w.status;
      if (status == WaitNode.GRANTED) {
        return;
      }
      if (status == WaitNode.SETTLING) {
        LockSupport.park(this); // no longer withdrawable; its outcome unparks us
        continue;
      }
      if (status != WaitNode.WAITING) {
        throw failure(w);
      }
      long remaining = timed ? nanos - (System.nanoTime() - start) : Long.MAX_VALUE;
      if (remaining <= 0L) {
        if (withdraw(w, WaitNode.TIMED_OUT)) {
          throw timeoutException(w, timeout != null ? timeout : Duration.ofNanos(nanos));
        }
        continue; // left the queue meanwhile: the status says how
      }
      if (spins > 0 && head == w) {
        spins--;
        Runnable hook = spinStep;
        if (hook != null) {
          hook.run();
        }
        if (spins >= SPIN_YIELDS) {
          Thread.onSpinWait();
        } else {
          Thread.yield();
        }
      } else if (timed) {
        LockSupport.parkNanos(this, remaining);
      } else {
        LockSupport.park(this);
      }
    }
  }

  /**
   * Waits, ignoring interrupts (the caller has one to report), until the node's status is final.
   */
  private void awaitFinal(WaitNode w) {
    while (!w.isFinal()) {
      LockSupport.park(this);
    }
  }

  /**
   * The future of an asynchronous node that {@code enqueued} says was queued (true) or already left
   * (false: granted or failed at once, and delivered here). A timed one gets its timer, which fails
   * it with {@code onTimeout}'s exception.
   */
  @SuppressWarnings("unchecked")
  final <T> CompletableFuture<T> futureOf(
      WaitNode w, boolean enqueued, long nanos, Supplier<TimeoutException> onTimeout) {
    WaitNode.NodeFuture<T> future = (WaitNode.NodeFuture<T>) Objects.requireNonNull(w.future());
    if (!enqueued) {
      complete(w); // never queued: this is the requester's own stack, not a releaser's
    } else if (nanos != Long.MAX_VALUE) {
      // The request may be granted or withdrawn before its timer is stored: setTimer and
      // stopTimer settle that race, so the timer never outlives the request.
      future.setTimer(timers.start(() -> future.completeExceptionally(onTimeout.get()), nanos));
    }
    if (enqueued) {
      // A request queued by a task of a Scope is withdrawn when the scope is cancelled. Outside
      // any scope this costs one thread-local read, and only on the path of a request that waits.
      ScopeTask.trackWait(future);
    }
    return future;
  }

  /**
   * The number of queued requests. Takes the lock: a subclass changes the queue and its own state
   * together under it.
   */
  public int queueLength() {
    lock.lock();
    try {
      return queueLength;
    } finally {
      lock.unlock();
    }
  }

  /** Per-thread queue of deliveries; see "Delivery" in the overview. */
  private static final class Trampoline {
    final ArrayDeque<WaitNode> pending = new ArrayDeque<>();
    boolean running;
  }

  /** Starts the timer of a timed asynchronous request; tests give their own. */
  @FunctionalInterface
  interface Timers {
    /** Runs {@code onTimeout} after {@code nanos} unless the returned future is cancelled. */
    Future<?> start(Runnable onTimeout, long nanos);

    /** The timer every queue uses unless a test gives its own: one daemon thread. */
    static Timers shared() {
      return TimeoutScheduler::start;
    }
  }

  /** The timer for timed asynchronous requests: one daemon thread, started on first use. */
  private static final class TimeoutScheduler {
    static final ScheduledThreadPoolExecutor INSTANCE = create();

    static Future<?> start(Runnable onTimeout, long nanos) {
      return INSTANCE.schedule(onTimeout, nanos, TimeUnit.NANOSECONDS);
    }

    private static ScheduledThreadPoolExecutor create() {
      ScheduledThreadPoolExecutor executor =
          new ScheduledThreadPoolExecutor(
              1,
              task -> {
                Thread thread = new Thread(task, "jeton-timeouts");
                thread.setDaemon(true);
                return thread;
              });
      executor.setRemoveOnCancelPolicy(true);
      return executor;
    }
  }
}
