package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.StatsRecorder;
import dev.jeton.internal.engine.WaitNode;
import dev.jeton.internal.engine.WaitQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;
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
   * The free permits, the limit and two flags live in one atomic word, `state`:
   *
   *   state = free << 32 | limit << 2 | CLOSED | QUEUED
   *
   * `free` (bits 63..32) is signed: it goes negative when the limit is lowered below the
   * permits held, and comes back up as they are released. `limit` (bits 31..2) is in the same
   * word so that a request is checked against the limit and served from the same snapshot:
   * otherwise a request racing with setLimit could fail in a way no sequential order explains
   * (Lincheck found exactly that). Requests that wait are nodes of the WaitQueue, guarded by its
   * lock; a node's weight is its permits.
   *
   * Fast paths, without the lock:
   *   - acquire: one CAS that takes `n` permits, allowed only when neither QUEUED nor CLOSED is
   *     set and `free >= n` (and `n <= limit`, else the request is bad input). So nothing ever
   *     takes permits past a queued request: FIFO.
   *   - release: one CAS that adds `n`, allowed only when QUEUED is clear. Otherwise the
   *     releaser takes the lock and adds the permits and grants the waiters they cover in one
   *     CAS (`commitLocked`).
   *
   * Slow path, under the lock: a request that cannot take its permits sets QUEUED (by CAS, so it
   * is set only if the permits it saw are still short) and appends itself. Nodes leave the queue
   * only under the lock: granted from the head while `free` covers the head's request,
   * withdrawn (cancel, timeout, interrupt: WaitQueue.withdraw, then afterWithdrawLocked), or
   * failed (close, a limit below their request).
   *
   * Invariants:
   *   I1. QUEUED is set if and only if the queue is non-empty (both change under the lock).
   *   I2. While QUEUED is set, the state changes only under the lock, and every change that
   *       could let the head in (release, setLimit, withdrawal of the head) grants in the same
   *       CAS. So whenever the lock is free, the head's request exceeds `free`: permits are
   *       never seen free while a request they would cover is queued.
   *   I3. Permits are never lost: each grant subtracts exactly the permits it hands out, in the
   *       CAS that decides it; a grant that reaches no one is released again (giveBackLocked).
   *
   * An `awaitIdle` node (weight 0) needs `free >= limit`; when it reaches the head and that
   * holds, it is granted without taking anything.
   *
   * Field access follows the engine's rule (its package-info.java): `state` is changed by CAS (STATE) and
   * otherwise read and written as a volatile.
   */

  private static final int FREE_SHIFT = 32;
  private static final int LIMIT_SHIFT = 2;
  private static final long LIMIT_MASK = 0xFFFF_FFFCL;
  private static final long QUEUED = 1;
  private static final long CLOSED = 2;

  /** The largest limit the state word holds. */
  static final int MAX_LIMIT = (1 << 30) - 1;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(PermitQueue.class, "state", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile long state;

  PermitQueue(
      int limit,
      @Nullable Executor completionExecutor,
      @Nullable StatsRecorder stats,
      Deadlines timers,
      @Nullable Runnable spinStep) {
    super(completionExecutor, stats, timers, spinStep, false);
    checkLimit(limit);
    this.state = ((long) limit << FREE_SHIFT) | ((long) limit << LIMIT_SHIFT);
  }

  // ---------------------------------------------------------------- taking permits

  /**
   * The fast path: takes {@code n} permits if no one is queued, the semaphore is open, and they are
   * free. Checks {@code n} against the limit of the same snapshot.
   */
  final boolean tryTake(int n) {
    long delta = (long) n << FREE_SHIFT;
    long s = state;
    for (; ; ) {
      Arguments.checkWeight(n, limit(s));
      if ((s & (QUEUED | CLOSED)) != 0 || free(s) < n) {
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
      if (w.weight() > limit(state)) { // the limit changes only under the lock
        w.setStatus(WaitNode.FAILED_LIMIT);
      } else {
        long delta = (long) w.weight() << FREE_SHIFT;
        for (; ; ) {
          long s = state;
          if ((s & CLOSED) != 0) {
            w.setStatus(WaitNode.FAILED_CLOSED);
            break;
          }
          if ((s & QUEUED) == 0) {
            if (free(s) >= w.weight()) {
              if (STATE.compareAndSet(this, s, s - delta)) {
                w.setStatus(WaitNode.GRANTED);
                break;
              }
              continue;
            }
            if (!STATE.compareAndSet(this, s, s | QUEUED)) {
              continue;
            }
          }
          append(w);
          return true;
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
    boolean queued = false;
    lock.lock();
    try {
      long s = state;
      while ((s & QUEUED) == 0) {
        if (free(s) >= limit(s)) {
          w.setStatus(WaitNode.GRANTED);
          break;
        }
        if (STATE.compareAndSet(this, s, s | QUEUED)) {
          s |= QUEUED;
        } else {
          s = state;
        }
      }
      if (w.status() != WaitNode.GRANTED) {
        append(w);
        queued = true;
      }
    } finally {
      lock.unlock();
    }
    return queued;
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
    while ((s & QUEUED) == 0) {
      if (STATE.weakCompareAndSet(this, s, s + delta)) {
        return;
      }
      s = state;
    }
    WaitNode delivered;
    lock.lock();
    try {
      delivered = commitLocked(n, -1, 0L);
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /**
   * Changes the state and grants the waiters that then fit, in one CAS, so that no reader ever sees
   * permits free while a request they would cover is still queued. Adds {@code addFree} permits,
   * sets the limit to {@code newLimit} unless it is -1 (moving {@code free} by the same amount),
   * sets {@code flags}, and sets QUEUED exactly when waiters remain. Unlinks the granted waiters
   * and returns them chained through {@code next}. Lock held.
   *
   * <p>While QUEUED is set, nothing changes the state without the lock (the fast paths refuse to),
   * so the CAS fails only when the queue was empty and a fast path raced with it.
   */
  @GuardedBy("lock")
  private @Nullable WaitNode commitLocked(int addFree, int newLimit, long flags) {
    for (; ; ) {
      long s = state;
      int limit = newLimit < 0 ? limit(s) : newLimit;
      int free = free(s) + addFree + (limit - limit(s));
      WaitNode newHead = head();
      while (newHead != null) {
        int need = newHead.weight() == 0 ? limit : newHead.weight();
        if (free < need) {
          break;
        }
        free -= newHead.weight();
        newHead = newHead.next();
      }
      long next =
          ((long) free << FREE_SHIFT)
              | ((long) limit << LIMIT_SHIFT)
              | (s & CLOSED)
              | flags
              | (newHead != null ? QUEUED : 0L);
      if (STATE.compareAndSet(this, s, next)) {
        return unlinkRun(newHead, WaitNode.GRANTED);
      }
    }
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode afterWithdrawLocked() {
    return commitLocked(0, -1, 0L); // the requests behind it may fit now
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
    return commitLocked(node.weight(), -1, 0L);
  }

  // ---------------------------------------------------------------- limit and closing

  /** Sets the limit: {@link Semaphore#setLimit}. */
  public void setLimit(int newLimit) {
    checkLimit(newLimit);
    WaitNode delivered;
    lock.lock();
    try {
      WaitNode failed = removeLocked(w -> w.weight() > newLimit, WaitNode.FAILED_LIMIT);
      delivered = WaitNode.concat(failed, commitLocked(0, newLimit, 0L));
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /** Closes: {@link Semaphore#close}. */
  public void close() {
    WaitNode delivered;
    lock.lock();
    try {
      if ((state & CLOSED) != 0) {
        return;
      }
      WaitNode failed = removeLocked(w -> w.weight() != 0, WaitNode.FAILED_CLOSED);
      delivered = WaitNode.concat(failed, commitLocked(0, -1, CLOSED));
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  // ---------------------------------------------------------------- inspection

  private static int free(long s) {
    return (int) (s >> FREE_SHIFT);
  }

  private static int limit(long s) {
    return (int) ((s & LIMIT_MASK) >>> LIMIT_SHIFT);
  }

  /** Checks a limit against what the state word holds. */
  static void checkLimit(int limit) {
    Arguments.checkLimit(limit);
    if (limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must not exceed " + MAX_LIMIT + ", was " + limit);
    }
  }

  /** The limit now. */
  public int limit() {
    return limit(state);
  }

  /** The free permits now; negative while more are held than the limit. */
  public int available() {
    return free(state);
  }

  /** Whether {@link #close} was called. */
  boolean isClosed() {
    return (state & CLOSED) != 0;
  }
}
