package dev.jeton;

import dev.jeton.internal.Arguments;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
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
   * The free permits, the limit and two flags live in one atomic word, `state`:
   *
   *   state = free << 32 | limit << 2 | CLOSED | QUEUED
   *
   * `free` (bits 63..32) is signed: it goes negative when the limit is lowered below the
   * permits held, and comes back up as they are released. `limit` (bits 31..2) is in the same
   * word so that a request is checked against the limit and served from the same snapshot:
   * otherwise a request racing with setLimit could fail in a way no sequential order explains
   * (Lincheck found exactly that). Requests that wait are nodes (Waiter) of a doubly linked
   * queue, guarded by `lock`.
   *
   * Fast paths, without the lock:
   *   - acquire: one CAS that takes `n` permits, allowed only when neither QUEUED nor CLOSED is
   *     set and `free >= n` (and `n <= limit`, else the request is bad input). So nothing ever takes permits past a queued request: FIFO.
   *   - release: one CAS that adds `n`, allowed only when QUEUED is clear. Otherwise the
   *     releaser takes the lock and adds the permits and grants the waiters they cover in one
   *     CAS (`commitLocked`).
   *
   * Slow path, under the lock: a request that cannot take its permits sets QUEUED (by CAS, so it
   * is set only if the permits it saw are still short) and appends itself. Waiters leave the
   * queue only under the lock: granted from the head while `free` covers the head's request,
   * withdrawn (cancel, timeout, interrupt), or failed (close, a limit below their request).
   *
   * Invariants:
   *   I1. QUEUED is set if and only if the queue is non-empty (both change under the lock).
   *   I2. While QUEUED is set, the state changes only under the lock, and every change that
   *       could let the head in (release, setLimit, withdrawal of the head) grants in the same
   *       CAS. So whenever the lock is free, the head's request exceeds `free`: permits are
   *       never seen free while a request they would cover is queued.
   *   I3. A waiter's status leaves WAITING exactly once, under the lock, as it is unlinked.
   *   I4. Permits are never lost: each grant subtracts exactly the permits it hands out, in the
   *       CAS that decides it; a grant whose future was cancelled first is released again.
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
   * Timers. A timed asynchronous request gets its timer after it is queued, so it may be granted
   * or withdrawn before the timer is stored. Storing (PENDING -> timer) and stopping (-> STOPPED,
   * on delivery or withdrawal) are both atomic on WaiterFuture.timeout: whichever comes second
   * cancels the timer, which so never keeps a finished request reachable.
   *
   * Field access follows the rule in package-info.java. `state` is changed by CAS (STATE).
   * `queueLength` and `tail` are plain, guarded by the lock. `head` is written under the lock but
   * read without it (a blocked waiter asking whether to spin, prewakeHead), so it is volatile.
   * In Waiter, `status` is written under the lock and read by the blocked thread (volatile), and
   * `prewoken` is claimed by CAS by one of the racing releasers, the one that unparks.
   *
   * Blocking waiters. A blocked thread spins briefly (busy-waits, then yields) while it is at the
   * head of the queue before it parks, and when a grant moves a new blocking waiter to the head,
   * the granter unparks it ahead of its turn ("prewake") so that it is spinning, not parked, when
   * its permits come. This is what makes a strict FIFO handoff cost a cache miss rather than a
   * context switch. The spin budget is spent once per request (a waiter reaches the head once),
   * never refilled by a wake-up, and every step first looks at the interrupt and the deadline.
   */

  private static final int FREE_SHIFT = 32;
  private static final int LIMIT_SHIFT = 2;
  private static final long LIMIT_MASK = 0xFFFF_FFFCL;
  private static final long QUEUED = 1;
  private static final long CLOSED = 2;

  /** The largest limit the state word holds. */
  static final int MAX_LIMIT = (1 << 30) - 1;
  /**
   * How long the head waiter stays awake before parking: this many busy-wait steps, then this
   * many {@code Thread.yield()}s, which hand the core to the permit holder when threads outnumber
   * cores. Chosen with ContendedBenchmark (see BENCHMARKS.md).
   */
  private static final int SPIN_WAITS = 1 << 10;

  private static final int SPIN_YIELDS = 1 << 12;

  /** The whole spin budget, in steps. */
  static final int SPIN_STEPS = SPIN_WAITS + SPIN_YIELDS;

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
  private final Timers timers;

  /** Run at every step of the spin: null except in tests that watch the spin. */
  private final @Nullable Runnable spinStep;

  private final ReentrantLock lock = new ReentrantLock();

  private volatile long state;

  /** Guarded by the lock. */
  private int queueLength;

  /**
   * Written under the lock; volatile because two readers go without it: a blocked waiter asking
   * whether it is at the head (and so should spin), and prewakeHead after a release. A stale
   * answer there costs one park or one needless unpark, never a lost grant (the grant unparks).
   */
  private volatile @Nullable Waiter head;

  private @Nullable Waiter tail;

  FifoSemaphore(
      @Nullable String name, int limit, @Nullable Executor completionExecutor, boolean stats) {
    this(name, limit, completionExecutor, stats, TimeoutScheduler::start, null);
  }

  /** With the timers of timed asynchronous requests, and a spin hook: for tests. */
  FifoSemaphore(
      @Nullable String name,
      int limit,
      @Nullable Executor completionExecutor,
      boolean stats,
      Timers timers,
      @Nullable Runnable spinStep) {
    checkLimit(limit);
    this.name = name;
    this.completionExecutor = completionExecutor;
    this.stats = stats ? new StatsRecorder() : null;
    this.timers = timers;
    this.spinStep = spinStep;
    this.state = ((long) limit << FREE_SHIFT) | ((long) limit << LIMIT_SHIFT);
  }

  // ---------------------------------------------------------------- acquiring

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (tryTake(permits)) { // also checks permits against the limit
      return granted(permits);
    }
    try {
      return acquireSlow(permits, Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    long nanos = Arguments.toNanos(timeout);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (tryTake(permits)) {
      return granted(permits);
    }
    return acquireSlow(permits, nanos, timeout);
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
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
    if (tryTake(permits)) {
      return grantedNow(permits);
    }
    Waiter w = Waiter.async(this, permits, false);
    enqueue(w);
    return w.permitFuture();
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    long nanos = Arguments.toNanos(timeout);
    if (tryTake(permits)) {
      return grantedNow(permits);
    }
    boolean timed = nanos != Long.MAX_VALUE;
    Waiter w = Waiter.async(this, permits, timed);
    Waiter.WaiterFuture<?> future = java.util.Objects.requireNonNull(w.future);
    if (enqueue(w) && timed) {
      // The request may be granted or withdrawn before its timer is stored: setTimer and
      // stopTimer settle that race, so the timer never outlives the request.
      future.setTimer(
          timers.start(
              () -> future.completeExceptionally(timeoutException(permits, timeout)), nanos));
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
        if (free(s) >= limit(s)) {
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

  /**
   * The fast path: takes {@code n} permits if no one is queued, the semaphore is open, and they
   * are free. Checks {@code n} against the limit of the same snapshot.
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

  private LocalPermit granted(int permits) {
    countAcquired();
    return new LocalPermit(this, permits);
  }

  private CompletableFuture<Permit> grantedNow(int permits) {
    return CompletableFuture.completedFuture(granted(permits));
  }

  private void countAcquired() {
    StatsRecorder s = stats;
    if (s != null) {
      s.acquired.increment();
    }
  }

  /**
   * Takes the permits under the lock if they can be had now, else queues {@code w}.
   *
   * @return true if queued; false if granted at once (status GRANTED) or failed (status FAILED_*)
   */
  private boolean enqueue(Waiter w) {
    lock.lock();
    try {
      if (w.permits > limit(state)) { // the limit changes only under the lock
        w.status = Waiter.FAILED_LIMIT;
      } else {
        long delta = (long) w.permits << FREE_SHIFT;
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
      countAcquired();
    }
    if (w.future != null) {
      w.deliver();
    }
    return false;
  }

  /**
   * Queues a blocking request and waits for its outcome, up to {@code nanos} unless that is
   * {@code Long.MAX_VALUE}; {@code timeout} is the same wait, for the message.
   *
   * <p>Every turn of the loop looks at the interrupt, then the outcome, then the deadline, and
   * only then spins one step or parks: so a spinning waiter sees an interrupt or its deadline at
   * the next step. The interrupt comes first, as it did after a park: an interrupted request
   * throws, and gives back a grant that reached it meanwhile. The spin budget is spent once per request, while it is at the head (it gets there
   * once, and stays until it leaves); a wake-up, by a prewake or spuriously, never refills it.
   */
  @SuppressWarnings("ThreadPriorityCheck") // yield hands the core to the holder; see SPIN_YIELDS
  private Permit acquireSlow(int permits, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    long start = System.nanoTime();
    boolean timed = nanos != Long.MAX_VALUE;
    Waiter w = Waiter.blocking(permits);
    enqueue(w);
    int spins = SPIN_STEPS;
    for (; ; ) {
      if (Thread.interrupted()) {
        if (!withdraw(w, Waiter.CANCELLED) && w.status == Waiter.GRANTED) {
          release(permits); // granted as we were interrupted: give it back
        }
        throw new InterruptedException();
      }
      int status = w.status;
      if (status == Waiter.GRANTED) {
        return new LocalPermit(this, permits);
      }
      if (status != Waiter.WAITING) {
        throw failure(status, permits);
      }
      long remaining = timed ? nanos - (System.nanoTime() - start) : Long.MAX_VALUE;
      if (remaining <= 0L) {
        if (withdraw(w, Waiter.TIMED_OUT)) {
          throw timeoutException(permits, timeout != null ? timeout : Duration.ofNanos(nanos));
        }
        continue; // granted or failed meanwhile: the status says which
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

  // ---------------------------------------------------------------- releasing and granting

  /** Gives back {@code n} permits; called once per {@link LocalPermit}. */
  void release(int n) {
    StatsRecorder st = stats;
    if (st != null) {
      st.released.increment();
    }
    long delta = (long) n << FREE_SHIFT;
    long s = state;
    while ((s & QUEUED) == 0) {
      if (STATE.weakCompareAndSet(this, s, s + delta)) {
        return;
      }
      s = state;
    }
    Waiter delivered;
    lock.lock();
    try {
      delivered = commitLocked(n, -1, 0L);
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /**
   * Changes the state and grants the waiters that then fit, in one CAS, so that no reader ever
   * sees permits free while a request they would cover is still queued. Adds {@code addFree}
   * permits, sets the limit to {@code newLimit} unless it is -1 (moving {@code free} by the same
   * amount), sets {@code flags}, and sets QUEUED exactly when waiters remain. Unlinks the granted
   * waiters and returns them chained through {@code next}. Lock held.
   *
   * <p>While QUEUED is set, nothing changes the state without the lock (the fast paths refuse to),
   * so the CAS fails only when the queue was empty and a fast path raced with it.
   */
  private @Nullable Waiter commitLocked(int addFree, int newLimit, long flags) {
    for (; ; ) {
      long s = state;
      int limit = newLimit < 0 ? limit(s) : newLimit;
      int free = free(s) + addFree + (limit - limit(s));
      Waiter newHead = head;
      while (newHead != null) {
        int need = newHead.permits == 0 ? limit : newHead.permits;
        if (free < need) {
          break;
        }
        free -= newHead.permits;
        newHead = newHead.next;
      }
      long next =
          ((long) free << FREE_SHIFT)
              | ((long) limit << LIMIT_SHIFT)
              | (s & CLOSED)
              | flags
              | (newHead != null ? QUEUED : 0L);
      if (STATE.compareAndSet(this, s, next)) {
        return unlinkGranted(newHead);
      }
    }
  }

  /** Unlinks the waiters ahead of {@code newHead}, granted; returns them chained. Lock held. */
  private @Nullable Waiter unlinkGranted(@Nullable Waiter newHead) {
    Waiter first = head;
    if (first == null || first == newHead) {
      return null;
    }
    StatsRecorder st = stats;
    long now = st != null ? System.nanoTime() : 0L;
    for (Waiter w = first; w != null && w != newHead; w = w.next) {
      w.status = Waiter.GRANTED;
      queueLength--;
      if (st != null && w.permits != 0) {
        st.granted(now - w.queuedAt);
      }
    }
    // The granted run keeps its `next` links as the delivery chain; cut it from the queue.
    Waiter last = newHead == null ? tail : newHead.prev;
    java.util.Objects.requireNonNull(last).next = null;
    first.prev = null;
    head = newHead;
    if (newHead == null) {
      tail = null;
    } else {
      newHead.prev = null;
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
      unlink(w);
      w.status = reason;
      StatsRecorder s = stats;
      if (s != null) {
        s.withdrawn(reason);
      }
      delivered = commitLocked(0, -1, 0L); // the requests behind it may fit now
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

  /**
   * Delivers one waiter, which may belong to another semaphore: the trampoline is per thread, not
   * per semaphore, so a delivery that releases another semaphore queues that one's waiters here.
   */
  private static void deliverOne(Waiter w) {
    Executor executor = w.future == null ? null : w.future.semaphore.completionExecutor;
    if (executor == null) {
      w.deliver();
      return;
    }
    try {
      executor.execute(w::deliver);
    } catch (RuntimeException rejected) { // RejectedExecutionException, or a broken executor
      w.deliver(); // a grant must reach its requester, or its permits are stranded
    }
  }

  /** Unparks a blocking waiter newly at the head so that it spins, rather than sleeps, into its grant. */
  private void prewakeHead() {
    Waiter h = head; // without the lock: a stale answer costs one needless unpark or one park
    if (h != null && h.thread != null && h.claimPrewake()) {
      LockSupport.unpark(h.thread);
    }
  }

  // ---------------------------------------------------------------- limit and closing

  @Override
  public void setLimit(int newLimit) {
    checkLimit(newLimit);
    Waiter delivered;
    lock.lock();
    try {
      Waiter failed = removeLocked(w -> w.permits > newLimit, Waiter.FAILED_LIMIT);
      delivered = concat(failed, commitLocked(0, newLimit, 0L));
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
      if ((state & CLOSED) != 0) {
        return;
      }
      Waiter failed = removeLocked(w -> w.permits != 0, Waiter.FAILED_CLOSED);
      delivered = concat(failed, commitLocked(0, -1, CLOSED));
    } finally {
      lock.unlock();
    }
    deliver(delivered);
  }

  /**
   * Unlinks the waiters that match, with the given status; returns them chained. The caller
   * commits next, which fixes QUEUED. Lock held.
   */
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
      throw new IllegalArgumentException(
          "limit must not exceed " + MAX_LIMIT + ", was " + limit);
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
   * Takes the lock: the queue and the QUEUED flag change together under it, so a reader without
   * it could see a request refused for a queue it then reports empty.
   */
  @Override
  public int queueLength() {
    lock.lock();
    try {
      return queueLength;
    } finally {
      lock.unlock();
    }
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
        + limit()
        + ", available="
        + available()
        + ", queued="
        + queueLength()
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
              + limit()
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

  /** Starts the timer of a timed asynchronous request; tests give their own. */
  @FunctionalInterface
  interface Timers {
    /** Runs {@code onTimeout} after {@code nanos} unless the returned future is cancelled. */
    Future<?> start(Runnable onTimeout, long nanos);
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
