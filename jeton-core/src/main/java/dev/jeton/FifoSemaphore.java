package dev.jeton;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link Semaphore}: weighted, strictly FIFO, blocking and asynchronous.
 *
 * <p>The contract is on {@link Semaphore}; this comment explains how it is kept.
 */
final class FifoSemaphore implements Semaphore {
  /*
   * Overview
   *
   * The free permits live in one atomic word, `state`, together with two flags:
   *
   *   state = free << SHIFT | CLOSED | QUEUED
   *
   * `free` is signed: it goes negative when the limit is lowered below the permits held, and
   * comes back up as they are released. Requests that wait are nodes (Waiter) of a doubly linked
   * queue, guarded by `lock`.
   *
   * Fast paths, without the lock:
   *   - acquire: one CAS that takes `n` permits, allowed only when neither QUEUED nor CLOSED is
   *     set and `free >= n`. So nothing ever takes permits past a queued request: FIFO.
   *   - release: one atomic add of `n`. If the old state had QUEUED set, the releaser takes the
   *     lock and grants waiters (`grantLocked`).
   *
   * Slow path, under the lock: a request that cannot take its permits sets QUEUED (by CAS, so it
   * is set only if the permits it saw are still short) and appends itself. Waiters leave the
   * queue only under the lock: granted from the head while `free` covers the head's request,
   * withdrawn (cancel, timeout, interrupt), or failed (close, a limit below their request).
   *
   * Invariants:
   *   I1. QUEUED is set if and only if the queue is non-empty (both change under the lock).
   *   I2. Whenever the lock is free, either the head's request exceeds `free`, or a releaser
   *       whose add saw QUEUED is about to take the lock and grant. (Releases add without the
   *       lock; every add that sees QUEUED is followed by a grant pass.)
   *   I3. A waiter's status leaves WAITING exactly once, under the lock, as it is unlinked.
   *   I4. Permits are never lost: each grant subtracts exactly the permits it hands out, in the
   *       same CAS that decides it; a grant whose future was cancelled first is released again.
   *
   * An `awaitIdle` waiter (permits == 0) needs `free >= limit`; when it reaches the head and that
   * holds, it is granted without taking anything.
   *
   * Delivery. Grants and failures are decided under the lock, chained through `Waiter.next`,
   * and delivered after unlocking: blocked threads are unparked, futures completed. Completing a
   * future runs its callbacks, which may release, which may grant and complete another future:
   * to keep that in constant stack, each thread delivers through a thread-local trampoline, and
   * a delivery started inside another one is queued for the outer loop instead of recursing.
   *
   * Blocking waiters. A blocked thread spins briefly while it is at the head of the queue before
   * it parks, and when a grant moves a new blocking waiter to the head, the granter unparks it
   * ahead of its turn ("prewake") so that it is spinning, not parked, when its permits come.
   * This is what makes a strict FIFO handoff cost a cache miss rather than a context switch.
   */

