package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.engine.Spin;
import dev.jeton.internal.engine.Timer;
import dev.jeton.internal.engine.WaitNode;
import dev.jeton.internal.engine.WaitQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link Mutex}, on the {@link WaitQueue} engine.
 *
 * <p>The contract is on {@link Mutex}; this comment explains how it is kept.
 */
final class FifoMutex extends WaitQueue implements Mutex {
  /*
   * Overview
   *
   * One atomic word, `state`, holds whether the mutex is locked, whether anyone is queued, whether
   * the head of the queue has been woken, whether the queue is starving, and the number of the
   * current grant:
   *
   *   state = grant << 4 | STARVING | WOKEN | LOCKED | QUEUED
   *
   * Every grant (fast or from the queue) increments `grant`, and the guard it makes remembers the
   * word it made. Unlocking is one CAS from "LOCKED with my number" to "unlocked" (or, with a
   * queue to serve, to "LOCKED with the next number", handed to the head): so a second unlock of
   * the same guard, by any thread, at any moment, finds the lock free or held under another number
   * and does nothing. That is what makes unlock idempotent without a flag of its own in the guard:
   * one atomic instruction to lock and one to unlock, as ReentrantLock, and a guard that holds only
   * final fields, which the JIT can keep out of the heap (decision 42).
   *
   * Two modes (Fairness, decision 103), one algorithm: Go's sync.Mutex. While STARVING is clear,
   * a free lock goes to whoever CASes it first, a running thread ahead of the woken head
   * (barging): an unlock only clears LOCKED, and wakes the head if no one woke it since it last
   * looked (WOKEN); the woken head takes the lock if it is free, else clears WOKEN and parks
   * again (tryTakeAtHead). A head that fails after waiting longer than the bound sets STARVING:
   * then no one barges, and each unlock hands the lock straight to the head, as a strict FIFO lock
   * does, until it serves a waiter that waited less than the bound, or the last one. Strict FIFO
   * is the bound zero: a request that queues sets STARVING with QUEUED, so STARVING is set exactly
   * while someone is queued, and the lock never leaves starvation.
   *
   * Fast paths, without the queue's lock:
   *   - lock: one CAS from a state with LOCKED and STARVING clear to LOCKED with the next number.
   *     It must read the word first, as the next number comes from it; ReentrantLock CASes from a
   *     constant and skips that read, which is the ~0.8 ns between the two (LockFloorBenchmark).
   *   - unlock: one CAS from the word the guard made to that word without LOCKED, tried before
   *     reading the state at all, if that word needs no one woken (mayJustUnlock); else, or if the
   *     word changed since, from the state read, while it holds the guard's number.
   *
   * Slow paths, under the queue's lock: a request that finds the mutex locked (and, barging, still
   * finds it locked after Spin's newcomer spin, which retries the fast path) sets QUEUED (by
   * CAS, so only if it is still locked) and appends itself; an unlock that finds someone to wake
   * or to hand to (unlockLocked) does it there; the head takes the lock or gives up its wake
   * there (tryTakeAtHead).
   *
   * Invariants:
   *   M1. QUEUED is set if and only if the queue is non-empty (both change under the lock).
   *   M2. QUEUED, WOKEN and STARVING change only under the lock. Without it, only the number and
   *       LOCKED change: a lock from a state where LOCKED and STARVING are clear, an unlock from a
   *       state where mayJustUnlock holds.
   *   M3. STARVING implies LOCKED and QUEUED: a starving queue is always served by handoff, never
   *       by a free lock. So in strict FIFO mode, LOCKED clear implies an empty queue, and a
   *       withdrawal never has a lock to hand on.
   *   M4. QUEUED and LOCKED clear imply WOKEN: the head's thread has been unparked and will take
   *       the lock, or clear WOKEN (only while LOCKED is set, so that the next unlock wakes it
   *       again), or withdraw, which hands the free lock to the next head. WOKEN is set only with
   *       a blocking head (an asynchronous one has no thread to wake: it is handed the lock).
   *   M5. `grant` changes only with a grant, by one; a guard unlocks only while the state holds
   *       LOCKED with its number. A grant that reaches no one (its future completed from outside
   *       first, its thread interrupted) is unlocked by the engine (giveBackLocked), so it is
   *       handed on.
   *
   * Field access follows the engine's rule (its package-info.java): `state` is changed by CAS
   * (STATE); `pendingWake` is guarded by the lock.
   */

