package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
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
   * One atomic word, `state`, holds whether the mutex is locked, whether anyone is queued, and
   * the number of the current grant:
   *
   *   state = grant << 2 | LOCKED | QUEUED
   *
   * Every grant (fast or from the queue) increments `grant`, and the guard it makes remembers
   * its number. Unlocking is one CAS from "LOCKED with my number" to "unlocked" (or, with a queue,
   * to "LOCKED with the next number", handed to the head): so a second unlock of the same guard,
   * by any thread, at any moment, finds the lock free or held under another number and does
   * nothing. That is what makes unlock idempotent without a flag of its own in the guard: one
   * atomic instruction to lock and one to unlock, as ReentrantLock, and a guard that holds only
   * final fields, which the JIT can keep out of the heap (decision 42). The mutex was a one-permit
   * FifoSemaphore before; its permit's release flag cost a third atomic instruction and an
   * allocation per lock.
   *
   * Fast paths, without the queue's lock:
   *   - lock: one CAS from "neither LOCKED nor QUEUED" to LOCKED with the next number. It must read
   *     the word first, as the next number comes from it; ReentrantLock CASes from a constant and
   *     skips that read, which is the ~0.8 ns between the two (LockFloorBenchmark).
   *   - unlock: one CAS from "LOCKED with my number, not QUEUED" to unlocked, tried before
   *     reading the word at all: the guard knows the value to expect.
   *
   * Slow paths, under the queue's lock: a request that finds the mutex locked sets QUEUED (by
   * CAS, so only if it is still locked) and appends itself; an unlock that finds QUEUED set hands
   * the lock to the head in the same CAS that checks its number (unlockLocked).
   *
   * Invariants:
   *   M1. QUEUED is set if and only if the queue is non-empty (both change under the lock).
   *   M2. While QUEUED is set, the state changes only under the lock.
   *   M3. Whenever LOCKED is clear, the queue is empty: an unlock with a queue hands the lock to
   *       the head instead of clearing LOCKED, and a request queues only while LOCKED is set. So
   *       a withdrawal (cancel, timeout, interrupt) never has a lock to hand on: it only clears
   *       QUEUED when the queue empties.
   *   M4. `grant` changes only with a grant, by one; a guard unlocks only while the state holds
   *       LOCKED with its number. A grant that reaches no one (its future completed from outside
   *       first, its thread interrupted) is unlocked by the engine (giveBackLocked), so it is
   *       handed on.
   *
   * Field access follows the engine's rule (its package-info.java): `state` is changed by CAS (STATE).
   */

  private static final long QUEUED = 1;
  private static final long LOCKED = 2;
  private static final int GRANT_SHIFT = 2;

  /** From a free state (LOCKED and QUEUED clear) to the next grant: nextGrant(s) == s + this. */
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

  private volatile long state;

  FifoMutex(@Nullable String name, @Nullable Executor completionExecutor) {
    super(completionExecutor, null, Timer.shared(), null);
    this.name = name;
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

  /** The fast path: locks if the mutex is free and no one is queued; else null. */
  private @Nullable Guard tryTake() {
    long s = state;
    if ((s & (LOCKED | QUEUED)) == 0 && STATE.compareAndSet(this, s, s + FREE_TO_LOCKED)) {
      return new LocalMutexGuard(this, s + FREE_TO_LOCKED); // QUEUED stays clear
    }
    return (s & (LOCKED | QUEUED)) == 0 ? tryTakeRaced() : null;
  }

  /** {@link #tryTake} after a lost CAS: retries while the mutex stays free. */
  private @Nullable Guard tryTakeRaced() {
    long s;
    while (((s = state) & (LOCKED | QUEUED)) == 0) {
      if (STATE.compareAndSet(this, s, s + FREE_TO_LOCKED)) {
        return new LocalMutexGuard(this, s + FREE_TO_LOCKED);
      }
    }
    return null;
  }

  /** The state of the grant after {@code s}: locked under the next number, QUEUED kept. */
  private static long nextGrant(long s) {
    return (((s >>> GRANT_SHIFT) + 1) << GRANT_SHIFT) | LOCKED | (s & QUEUED);
  }

  /**
   * Locks under the lock if the mutex is free, else queues {@code w} (M3: only while locked).
   * Returns true if queued; false if granted at once, with the guard in {@code w.outcome}.
   */
  private boolean enqueue(WaitNode w) {
    lock.lock();
    try {
      for (; ; ) {
        long s = state;
        if ((s & LOCKED) == 0) { // then the queue is empty (M3)
          long next = nextGrant(s);
          if (STATE.compareAndSet(this, s, next)) {
            w.setOutcome(new LocalMutexGuard(this, next)); // QUEUED is clear in next (M3)
            w.setStatus(WaitNode.GRANTED);
            return false;
          }
        } else if ((s & QUEUED) != 0 || STATE.compareAndSet(this, s, s | QUEUED)) {
          append(w);
          return true;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- unlocking

  /**
   * Unlocks if the mutex is still locked under {@code grant} (a guard's state word: its number and
   * LOCKED, QUEUED clear); else does nothing.
   */
  void unlock(long grant) {
    // The common case in one instruction, without reading first: still ours and no queue.
    if (STATE.compareAndSet(this, grant, grant & ~LOCKED)) {
      return;
    }
    long s = state;
    while ((s & QUEUED) == 0) {
      if (s != grant) {
        return; // unlocked already, or locked again by someone else since
      }
      if (STATE.compareAndSet(this, s, s & ~LOCKED)) {
        return;
      }
      s = state;
    }
    WaitNode delivered;
    lock.lock();
    try {
      delivered = unlockLocked(grant);
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /**
   * Unlocks under the queue's lock: with a queue, hands the lock to the head in the same CAS (M3);
   * returns the head, granted, or null. Lock held.
   */
  @GuardedBy("lock")
  private @Nullable WaitNode unlockLocked(long grant) {
    for (; ; ) {
      long s = state;
      if ((s & ~QUEUED) != grant) {
        return null; // not ours any more
      }
      WaitNode first = head();
      if (first == null) { // QUEUED clear: a plain unlock, racing only with tryTake's reads
        if (STATE.compareAndSet(this, s, s & ~LOCKED)) {
          return null;
        }
        continue;
      }
      WaitNode rest = first.next();
      long next = nextGrant(s) & ~QUEUED | (rest != null ? QUEUED : 0L);
      if (STATE.compareAndSet(this, s, next)) {
        first.setOutcome(new LocalMutexGuard(this, next & ~QUEUED));
        return unlinkRun(rest, WaitNode.GRANTED);
      }
    }
  }

  /** True while the mutex is locked under {@code grant}. */
  boolean holds(long grant) {
    return (state & ~QUEUED) == grant;
  }

  // ---------------------------------------------------------------- the engine's hooks

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode afterWithdrawLocked() {
    if (head() == null) { // the queue emptied: clear QUEUED (M1); nothing to hand on (M3)
      long s;
      do {
        s = state;
      } while (!STATE.compareAndSet(this, s, s & ~QUEUED));
    }
    return null;
  }

  /**
   * The guard a granted node carries: the mutex puts only its own guards in a node's outcome
   * (enqueue, unlockLocked), which is why this cast holds.
   */
  private static LocalMutexGuard guardOf(WaitNode node) {
    return (LocalMutexGuard) java.util.Objects.requireNonNull(node.outcome());
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode giveBackLocked(WaitNode node) {
    return unlockLocked(guardOf(node).grant);
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

  private String describe() {
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

  /** A held lock: the mutex and the number of its grant, which is all unlocking needs. */
  private static final class LocalMutexGuard implements Guard {
    private final FifoMutex mutex;
    private final long grant;

    LocalMutexGuard(FifoMutex mutex, long grant) {
      this.mutex = mutex;
      this.grant = grant;
    }

    @Override
    public void unlock() {
      mutex.unlock(grant);
    }

    @Override
    public String toString() {
      return "Guard[" + mutex.describe() + (mutex.holds(grant) ? "]" : ", unlocked]");
    }
  }
}