  private static final int SHIFT = 2;
  private static final long QUEUED = 1;
  private static final long CLOSED = 2;
  private static final int SPINS = 1 << 12;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(FifoSemaphore.class, "state", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static final ThreadLocal<Trampoline> TRAMPOLINE =
      ThreadLocal.withInitial(Trampoline::new);

  private final @Nullable String name;
  private final @Nullable Executor completionExecutor;
  private final @Nullable StatsRecorder stats;
  private final ReentrantLock lock = new ReentrantLock();

  private volatile long state;

  /** Written under the lock; read without it by request checks and inspection. */
  private volatile int limit;

  /** Written under the lock; read without it by {@link #queueLength()}. */
  private volatile int queueLength;

  /** Guarded by the lock, except for the racy read that decides whether to spin. */
  private @Nullable Waiter head;

  private @Nullable Waiter tail;

  FifoSemaphore(
      @Nullable String name, int limit, @Nullable Executor completionExecutor, boolean stats) {
    Tasks.checkLimit(limit);
    this.name = name;
    this.limit = limit;
    this.completionExecutor = completionExecutor;
    this.stats = stats ? new StatsRecorder() : null;
    this.state = (long) limit << SHIFT;
  }

  // ---------------------------------------------------------------- acquiring

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    Tasks.checkWeight(permits, limit);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (tryTake(permits)) {
      return granted(permits);
    }
    try {
      return acquireSlow(permits, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    long nanos = Tasks.toNanos(timeout);
    Tasks.checkWeight(permits, limit);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (tryTake(permits)) {
      return granted(permits);
    }
    return acquireSlow(permits, timeout);
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
    Tasks.checkWeight(permits, limit);
    if (tryTake(permits)) {
      return Optional.of(granted(permits));
    }
    if ((state & CLOSED) != 0) {
      throw closedException();
    }
    StatsRecorder s = stats;
    if (s != null) {
      s.rejected.increment();
    }
    return Optional.empty();
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    Tasks.checkWeight(permits, limit);
    if (tryTake(permits)) {
      return CompletableFuture.completedFuture(granted(permits));
    }
    Waiter w = Waiter.async(this, permits);
    enqueue(w);
    return w.permitFuture();
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    long nanos = Tasks.toNanos(timeout);
    Tasks.checkWeight(permits, limit);
    if (tryTake(permits)) {
      return CompletableFuture.completedFuture(granted(permits));
    }
    Waiter w = Waiter.async(this, permits);
    Waiter.WaiterFuture<?> future = java.util.Objects.requireNonNull(w.future);
    if (enqueue(w) && nanos != Long.MAX_VALUE) {
      future.timeout =
          TimeoutScheduler.INSTANCE.schedule(
              () -> future.completeExceptionally(timeoutException(permits, timeout)),
              nanos,
              TimeUnit.NANOSECONDS);
      if (future.isDone()) { // granted before the timer was stored: stop it now
        future.timeout.cancel(false);
      }
    }
    return w.permitFuture();
  }

  @Override
  public CompletableFuture<Void> awaitIdle() {
    Waiter w = Waiter.idle(this);
    lock.lock();
    try {
      long s = state;
      while ((s & QUEUED) == 0) {
        if (free(s) >= limit) {
          w.status = Waiter.GRANTED;
          break;
        }
        if (STATE.compareAndSet(this, s, s | QUEUED)) {
          s |= QUEUED;
        } else {
          s = state;
        }
      }
      if (w.status != Waiter.GRANTED) {
        append(w);
      }
    } finally {
      lock.unlock();
    }
    if (w.status == Waiter.GRANTED) {
      w.idleFuture().complete(null);
    }
    return w.idleFuture();
  }

  /** The fast path: takes {@code n} permits if no one is queued, the semaphore is open, and they are free. */
  private boolean tryTake(int n) {
    long delta = (long) n << SHIFT;
    long s = state;
    while ((s & (QUEUED | CLOSED)) == 0 && free(s) >= n) {
      if (STATE.weakCompareAndSet(this, s, s - delta)) {
        return true;
      }
      s = state;
    }
    return false;
  }

  private LocalPermit granted(int permits) {
    StatsRecorder s = stats;
    if (s != null) {
      s.acquired.increment();
    }
    return new LocalPermit(this, permits);
  }

  /**
   * Takes the permits under the lock if they can be had now, else queues {@code w}.
   *
   * @return true if queued; false if granted at once (status GRANTED) or failed (status FAILED_*)
   */
  private boolean enqueue(Waiter w) {
    lock.lock();
    try {
      if (w.permits > limit) {
        w.status = Waiter.FAILED_LIMIT;
      } else {
        long delta = (long) w.permits << SHIFT;
        for (; ; ) {
          long s = state;
          if ((s & CLOSED) != 0) {
            w.status = Waiter.FAILED_CLOSED;
            break;
          }
          if ((s & QUEUED) == 0) {
            if (free(s) >= w.permits) {
              if (STATE.compareAndSet(this, s, s - delta)) {
                w.status = Waiter.GRANTED;
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
    if (w.status == Waiter.GRANTED) {
      StatsRecorder s = stats;
      if (s != null) {
        s.acquired.increment();
      }
    }
    if (w.future != null) {
      w.deliver(this);
    }
    return false;
  }

  /** Queues a blocking request and waits for its outcome, up to {@code timeout} if there is one. */
  private Permit acquireSlow(int permits, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    long start = System.nanoTime();
    long nanos = timeout == null ? Long.MAX_VALUE : Tasks.toNanos(timeout);
    boolean timed = nanos != Long.MAX_VALUE;
    Waiter w = Waiter.blocking(permits);
    enqueue(w);
    int spins = SPINS;
    for (; ; ) {
      int status = w.status;
      if (status == Waiter.GRANTED) {
        return new LocalPermit(this, permits);
      }
      if (status != Waiter.WAITING) {
        throw failure(status, permits);
      }
      if (spins > 0 && head == w) {
        spins--;
        Thread.onSpinWait();
        continue;
      }
      if (timed) {
        long remaining = nanos - (System.nanoTime() - start);
        if (remaining <= 0L) {
          if (withdraw(w, Waiter.TIMED_OUT)) {
            throw timeoutException(permits, java.util.Objects.requireNonNull(timeout));
          }
          continue; // granted or failed meanwhile: the status says which
        }
        LockSupport.parkNanos(this, remaining);
      } else {
        LockSupport.park(this);
      }
      if (Thread.interrupted()) {
        if (!withdraw(w, Waiter.CANCELLED) && w.status == Waiter.GRANTED) {
          release(permits); // granted as we were interrupted: give it back
        }
        throw new InterruptedException();
      }
      spins = SPINS; // woken: by a grant, a prewake, or spuriously
    }
  }

  // ---------------------------------------------------------------- releasing and granting

  /** Gives back {@code n} permits; called once per {@link LocalPermit}. */
  void release(int n) {
    long old = (long) STATE.getAndAdd(this, (long) n << SHIFT);
    StatsRecorder s = stats;
    if (s != null) {
      s.released.increment();
    }
    if ((old & QUEUED) != 0) {
      Waiter delivered;
      lock.lock();
      try {
        delivered = grantLocked();
      } finally {
        lock.unlock();
      }
      deliver(delivered);
    }
  }

  /**
   * Grants waiters from the head while the free permits cover them, clearing QUEUED with the last.
   * Returns the granted waiters chained through {@code next}. Lock held.
   */
  private @Nullable Waiter grantLocked() {
    Waiter first = null;
    Waiter last = null;
    Waiter w;
    while ((w = head) != null) {
      long s = state;
      int need = w.permits == 0 ? limit : w.permits;
      if (free(s) < need) {
        break;
      }
      long next = s - ((long) w.permits << SHIFT);
      if (w.next == null) {
        next &= ~QUEUED;
      }
      if (!STATE.compareAndSet(this, s, next)) {
        continue; // a release added permits meanwhile
      }
      unlink(w);
      w.status = Waiter.GRANTED;
      StatsRecorder st = stats;
      if (st != null && w.permits != 0) {
        st.granted(System.nanoTime() - w.queuedAt);
      }
      if (last == null) {
        first = w;
      } else {
        last.next = w;
      }
      last = w;
    }
    return first;
  }

  /**
   * Takes a waiting request out of the queue. Returns false if it had already left (granted or
   * failed), in which case its status tells the outcome.
   */
  boolean withdraw(Waiter w, int reason) {
    Waiter delivered;
    lock.lock();
    try {
      if (w.status != Waiter.WAITING) {
        return false;
      }
      boolean wasHead = w == head;
      unlink(w);
      w.status = reason;
      clearQueuedIfEmpty();
      StatsRecorder s = stats;
      if (s != null) {
        s.withdrawn(reason);
      }
      delivered = wasHead ? grantLocked() : null;
    } finally {
      lock.unlock();
    }
    deliver(delivered);
    return true;
  }

  /** Delivers a chain of waiters that left the queue; see "Delivery" in the overview. */
  private void deliver(@Nullable Waiter chain) {
    if (chain == null) {
      prewakeHead();
      return;
    }
    Trampoline t = TRAMPOLINE.get();
    for (Waiter w = chain; w != null; ) {
      Waiter next = w.next;
      w.next = null;
      t.pending.add(w);
      w = next;
    }
    prewakeHead();
    if (t.running) {
      return; // an outer deliver() on this thread will get to them
    }
    t.running = true;
    try {
      Waiter w;
      while ((w = t.pending.poll()) != null) {
        deliverOne(w);
      }
    } finally {
      t.running = false;
    }
  }

  private void deliverOne(Waiter w) {
    Executor executor = completionExecutor;
    if (executor == null || w.thread != null) {
      w.deliver(this);
      return;
    }
    try {
      executor.execute(() -> w.deliver(this));
    } catch (RejectedExecutionException rejected) {
      w.deliver(this);
    }
  }

  /** Unparks a blocking waiter newly at the head so that it spins, rather than sleeps, into its grant. */
  private void prewakeHead() {
    Waiter h = head; // racy on purpose: a stale answer costs one needless unpark or one park
    if (h != null && h.thread != null && !h.prewoken) {
      h.prewoken = true;
      LockSupport.unpark(h.thread);
    }
  }

  // ---------------------------------------------------------------- limit and closing

  @Override
  public void setLimit(int newLimit) {
    Tasks.checkLimit(newLimit);
    Waiter delivered;
    lock.lock();
    try {
      int delta = newLimit - limit;
      limit = newLimit;
      STATE.getAndAdd(this, (long) delta << SHIFT);
      Waiter failed = removeLocked(w -> w.permits > newLimit, Waiter.FAILED_LIMIT);
      delivered = concat(failed, grantLocked());
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  @Override
  public void close() {
    Waiter delivered;
    lock.lock();
    try {
      long s = state;
      if ((s & CLOSED) != 0) {
        return;
      }
      while (!STATE.compareAndSet(this, s, s | CLOSED)) {
        s = state;
      }
      Waiter failed = removeLocked(w -> w.permits != 0, Waiter.FAILED_CLOSED);
      delivered = concat(failed, grantLocked());
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /** Unlinks the waiters that match, with the given status; returns them chained. Lock held. */
  private @Nullable Waiter removeLocked(Predicate<Waiter> test, int status) {
    Waiter first = null;
    Waiter last = null;
    for (Waiter w = head; w != null; ) {
      Waiter next = w.next;
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
    clearQueuedIfEmpty();
    return first;
  }

  private static @Nullable Waiter concat(@Nullable Waiter a, @Nullable Waiter b) {
    if (a == null) {
      return b;
    }
    Waiter end = a;
    while (end.next != null) {
      end = end.next;
    }
    end.next = b;
    return a;
  }

  // ---------------------------------------------------------------- the queue (lock held)

  private void append(Waiter w) {
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

  private void unlink(Waiter w) {
    Waiter prev = w.prev;
    Waiter next = w.next;
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
    queueLength = queueLength - 1;
  }

  private void clearQueuedIfEmpty() {
    if (head != null) {
      return;
    }
    long s = state;
    while ((s & QUEUED) != 0 && !STATE.compareAndSet(this, s, s & ~QUEUED)) {
      s = state;
    }
  }

  // ---------------------------------------------------------------- inspection

  private static int free(long s) {
    return (int) (s >> SHIFT);
  }

  @Override
  public int limit() {
    return limit;
  }

  @Override
  public int available() {
    return free(state);
  }

  @Override
  public int queueLength() {
    return queueLength;
  }

  @Override
  public Optional<SemaphoreStats> stats() {
    StatsRecorder s = stats;
    if (s == null) {
      return Optional.empty();
    }
    lock.lock();
    try {
      return Optional.of(s.snapshot(queueLength));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    return "Semaphore["
        + (name != null ? "name=" + name + ", " : "")
        + "limit="
        + limit
        + ", available="
        + available()
        + ", queued="
        + queueLength
        + ((state & CLOSED) != 0 ? ", closed]" : "]");
  }

  // ---------------------------------------------------------------- failures

  private String describe() {
    return name != null ? "semaphore '" + name + "'" : "semaphore";
  }

  private SemaphoreClosedException closedException() {
    return new SemaphoreClosedException(describe() + " is closed");
  }

  private TimeoutException timeoutException(int permits, Duration timeout) {
    return new TimeoutException(
        "timed out after " + timeout + " waiting for " + permits + " permits of " + describe());
  }

  /** The exception for a request that left the queue with {@code status}. */
  RuntimeException failure(int status, int permits) {
    if (status == Waiter.FAILED_CLOSED) {
      return closedException();
    }
    if (status == Waiter.FAILED_LIMIT) {
      return new IllegalArgumentException(
          "the limit of "
              + describe()
              + " is now "
              + limit
              + ", below the request for "
              + permits
              + " permits");
    }
    throw new AssertionError("no failure for status " + status);
  }

  /** Per-thread queue of deliveries; see "Delivery" in the overview. */
  private static final class Trampoline {
    final ArrayDeque<Waiter> pending = new ArrayDeque<>();
    boolean running;
  }

  /** The timer for timed asynchronous requests: one daemon thread, started on first use. */
  private static final class TimeoutScheduler {
    static final ScheduledThreadPoolExecutor INSTANCE = create();

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
