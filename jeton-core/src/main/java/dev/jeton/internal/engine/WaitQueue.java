package dev.jeton.internal.engine;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The wait-queue engine that every waiting primitive of Jeton shares, as {@code
 * AbstractQueuedSynchronizer} serves the locks of {@code java.util.concurrent}: one FIFO queue of
 * blocking and asynchronous requests, their withdrawal, their delivery ({@link Delivery}), the
 * blocking wait ({@link BlockingWait}), and their timers. What a request asks for, and when it is
 * granted, is the subclass's business (a semaphore, a mutex, a barrier, a channel): it implements
 * the protected hooks, and changes the queue only through the protected final methods, under {@link
 * #lock}.
 */
public abstract class WaitQueue {
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
   * Delivery (Delivery): blocked threads are unparked, futures completed, never under the lock,
   * through a per-thread trampoline that keeps nested deliveries in constant stack.
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
   * or withdrawn before the timer is stored; WithdrawingFuture settles that race. The engine's one
   * Timer runs every timer of every queue, unless a test gives its own (Deadlines).
   *
   * Blocking waiters (BlockingWait): the head waiter spins briefly before it parks (Spin's head
   * spin), and when a grant moves a new blocking waiter to the head, the granter unparks it ahead
   * of its turn ("prewake", prewakeHead) so that it is spinning, not parked, when its grant comes.
   * A queue whose head may take its grant itself, instead of having it handed over (a mutex that
   * lets newcomers barge, decision 103), says so before each park of the head (tryTakeAtHead).
   *
   * Trackers. An asynchronous request that queues on a thread with a tracker (WaitTracking: a
   * task of a Scope, while its body runs there) is handed to it (in futureOf) until its outcome
   * is delivered, so that cancelling the tracker's owner cancels the future, which withdraws the
   * request by the one rule above. A blocking request needs nothing: the scope interrupts its
   * thread. The check is one thread-local read, made only by requests that queue, never on a
   * grant without waiting. The outermost delivery loop runs with no tracker on its thread.
   *
   * Field access follows the rule in package-info.java; @GuardedBy("lock") marks the fields the
   * lock guards and the methods called with it held, and the build checks every access. `head`
   * is written under the lock but read without it (a blocked waiter asking whether to spin,
   * prewakeHead), so it is volatile and unannotated: a stale answer there costs one park or one
   * needless unpark, never a lost grant (the grant unparks).
   */

  /** Guards the queue, and the subclass's state that changes with it. */
  protected final ReentrantLock lock = new ReentrantLock();

  final @Nullable Executor completionExecutor;

  /** The statistics, or null when they are off. */
  protected final @Nullable StatsRecorder stats;

  private final Deadlines timers;

  /** Run at every step of the head spin: null except in tests that watch the spin. */
  final @Nullable Runnable spinStep;

  /** Whether every queued node gets its arrival time, for statistics or for the subclass. */
  private final boolean stampsArrivals;

  @GuardedBy("lock")
  private int queueLength;

  /** Written under the lock; read without it, see the overview. */
  private volatile @Nullable WaitNode head;

  @GuardedBy("lock")
  private @Nullable WaitNode tail;

  /**
   * A queue whose futures complete on {@code completionExecutor} (null: on the thread that decides
   * them), with {@code stats} (null: none), whose timed requests start their timers on {@code
   * timers}; {@code spinStep} runs at every step of the head spin (null but in tests); with {@code
   * stampsArrivals} every queued node gets its arrival time ({@link WaitNode#waitedNanos}), as with
   * statistics.
   */
  protected WaitQueue(
      @Nullable Executor completionExecutor,
      @Nullable StatsRecorder stats,
      Deadlines timers,
      @Nullable Runnable spinStep,
      boolean stampsArrivals) {
    this.completionExecutor = completionExecutor;
    this.stats = stats;
    this.timers = timers;
    this.spinStep = spinStep;
    this.stampsArrivals = stampsArrivals || stats != null;
  }

  // ---------------------------------------------------------------- what the subclass decides

  /**
   * Re-examines the queue after a node left it by withdrawal; returns the nodes now granted,
   * unlinked and chained. Lock held.
   */
  @GuardedBy("lock")
  protected abstract @Nullable WaitNode afterWithdrawLocked();

  /**
   * Gives back the grant of {@code node}, which reached no one: its future was completed from
   * outside first, or its blocked thread was interrupted; returns the nodes that this grants,
   * unlinked and chained. Lock held.
   */
  @GuardedBy("lock")
  protected abstract @Nullable WaitNode giveBackLocked(WaitNode node);

  /** The exception for a node that left with a failure status. */
  protected abstract RuntimeException failure(WaitNode node);

  /**
   * Whether a blocked request whose thread is interrupted after its outcome was decided (it could
   * no longer be withdrawn) gets that outcome, returning or throwing its failure with the interrupt
   * status set again, rather than InterruptedException (its grant given back): for an outcome that
   * cannot be given back, such as a channel's value handed over or a barrier's arrival counted.
   * False by default.
   */
  protected boolean keepsOutcomeWhenInterrupted(WaitNode node) {
    return false;
  }

  /**
   * Called after {@code node} was withdrawn (cancel, timeout, interrupt) and the queue re-examined,
   * without the lock, on the withdrawing thread. Does nothing by default.
   */
  protected void withdrawn(WaitNode node) {}

  /**
   * Called when a completion of {@code node}'s future from outside (cancel, timeout) went to
   * withdraw it and found it already out of the queue: the subclass took it out meanwhile (a
   * channel unlinks a node whose future was completed from outside when it meets it). Without the
   * lock, on the withdrawing thread. Does nothing by default.
   */
  protected void leftBeforeWithdrawal(WaitNode node) {}

  /**
   * Whether the future of {@code node} may be completed from outside, which then withdraws it:
   * unless the primitive has claimed the node for an outcome that cannot be given back ({@link
   * WaitNode#claimForOutcome}). Called before each completion from outside, without the lock.
   */
  protected boolean mayGiveUp(WaitNode node) {
    return node.claimForWithdrawal();
  }

  /** The exception for a request that waited {@code timeout} in vain. */
  protected abstract TimeoutException timeoutException(WaitNode node, Duration timeout);

  // ---------------------------------------------------------------- the queue (lock held)

  /** The first waiter, or null. Lock held, or a hint without it. */
  protected final @Nullable WaitNode head() {
    return head;
  }

  /** The number of queued requests. Lock held. */
  @GuardedBy("lock")
  protected final int queueLengthLocked() {
    return queueLength;
  }

  /** Queues {@code w} at the tail. Lock held. */
  @GuardedBy("lock")
  protected final void append(WaitNode w) {
    w.prev = tail;
    if (tail == null) {
      head = w;
    } else {
      tail.next = w;
    }
    tail = w;
    int length = queueLength + 1;
    queueLength = length;
    if (stampsArrivals) {
      w.queuedAt = System.nanoTime();
    }
    StatsRecorder s = stats;
    if (s != null) {
      s.queued(length);
    }
  }

  @GuardedBy("lock")
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
   * them {@code status}, and returns them chained through {@code next}. Lock held.
   */
  @GuardedBy("lock")
  protected final @Nullable WaitNode unlinkRun(@Nullable WaitNode newHead, int status) {
    WaitNode first = head;
    if (first == null || first == newHead) {
      return null;
    }
    StatsRecorder st = status == WaitNode.GRANTED ? stats : null;
    long now = st != null ? System.nanoTime() : 0L;
    for (WaitNode w = first; w != null && w != newHead; w = w.next) {
      w.status = status;
      queueLength--;
      if (st != null && w.weight() != 0) {
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

  /** Unlinks the nodes that match, with {@code status}; returns them chained. Lock held. */
  @GuardedBy("lock")
  protected final @Nullable WaitNode removeLocked(Predicate<WaitNode> test, int status) {
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

  // ---------------------------------------------------------------- withdrawal and delivery

  /**
   * Takes a waiting request out of the queue. Returns false if it had already left (granted,
   * failed, or settling), in which case its status tells, or will tell, the outcome.
   */
  public final boolean withdraw(WaitNode w, int reason) {
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
  @GuardedBy("lock")
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
  void giveBack(WaitNode w) {
    WaitNode delivered;
    lock.lock();
    try {
      delivered = giveBackLocked(w);
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /** Delivers a chain of nodes that left the queue, without the lock; see {@link Delivery}. */
  protected final void deliver(@Nullable WaitNode chain) {
    Delivery.deliver(this, chain);
  }

  /** Runs the completion of a future on the completion executor, if any, else here. */
  public final void runCompletion(Runnable completion) {
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

  /**
   * Whether the head waiter spins and is prewoken now (asked once per wake-up of the head). A
   * barrier's head is only the first to arrive, waiting for the last one: spinning there pays when
   * every party has a core of its own, and burns the cores the others need to get there when they
   * do not.
   */
  protected boolean spinAtHead() {
    return true; // the head is next in line for a handoff
  }

  /**
   * Called by the blocked thread of {@code w} at the head of the queue before each park: for a
   * queue whose head may take its grant itself, rather than wait for it to be handed over (a lock
   * that newcomers may barge). Returns true if it granted {@code w}: unlinked, GRANTED, its outcome
   * set, with no delivery to come (its requester is the caller). If it does not grant, it must make
   * sure that the next release unparks {@code w}. Without the lock; false by default: the queues of
   * strict FIFO primitives hand every grant over.
   */
  protected boolean tryTakeAtHead(WaitNode w) {
    return false;
  }

  /**
   * The record by which a waiter at the head decides whether to spin briefly before it first parks
   * (Spin's brief spin), for a queue whose head waits for another thread that may well be running:
   * a channel's; null for the others.
   */
  protected Spin.@Nullable Score briefSpin() {
    return null;
  }

  /**
   * Unparks a blocking waiter newly at the head so that it spins, rather than sleeps, into its
   * grant.
   */
  protected final void prewakeHead() {
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
   * See {@link BlockingWait}.
   */
  protected final void awaitBlocking(WaitNode w, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    BlockingWait.await(this, w, nanos, timeout);
  }

  /**
   * The future of an asynchronous request that {@code enqueued} says was queued (true) or already
   * left (false: granted or failed at once, and delivered here). A timed one gets its timer, which
   * fails it with {@code onTimeout}'s exception.
   */
  protected final <T extends @Nullable Object> CompletableFuture<T> futureOf(
      WaitNode.NodeFuture<T> future,
      boolean enqueued,
      long nanos,
      Supplier<TimeoutException> onTimeout) {
    WaitNode w = future.node();
    if (!enqueued) {
      Delivery.complete(w); // never queued: this is the requester's own stack, not a releaser's
    } else if (nanos != Long.MAX_VALUE) {
      // The request may be granted or withdrawn before its timer is stored: setTimer and
      // stopTimer settle that race, so the timer never outlives the request.
      future.setTimer(timers.schedule(() -> future.completeExceptionally(onTimeout.get()), nanos));
    }
    if (enqueued) {
      // A request queued under a tracker (a task of a Scope) is withdrawn when it is cancelled.
      // Without one this costs one thread-local read, and only on the path of a request that waits.
      WaitTracking.track(future);
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
}
