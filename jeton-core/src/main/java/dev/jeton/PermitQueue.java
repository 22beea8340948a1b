package dev.jeton;

import static dev.jeton.PermitWord.AWAITS_RELEASE;
import static dev.jeton.PermitWord.CLOSED;
import static dev.jeton.PermitWord.EMPTY;
import static dev.jeton.PermitWord.FREE_SHIFT;
import static dev.jeton.PermitWord.QUEUE;
import static dev.jeton.PermitWord.QUEUED;
import static dev.jeton.PermitWord.STARVING;
import static dev.jeton.PermitWord.WOKEN;
import static dev.jeton.PermitWord.free;
import static dev.jeton.PermitWord.word;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.StatsRecorder;
import dev.jeton.internal.engine.WaitNode;
import dev.jeton.internal.engine.WaitQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The permit accounting under {@link FifoSemaphore}: the free permits, the limit and the closed
 * flag in one atomic word, the lock-free fast paths, and the grants from the head of the {@link
 * WaitQueue} as permits come free. What a request gets for its permits, and how it is named in
 * messages, is {@link FifoSemaphore}'s.
 */
abstract class PermitQueue extends WaitQueue {
  /*
   * Overview
   *
   * The free permits, the limit, the closed flag and the state of the queue live in one atomic
   * word, `state`:
   *
   *   state = free << 33 | limit << 3 | CLOSED | queue
   *
   * `free` (bits 63..33, 31 bits) is signed: it goes negative when the limit is lowered below the
   * permits held, and comes back up as they are released; it never goes below -MAX_LIMIT, since
   * no more than the limit is ever granted. `limit` (bits 32..3) is in the same word so that a
   * request is checked against the limit and served from the same snapshot: otherwise a request
   * racing with setLimit could fail in a way no sequential order explains (Lincheck found exactly
   * that). Requests that wait are nodes of the WaitQueue, guarded by its lock; a node's weight is
   * its permits, and it needs its weight free (an awaitIdle node, weight 0, needs the limit:
   * need()). The queue's state (bits 1..0) is one of four:
   *
   *   EMPTY     no one is queued;
   *   QUEUED    someone is queued, and the head waits for a release to cover it;
   *   WOKEN     the head's thread was unparked to take its permits itself (bounded barging only);
   *   STARVING  the queue is served by handoff: each release grants the head in FIFO order.
   *
   * Two modes (Fairness, decision 104), one algorithm, the mutex's (FifoMutex, decision 103).
   * Strict FIFO is the bound zero: a queue that is not empty is always STARVING, so nothing takes
   * permits past a queued request, and every grant is a handoff. With bounded barging, a release
   * that covers a blocking head wakes it (WOKEN) instead of granting it, and while it wakes up
   * anyone may take the free permits ahead of it (barging); the head takes its permits itself if
   * they are still free (tryTakeAtHead), else goes back to QUEUED and parks. In QUEUED, no one
   * takes permits past the head: the permits free then are too few for it, and barging into them
   * would starve a large request. A head that has waited past the bound, or that has no thread to
   * take anything (asynchronous, awaitIdle), is handed its permits as soon as they cover it, and
   * so is a covered run of several (a writer's unlock lets the readers behind it in together, not
   * one wake-up after another). Whenever the queue settles on a head that is not covered and has
   * waited past the bound, it turns STARVING, where releases hand over as in strict FIFO; it
   * leaves that state when it settles on a head that has not.
   *
   * Fast paths, without the lock:
   *   - acquire: one CAS that takes `n` permits, allowed only when the queue is EMPTY or WOKEN
   *     (AWAITS_RELEASE clear), the semaphore is open, and `free >= n` (and `n <= limit`, else the
   *     request is bad input).
   *   - release: one CAS that adds `n`, allowed only when the queue is EMPTY or WOKEN: no one to
   *     wake or serve. Otherwise the releaser takes the lock, adds the permits, and serves the
   *     head in one CAS (commitLocked).
   *
   * Slow paths, under the lock: a request that cannot take its permits (barging, a blocking one
   * first retries the fast path in Spin's newcomer spin: FifoSemaphore) appends itself, and sets
   * QUEUED (STARVING when strict) if the queue was EMPTY (by CAS, so only if the permits it saw are
   * still short). Nodes leave the queue only under the lock: granted from the head (commitLocked,
   * or tryTakeAtHead by the head itself), withdrawn (cancel, timeout, interrupt: WaitQueue.withdraw,
   * then afterWithdrawLocked), or failed (close, a limit below their request). Every release,
   * withdrawal, limit change and close ends in commitLocked, which settles the queue's state from
   * the head.
   *
   * Invariants:
   *   I1. The queue's state is EMPTY if and only if the queue is empty (both change under the lock).
   *   I2. The queue's state, the limit and CLOSED change only under the lock; so does `free`
   *       while the queue is QUEUED or STARVING. Without the lock, only an acquire or a release
   *       changes `free`, and only while the queue is EMPTY or WOKEN.
   *   I3. Whenever the lock is free and the queue is QUEUED or STARVING, the head is not covered:
   *       every change under the lock that covers it grants it or wakes it in the same CAS. So
   *       permits are never seen free while a request they would cover waits for a release that
   *       may never come.
   *   I4. WOKEN: the head is a blocking request whose thread was unparked after WOKEN was set, and
   *       which will look again under the lock before it parks (tryTakeAtHead; after the rest of a
   *       spin begun while STARVING, if any), or withdraw, which settles the queue.
   *   I5. Permits are never lost: each grant subtracts exactly the permits it hands out, in the
   *       CAS that decides it; a grant that reaches no one is released again (giveBackLocked).
   *
   * The word's layout is PermitWord's. Field access follows the engine's rule (its package-info.java): `state` is changed by CAS
   * (STATE) and otherwise read and written as a volatile; `pendingWake` is guarded by the lock.
   */

