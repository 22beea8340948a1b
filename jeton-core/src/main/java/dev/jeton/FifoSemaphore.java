package dev.jeton;

import dev.jeton.internal.Arguments;
import dev.jeton.internal.engine.StatsRecorder;
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
 * The in-process {@link Semaphore}: weighted, strictly FIFO, blocking and asynchronous; and the
 * permit engine of the primitives built on it ({@link FifoMutex}, {@link FifoReadWriteLock}), which
 * differ only in what a grant is ({@link Grants}).
 *
 * <p>The contract is on {@link Semaphore}; this comment explains how it is kept. The queue itself,
 * its withdrawal and its delivery are {@link WaitQueue}'s.
 */
final class FifoSemaphore extends WaitQueue implements Semaphore {
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
   * Field access follows the rule in package-info.java: `state` is changed by CAS (STATE) and
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
      STATE = MethodHandles.lookup().findVarHandle(FifoSemaphore.class, "state", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final @Nullable String name;
  private final Grants grants;

  private volatile long state;

  FifoSemaphore(
      @Nullable String name, int limit, @Nullable Executor completionExecutor, boolean stats) {
    this(name, limit, completionExecutor, stats, Timers.shared(), null);
  }

  /** With the timers of timed asynchronous requests, and a spin hook: for tests. */
  FifoSemaphore(
      @Nullable String name,
      int limit,
      @Nullable Executor completionExecutor,
      boolean stats,
      Timers timers,
      @Nullable Runnable spinStep) {
    this(
        name,
        limit,
        completionExecutor,
        stats ? new StatsRecorder() : null,
        timers,
        spinStep,
        Grants.PERMITS);
  }

  /** The engine of another primitive, whose grants are made by {@code grants}. */
  FifoSemaphore(
      @Nullable String name,
      int limit,
      @Nullable Executor completionExecutor,
      @Nullable StatsRecorder stats,
      Timers timers,
      @Nullable Runnable spinStep,
      Grants grants) {
    super(completionExecutor, stats, timers, spinStep);
    checkLimit(limit);
    this.name = name;
    this.grants = grants;
    this.state = ((long) limit << FREE_SHIFT) | ((long) limit << LIMIT_SHIFT);
  }

  // ---------------------------------------------------------------- acquiring, for any grant

  /** Acquires {@code permits} by blocking, as long as it takes. */
  Object acquireGrant(int permits) throws InterruptedException {
    try {
      return acquireGrant(permits, Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  /** Acquires {@code permits} by blocking, at most {@code timeout}. */
  Object acquireGrant(int permits, Duration timeout) throws InterruptedException, TimeoutException {
    return acquireGrant(permits, Arguments.toNanos(timeout), timeout);
  }

  /** Acquires {@code permits} by blocking, at most {@code nanos} unless that is MAX_VALUE. */
  private Object acquireGrant(int permits, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (tryTake(permits)) { // also checks permits against the limit
      return granted(permits);
    }
    WaitNode w = WaitNode.blocking(permits);
    if (enqueue(w)) {
      awaitBlocking(w, nanos, timeout);
    } else if (w.status() != WaitNode.GRANTED) {
      throw failure(w);
    }
    return grants.grant(this, permits);
  }

  /** The grant of {@code permits} if no one is queued and they are free now, else null. */
  @Nullable Object tryGrant(int permits) {
    if (tryTake(permits)) {
      return granted(permits);
    }
    if ((state & CLOSED) != 0) {
      throw closedException();
    }
    StatsRecorder s = stats;
    if (s != null) {
      s.countRejected();
    }
    return null;
  }

  /** Requests {@code permits} asynchronously, for at most {@code timeout} unless it is null. */
  <T> CompletableFuture<T> acquireGrantAsync(int permits, @Nullable Duration timeout) {
    long nanos = timeout == null ? Long.MAX_VALUE : Arguments.toNanos(timeout);
    if (tryTake(permits)) {
      @SuppressWarnings("unchecked")
      T grant = (T) granted(permits);
      return CompletableFuture.completedFuture(grant);
    }
    WaitNode w = WaitNode.async(this, permits, nanos != Long.MAX_VALUE);
    return futureOf(
        w, enqueue(w), nanos, () -> timeoutException(w, java.util.Objects.requireNonNull(timeout)));
  }

  // ---------------------------------------------------------------- Semaphore

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    return (Permit) acquireGrant(permits);
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    return (Permit) acquireGrant(permits, timeout);
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
    return Optional.ofNullable((Permit) tryGrant(permits));
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    return acquireGrantAsync(permits, null);
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    return acquireGrantAsync(permits, timeout);
  }

  @Override
  public CompletableFuture<Void> awaitIdle() {
    WaitNode w = WaitNode.async(this, 0, false);
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
    return futureOf(w, queued, Long.MAX_VALUE, () -> new TimeoutException());
  }

  /**
   * The fast path: takes {@code n} permits if no one is queued, the semaphore is open, and they are
   * free. Checks {@code n} against the limit of the same snapshot.
   */
  private boolean tryTake(int n) {
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

  private Object granted(int permits) {
    countAcquired();
    return grants.grant(this, permits);
  }

  private void countAcquired() {
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
  private boolean enqueue(WaitNode w) {
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
  protected @Nullable WaitNode afterWithdrawLocked() {
    return commitLocked(0, -1, 0L); // the requests behind it may fit now
  }

  @Override
  protected @Nullable Object grantedValue(WaitNode node) {
    return node.weight() == 0 ? null : grants.grant(this, node.weight());
  }

  @Override
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

  @Override
  public void setLimit(int newLimit) {
    checkLimit(newLimit);
    WaitNode delivered;
    lock.lock();
    try {
      WaitNode failed = removeLocked(w -> w.weight() > newLimit, WaitNode.FAILED_LIMIT);
      delivered = concat(failed, commitLocked(0, newLimit, 0L));
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  @Override
  public void close() {
    WaitNode delivered;
    lock.lock();
    try {
      if ((state & CLOSED) != 0) {
        return;
      }
      WaitNode failed = removeLocked(w -> w.weight() != 0, WaitNode.FAILED_CLOSED);
      delivered = concat(failed, commitLocked(0, -1, CLOSED));
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

  static void checkLimit(int limit) {
    Arguments.checkLimit(limit);
    if (limit > MAX_LIMIT) {
      throw new IllegalArgumentException("limit must not exceed " + MAX_LIMIT + ", was " + limit);
    }
  }

  @Override
  public int limit() {
    return limit(state);
  }

  @Override
  public int available() {
    return free(state);
  }

  /**
   * Takes the lock: the queue and the QUEUED flag change together under it, so a reader without it
   * could see a request refused for a queue it then reports empty.
   */
  @Override
  public int queueLength() {
    return super.queueLength();
  }

  @Override
  public Optional<SemaphoreStats> stats() {
    StatsRecorder s = stats;
    if (s == null) {
      return Optional.empty();
    }
    lock.lock();
    try {
      return Optional.of(s.snapshot(queueLengthLocked(), SemaphoreStats::new));
    } finally {
      lock.unlock();
    }
  }

  @Nullable String name() {
    return name;
  }

  boolean isClosed() {
    return (state & CLOSED) != 0;
  }

  @Override
  public String toString() {
    return "Semaphore["
        + (name != null ? "name=" + name + ", " : "")
        + "limit="
        + limit()
        + ", available="
        + available()
        + ", queued="
        + queueLength()
        + (isClosed() ? ", closed]" : "]");
  }

  // ---------------------------------------------------------------- failures

  /** "semaphore 'db'", or the kind of the primitive built on this engine. */
  String describe() {
    return name != null ? grants.kind() + " '" + name + "'" : grants.kind();
  }

  private SemaphoreClosedException closedException() {
    return new SemaphoreClosedException(describe() + " is closed");
  }

  @Override
  protected TimeoutException timeoutException(WaitNode node, Duration timeout) {
    return new TimeoutException(
        "timed out after "
            + timeout
            + " waiting for "
            + grants.request(node.weight())
            + " of "
            + describe());
  }

  @Override
  protected RuntimeException failure(WaitNode node) {
    return failure(node.status(), node.weight());
  }

  /** The exception for a request of {@code permits} that left the queue with {@code status}. */
  RuntimeException failure(int status, int permits) {
    if (status == WaitNode.FAILED_CLOSED) {
      return closedException();
    }
    if (status == WaitNode.FAILED_LIMIT) {
      return new IllegalArgumentException(
          "the limit of "
              + describe()
              + " is now "
              + limit()
              + ", below the request for "
              + grants.request(permits));
    }
    throw new AssertionError("no failure for status " + status);
  }
}