  private static final long QUEUED = 1;
  private static final long LOCKED = 2;
  private static final long WOKEN = 4;
  private static final long STARVING = 8;
  private static final int GRANT_SHIFT = 4;

  /** The bits that say who holds the lock: the number and LOCKED. */
  private static final long HOLDER = -1L << GRANT_SHIFT | LOCKED;

  /** From a free state (LOCKED clear) to the next grant: nextGrant(s) == s + this. */
  private static final long FREE_TO_LOCKED = (1L << GRANT_SHIFT) + LOCKED;

  /** A granted request's guard, made under the lock and carried in its node. */
  private static final WaitNode.Grant<Guard> GUARD = FifoMutex::guardOf;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(FifoMutex.class, "state", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final @Nullable String name;

  /** Watches guards for leaks (LocalMutexGuard.of); null: not watched. */
  final @Nullable LeakTracker leaks;

  /** How long the head may wait before the queue starves; 0 in strict FIFO mode. */
  private final long boundNanos;

  private volatile long state;

  /** The thread that unlockLocked decided to wake, for its caller to unpark after the lock. */
  @GuardedBy("lock")
  private @Nullable Thread pendingWake;

  /** As built by {@link Mutex.Builder}: watching its guards for leaks through {@code leaks}. */
  FifoMutex(
      @Nullable String name,
      @Nullable Executor completionExecutor,
      Fairness fairness,
      @Nullable LeakTracker leaks) {
    super(completionExecutor, null, Timer.shared(), null, !fairness.isStrictFifo());
    this.name = name;
    this.boundNanos = fairness.boundNanos();
    this.leaks = leaks;
  }

  // ---------------------------------------------------------------- locking

  @Override
  public Guard lock() throws InterruptedException {
    try {
      return lock(Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Guard lock(Duration timeout) throws InterruptedException, TimeoutException {
    return lock(Arguments.toNanos(timeout), timeout);
  }

  private Guard lock(long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    Guard guard = tryTake();
    return guard != null ? guard : lockSlow(nanos, timeout);
  }

  private Guard lockSlow(long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    if (boundNanos != 0L) {
      Guard barged = Spin.beforeQueueing(this::tryTake);
      if (barged != null) {
        return barged;
      }
    }
    WaitNode w = WaitNode.blocking(1);
    if (enqueue(w)) {
      awaitBlocking(w, nanos, timeout);
    }
    return GUARD.of(w);
  }

  @Override
  public CompletableFuture<Guard> lockAsync() {
    return lockAsync(Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<Guard> lockAsync(Duration timeout) {
    return lockAsync(Arguments.toNanos(timeout), timeout);
  }

  private CompletableFuture<Guard> lockAsync(long nanos, @Nullable Duration timeout) {
    Guard guard = tryTake();
    if (guard != null) {
      return CompletableFuture.completedFuture(guard);
    }
    WaitNode.NodeFuture<Guard> f = WaitNode.async(this, GUARD, 1, nanos != Long.MAX_VALUE);
    WaitNode w = f.node();
    return futureOf(
        f, enqueue(w), nanos, () -> timeoutException(w, java.util.Objects.requireNonNull(timeout)));
  }

  @Override
  public Optional<Guard> tryLock() {
    return Optional.ofNullable(tryTake());
  }

  /** The fast path: locks if the mutex is free and not starving; else null. */
  private @Nullable Guard tryTake() {
    long s = state;
    if ((s & (LOCKED | STARVING)) == 0 && STATE.compareAndSet(this, s, s + FREE_TO_LOCKED)) {
      return LocalMutexGuard.of(this, s + FREE_TO_LOCKED);
    }
    return (s & (LOCKED | STARVING)) == 0 ? tryTakeRaced() : null;
  }

  /** {@link #tryTake} after a lost CAS: retries while the mutex stays free. */
  private @Nullable Guard tryTakeRaced() {
    long s;
    while (((s = state) & (LOCKED | STARVING)) == 0) {
      if (STATE.compareAndSet(this, s, s + FREE_TO_LOCKED)) {
        return LocalMutexGuard.of(this, s + FREE_TO_LOCKED);
      }
    }
    return null;
  }

  /** The state of the grant after {@code s}: locked under the next number, the flags kept. */
  private static long nextGrant(long s) {
    return (((s >>> GRANT_SHIFT) + 1) << GRANT_SHIFT) | LOCKED | (s & (QUEUED | WOKEN | STARVING));
  }

  /**
   * Locks under the lock if the mutex is free, else queues {@code w} (only while locked, M4).
   * Returns true if queued; false if granted at once, with the guard in {@code w.outcome}.
   */
  private boolean enqueue(WaitNode w) {
    lock.lock();
    try {
      for (; ; ) {
        long s = state;
        if ((s & LOCKED) == 0) { // strict FIFO: the queue is empty (M3); else a barge (M4)
          long next = nextGrant(s);
          if (STATE.compareAndSet(this, s, next)) {
            w.setOutcome(LocalMutexGuard.of(this, next));
            w.setStatus(WaitNode.GRANTED);
            return false;
          }
        } else if ((s & queuedFlags()) == queuedFlags()
            || STATE.compareAndSet(this, s, s | queuedFlags())) {
          append(w);
          return true;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** What a request that queues sets: QUEUED, and STARVING in strict FIFO mode (see above). */
  private long queuedFlags() {
    return boundNanos == 0L ? QUEUED | STARVING : QUEUED;
  }

  // ---------------------------------------------------------------- unlocking

  /**
   * Whether an unlock from {@code s} may just clear LOCKED: no one is queued, or the head is awake
   * already (WOKEN), and the queue is not starving (M2).
   */
  private static boolean mayJustUnlock(long s) {
    long flags = s & (QUEUED | WOKEN | STARVING);
    return flags == 0 || flags == (QUEUED | WOKEN);
  }

  /**
   * Unlocks if the mutex is still locked under the grant of {@code word} (the state its guard's
   * grant made); else does nothing.
   */
  void unlock(long word) {
    // The common case in one instruction, without reading first: nothing changed since the grant.
    if (mayJustUnlock(word) && STATE.compareAndSet(this, word, word & ~LOCKED)) {
      return;
    }
    long s = state;
    while (mayJustUnlock(s)) {
      if ((s & HOLDER) != (word & HOLDER)) {
        return; // unlocked already, or locked again by someone else since
      }
      if (STATE.compareAndSet(this, s, s & ~LOCKED)) {
        return;
      }
      s = state;
    }
    WaitNode delivered;
    Thread wake;
    lock.lock();
    try {
      delivered = unlockLocked(word, true);
      wake = pendingWake;
      pendingWake = null;
    } finally {
      lock.unlock();
    }
    if (wake != null) {
      LockSupport.unpark(wake);
    } else {
      deliver(delivered);
    }
  }

  /**
   * Unlocks under the queue's lock: wakes a blocking head if {@code mayWake}, neither it nor the
   * queue starving (the thread left in pendingWake); else hands it the lock in the same CAS.
   * Returns the head, granted, or null. Lock held.
   */
  @GuardedBy("lock")
  private @Nullable WaitNode unlockLocked(long word, boolean mayWake) {
    for (; ; ) {
      long s = state;
      if ((s & HOLDER) != (word & HOLDER)) {
        return null; // not ours any more
      }
      WaitNode first = head();
      if (first == null || mayJustUnlock(s)) { // no one to wake or serve (M1, M4)
        if (STATE.compareAndSet(this, s, s & ~LOCKED)) {
          return null;
        }
        continue;
      }
      Thread thread = first.thread();
      if (thread != null
          && mayWake
          && (s & STARVING) == 0
          && first.waitedNanos(System.nanoTime()) < boundNanos) {
        if (STATE.compareAndSet(this, s, (s & ~LOCKED) | WOKEN)) {
          pendingWake = thread;
          return null;
        }
        continue;
      }
      WaitNode granted = tryHandTo(first, s);
      if (granted != null) {
        return granted;
      }
    }
  }

  /**
   * Hands the lock, in state {@code s}, to the head {@code first} by one CAS, its guard in its
   * outcome, and unlinks it: returns it, granted; null if the state changed. The queue starves on
   * while the head waited past the bound (or always, in strict FIFO mode) and others are queued.
   * Lock held.
   */
  @GuardedBy("lock")
  private @Nullable WaitNode tryHandTo(WaitNode first, long s) {
    WaitNode rest = first.next();
    long next = nextGrant(s) & ~(QUEUED | WOKEN | STARVING);
    if (rest != null) {
      next |= QUEUED;
      if (boundNanos == 0L
          || (s & STARVING) != 0 && first.waitedNanos(System.nanoTime()) >= boundNanos) {
        next |= STARVING;
      }
    }
    if (!STATE.compareAndSet(this, s, next)) {
      return null;
    }
    first.setOutcome(LocalMutexGuard.of(this, next));
    return unlinkRun(rest, WaitNode.GRANTED);
  }

  /** True while the mutex is locked under the grant of {@code word}. */
  boolean holds(long word) {
    return (state & HOLDER) == (word & HOLDER);
  }

  // ---------------------------------------------------------------- the engine's hooks

  /**
   * Before it parks, the woken head of a barging queue takes the lock if it is free; else it clears
   * WOKEN so that the next unlock wakes it again, and starts the starvation if it has waited past
   * the bound (M3: only while LOCKED is set, which the next unlock hands over).
   */
  @Override
  protected boolean tryTakeAtHead(WaitNode w) {
    if (boundNanos == 0L || (state & STARVING) != 0) {
      return false; // handed over when starving, always in strict FIFO mode (see spinAtHead)
    }
    lock.lock();
    try {
      for (; ; ) {
        long s = state;
        if (head() != w || (s & STARVING) != 0) { // granted meanwhile, or to be
          return false;
        }
        if ((s & LOCKED) == 0) {
          if (tryHandTo(w, s) != null) {
            return true;
          }
        } else {
          long next = s & ~WOKEN;
          if (w.waitedNanos(System.nanoTime()) >= boundNanos) {
            next |= STARVING;
          }
          if (next == s || STATE.compareAndSet(this, s, next)) {
            return false;
          }
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * The head spins, and is prewoken, only while the queue is served by handoff: always in strict
   * FIFO mode, answered without reading the state word, which the holders write (reading it here
   * cost a third of the strict mode's throughput at eight threads, decision 103).
   */
  @Override
  protected boolean spinAtHead() {
    return boundNanos == 0L || (state & STARVING) != 0;
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode afterWithdrawLocked() {
    for (; ; ) {
      long s = state;
      WaitNode first = head();
      if (first == null) { // the queue emptied: clear QUEUED (M1), and with it the rest (M3, M4)
        if (STATE.compareAndSet(this, s, s & ~(QUEUED | WOKEN | STARVING))) {
          return null;
        }
      } else if ((s & LOCKED) == 0) { // barging only (M3): the woken head left; serve the next
        WaitNode granted = tryHandTo(first, s);
        if (granted != null) {
          return granted;
        }
      } else if ((s & WOKEN) == 0 || STATE.compareAndSet(this, s, s & ~WOKEN)) {
        return null; // the woken head may be the one that left: the next unlock wakes the new one
      }
    }
  }

  /**
   * The guard a granted node carries: the mutex puts only its own guards in a node's outcome
   * (enqueue, tryHandTo), which is why this cast holds.
   */
  private static LocalMutexGuard guardOf(WaitNode node) {
    return (LocalMutexGuard) java.util.Objects.requireNonNull(node.outcome());
  }

  /** Hands a grant that reached no one to the next head, waking no one (under the lock). */
  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode giveBackLocked(WaitNode node) {
    return unlockLocked(guardOf(node).givenBack(), false); // a guard that reached no one
  }

  @Override
  protected RuntimeException failure(WaitNode node) {
    throw new AssertionError("a mutex request never fails: status " + node.status());
  }

  @Override
  protected TimeoutException timeoutException(WaitNode node, Duration timeout) {
    return new TimeoutException(
        "timed out after " + timeout + " waiting for the lock of " + describe());
  }

  // ---------------------------------------------------------------- inspection

  @Override
  public boolean isLocked() {
    return (state & LOCKED) != 0;
  }

  @Override
  public int queueLength() {
    return super.queueLength();
  }

  String describe() {
    return describe(name);
  }

  /** How messages name a mutex of this {@code name}: "mutex 'cache'", "mutex". */
  static String describe(@Nullable String name) {
    return name != null ? "mutex '" + name + "'" : "mutex";
  }

  @Override
  public String toString() {
    return "Mutex["
        + (name != null ? "name=" + name + ", " : "")
        + (isLocked() ? "locked" : "unlocked")
        + ", queued="
        + queueLength()
        + "]";
  }
}