  /** The largest limit the state word holds. */
  static final int MAX_LIMIT = PermitWord.MAX_LIMIT;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(PermitQueue.class, "state", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** How long the head may wait before the queue starves; 0 in strict FIFO mode. */
  private final long boundNanos;

  private volatile long state;

  /** The thread that commitLocked decided to wake, for its caller to unpark. */
  @GuardedBy("lock")
  private @Nullable Thread pendingWake;

  PermitQueue(
      int limit,
      Fairness fairness,
      @Nullable Executor completionExecutor,
      @Nullable StatsRecorder stats,
      Deadlines timers,
      @Nullable Runnable spinStep) {
    super(completionExecutor, stats, timers, spinStep, !fairness.isStrictFifo());
    checkLimit(limit);
    this.boundNanos = fairness.boundNanos();
    this.state = word(limit, limit, EMPTY);
  }

  // ---------------------------------------------------------------- taking permits

  /**
   * The fast path: takes {@code n} permits if no one is queued or the head is being woken, the
   * semaphore is open, and they are free. Checks {@code n} against the limit of the same snapshot.
   */
  final boolean tryTake(int n) {
    long delta = (long) n << FREE_SHIFT;
    long s = state;
    for (; ; ) {
      Arguments.checkWeight(n, PermitWord.limit(s));
      if ((s & (CLOSED | AWAITS_RELEASE)) != 0 || free(s) < n) {
        return false;
      }
      if (STATE.weakCompareAndSet(this, s, s - delta)) {
        return true;
      }
      s = state;
    }
  }

  /** Counts a grant made without waiting, if statistics are on. */
  final void countAcquired() {
    StatsRecorder s = stats;
    if (s != null) {
      s.countAcquired();
    }
  }

  /**
   * Takes the permits under the lock if they can be had now, else queues {@code w}.
   *
   * @return true if queued; false if granted at once (status GRANTED) or failed (status FAILED_*)
   */
  final boolean enqueue(WaitNode w) {
    lock.lock();
    try {
      if (w.weight() > PermitWord.limit(state)) { // the limit changes only under the lock
        w.setStatus(WaitNode.FAILED_LIMIT);
      } else {
        long delta = (long) w.weight() << FREE_SHIFT;
        for (; ; ) {
          long s = state;
          if ((s & CLOSED) != 0) {
            w.setStatus(WaitNode.FAILED_CLOSED);
            break;
          }
          if ((s & AWAITS_RELEASE) == 0 && free(s) >= w.weight()) { // strict: the queue is EMPTY
            if (STATE.compareAndSet(this, s, s - delta)) {
              w.setStatus(WaitNode.GRANTED);
              break;
            }
            continue;
          }
          if (queueFrom(w, s)) {
            return true;
          }
        }
      }
    } finally {
      lock.unlock();
    }
    if (w.status() == WaitNode.GRANTED) {
      countAcquired();
    }
    return false;
  }

  /**
   * Queues an {@code awaitIdle} request (weight 0), unless every permit is free and no one is
   * queued: then it is granted at once. Returns true if queued.
   */
  final boolean enqueueIdle(WaitNode w) {
    lock.lock();
    try {
      for (; ; ) {
        long s = state;
        if ((s & QUEUE) == EMPTY && free(s) >= PermitWord.limit(s)) {
          w.setStatus(WaitNode.GRANTED);
          return false;
        }
        if (queueFrom(w, s)) {
          return true;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Appends {@code w}, which cannot be served in state {@code s}, and returns true; unless the
   * queue was EMPTY and the state changed before it could be marked queued: then returns false, to
   * look again. Lock held.
   */
  @GuardedBy("lock")
  private boolean queueFrom(WaitNode w, long s) {
    if ((s & QUEUE) == EMPTY
        && !STATE.compareAndSet(this, s, s | (boundNanos == 0L ? STARVING : QUEUED))) {
      return false;
    }
    append(w);
    return true;
  }

  // ---------------------------------------------------------------- releasing and granting

  /** Gives back {@code n} permits; called once per grant (a downgrade gives back part first). */
  void release(int n) {
    StatsRecorder st = stats;
    if (st != null) {
      st.countReleased();
    }
    long delta = (long) n << FREE_SHIFT;
    long s = state;
    while ((s & AWAITS_RELEASE) == 0) { // EMPTY, or the head is awake already
      if (STATE.weakCompareAndSet(this, s, s + delta)) {
        return;
      }
      s = state;
    }
    WaitNode delivered;
    Thread wake;
    lock.lock();
    try {
      delivered = commitLocked(n, -1, 0L, null);
      wake = takePendingWake();
    } finally {
      lock.unlock();
    }
    deliverAndWake(delivered, wake);
  }

  /**
   * Changes the state and serves the head, in one CAS, and settles the queue's state (see above).
   * Adds {@code addFree} permits, sets the limit to {@code newLimit} unless it is -1 (moving {@code
   * free} by the same amount), sets {@code flags}; then, from the head, grants the requests that
   * are covered, in order, until one is not, or (barging, not starving) until a blocking one, which
   * it wakes instead (pendingWake) unless it is {@code taker}, the head taking its own permits
   * (tryTakeAtHead), or it has waited past the bound, or the permits cover the next request too:
   * those it hands over, with the rest of the covered run. Unlinks the granted requests and returns
   * them chained through {@code next}. Lock held.
   *
   * <p>While the queue is QUEUED or STARVING, nothing changes the state without the lock (I2); so
   * the CAS fails only when a fast path raced with it.
   */
  @GuardedBy("lock")
  private @Nullable WaitNode commitLocked(
      int addFree, int newLimit, long flags, @Nullable WaitNode taker) {
    for (; ; ) {
      long s = state;
      int limit = newLimit < 0 ? PermitWord.limit(s) : newLimit;
      int free = free(s) + addFree + (limit - PermitWord.limit(s));
      boolean handOver = (s & QUEUE) == STARVING; // always, when strict and not empty
      long queue = EMPTY;
      WaitNode newHead = head();
      while (newHead != null) {
        if (free < need(newHead, limit)) {
          queue = starves(newHead) ? STARVING : QUEUED;
          break;
        }
        if (!handOver && newHead != taker && takesItself(newHead)) {
          if (!coversNext(newHead, free, limit) && !starves(newHead)) {
            queue = WOKEN;
            break;
          }
          handOver = true; // a run of several, or a head past the bound: handed over, as strict
        }
        free -= newHead.weight();
        newHead = newHead.next();
      }
      long next = word(free, limit, (s & CLOSED) | flags | queue);
      if (STATE.compareAndSet(this, s, next)) {
        if (queue == WOKEN) {
          pendingWake = java.util.Objects.requireNonNull(newHead).thread();
        }
        return unlinkRun(newHead, WaitNode.GRANTED);
      }
    }
  }

  /** What a request needs free to be served: its permits, or every permit for awaitIdle. */
  private static int need(WaitNode w, int limit) {
    return w.weight() == 0 ? limit : w.weight();
  }

  /**
   * Whether {@code free} permits cover the request after the covered {@code w} too: then the run is
   * handed over at once, as a writer's unlock lets in the readers queued behind it together, rather
   * than woken one by one.
   */
  private static boolean coversNext(WaitNode w, int free, int limit) {
    WaitNode after = w.next();
    return after != null && free - w.weight() >= need(after, limit);
  }

  /** Whether a request can take its permits itself when woken: a blocking one that takes some. */
  private static boolean takesItself(WaitNode w) {
    return w.thread() != null && w.weight() != 0;
  }

  /** Whether the queue starves at head {@code w}: always when strict, else past the bound. */
  private boolean starves(WaitNode w) {
    return boundNanos == 0L || w.waitedNanos(System.nanoTime()) >= boundNanos;
  }

  /** The thread commitLocked decided to wake, now the caller's to unpark. Lock held. */
  @GuardedBy("lock")
  private @Nullable Thread takePendingWake() {
    Thread wake = pendingWake;
    pendingWake = null;
    return wake;
  }

  /** Wakes the thread commitLocked decided to, under the lock: for the engine's hooks. */
  @GuardedBy("lock")
  private void wakeNowLocked() {
    Thread wake = takePendingWake();
    if (wake != null) {
      LockSupport.unpark(wake);
    }
  }

  /** After the lock: wakes the head commitLocked chose, if any, and delivers its grants. */
  private void deliverAndWake(@Nullable WaitNode delivered, @Nullable Thread wake) {
    if (wake != null) {
      LockSupport.unpark(wake);
    }
    deliver(delivered);
  }

  // ---------------------------------------------------------------- the engine's hooks

  /**
   * The woken head takes its permits if they are still free, and wakes the next head if what is
   * left covers it; else goes back to QUEUED (or STARVING, past the bound) and parks. Only a WOKEN
   * head looks, under the lock: in the other states a release that covers it wakes it or grants it
   * (I3). Strict FIFO answers without reading the state word, as spinAtHead does.
   */
  @Override
  protected boolean tryTakeAtHead(WaitNode w) {
    if (boundNanos == 0L || (state & QUEUE) != WOKEN) {
      return false;
    }
    WaitNode granted;
    Thread wake;
    lock.lock();
    try {
      if (head() != w || (state & QUEUE) != WOKEN) {
        return false;
      }
      granted = commitLocked(0, -1, 0L, w);
      wake = takePendingWake();
    } finally {
      lock.unlock();
    }
    // The run granted starts with w if it took (its requester is the caller), else is empty.
    deliverAndWake(granted == w ? w.next() : granted, wake);
    return granted == w;
  }

  /**
   * The head spins, and is prewoken, only while the queue is served by handoff: always in strict
   * FIFO mode, answered without reading the state word (as the mutex's, decision 103).
   */
  @Override
  protected boolean spinAtHead() {
    return boundNanos == 0L || (state & QUEUE) == STARVING;
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode afterWithdrawLocked() {
    WaitNode granted = commitLocked(0, -1, 0L, null); // the requests behind it may fit now
    wakeNowLocked();
    return granted;
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode giveBackLocked(WaitNode node) {
    if (node.weight() == 0) {
      return null; // an awaitIdle request holds nothing
    }
    StatsRecorder st = stats;
    if (st != null) {
      st.countReleased(); // it counted as acquired when granted
    }
    WaitNode granted = commitLocked(node.weight(), -1, 0L, null);
    wakeNowLocked();
    return granted;
  }

  // ---------------------------------------------------------------- limit and closing

  /** Sets the limit: {@link Semaphore#setLimit}. */
  public void setLimit(int newLimit) {
    checkLimit(newLimit);
    WaitNode delivered;
    Thread wake;
    lock.lock();
    try {
      WaitNode failed = removeLocked(w -> w.weight() > newLimit, WaitNode.FAILED_LIMIT);
      delivered = WaitNode.concat(failed, commitLocked(0, newLimit, 0L, null));
      wake = takePendingWake();
    } finally {
      lock.unlock();
    }
    deliverAndWake(delivered, wake);
  }

  /** Closes: {@link Semaphore#close}. */
  public void close() {
    WaitNode delivered;
    Thread wake;
    lock.lock();
    try {
      if ((state & CLOSED) != 0) {
        return;
      }
      WaitNode failed = removeLocked(w -> w.weight() != 0, WaitNode.FAILED_CLOSED);
      delivered = WaitNode.concat(failed, commitLocked(0, -1, CLOSED, null));
      wake = takePendingWake();
    } finally {
      lock.unlock();
    }
    deliverAndWake(delivered, wake);
  }

  // ---------------------------------------------------------------- inspection

  /** Checks a limit against what the state word holds. */
  static void checkLimit(int limit) {
    Arguments.checkLimit(limit);
    if (limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must not exceed " + MAX_LIMIT + ", was " + limit);
    }
  }

  /** The limit now. */
  public int limit() {
    return PermitWord.limit(state);
  }

  /** The free permits now; negative while more are held than the limit. */
  public int available() {
    return free(state);
  }

  /** Whether this queue lets newcomers barge (bounded barging), as opposed to strict FIFO. */
  final boolean barges() {
    return boundNanos != 0L;
  }

  /** Whether {@link #close} was called. */
  boolean isClosed() {
    return (state & CLOSED) != 0;
  }
}
