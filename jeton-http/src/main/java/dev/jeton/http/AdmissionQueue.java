package dev.jeton.http;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The bounded queue of queued mode, in front of a semaphore that stays FIFO and may be remote:
 * requests wait here, in FIFO, LIFO or priority order, and one "pump" asks the semaphore for one
 * permit at a time and gives each to the best request waiting when it is granted.
 */
final class AdmissionQueue {
  /*
   * Overview
   *
   * Waiters live in one TreeSet, `queue`, ordered by (rank, seq) and guarded by `lock` with
   * `pumping`, `pending`, `nextSeq` and `closed`. seq counts arrivals. FIFO: rank 0, so seq
   * orders. LIFO: rank -seq, newest first. Priorities: rank as in PriorityScheduler, -priority,
   * or with aging of A nanoseconds enqueueNanos - priority * A (saturating), so that a waiter
   * that has waited A ranks like one arriving now a priority higher; aging is continuous, so two
   * waiters' order never changes while both wait and nothing is re-sorted.
   *
   * A full queue: the newcomer and the worst waiter (the last in order) compete, and the worse
   * of the two is refused with QUEUE_FULL. In FIFO order that is always the newcomer (the old
   * ones keep their place). In LIFO order it is always the oldest, pushed out: it is the one
   * whose client has waited longest, so is likeliest to have given up or timed out already,
   * while the newcomer's client is surely still there, and serving fresh requests is the point
   * of LIFO under overload; keeping the old ones would fill the queue with stale requests that
   * then time out. With priorities, the lower-ranked one goes.
   *
   * The pump, as in PriorityScheduler: it asks the semaphore for one permit; when granted it
   * removes the best waiter at that moment and completes it with the permit (outside the lock);
   * if that waiter completed meanwhile (timed out, cancelled), the next best gets the permit; if
   * none is left, the permit goes back. It loops while permits come at once, else leaves a
   * callback on its one pending acquire and returns; it ends when it finds the queue empty.
   *
   * Invariants (each changes only under `lock`):
   *   Q1. `pumping` is true iff a pump is looping or waiting on `pending`: at most one. Every
   *       waiter is seen by it: it ends only after seeing the queue empty under the lock, and an
   *       enqueue that finds `pumping` false starts one.
   *   Q2. The pump holds at most one acquire. When the queue empties (a waiter times out or is
   *       cancelled, close), the pending acquire is cancelled, so that a shared semaphore is not
   *       held up; the pump publishes `pending` and then re-checks the queue, so one of the two
   *       sees the other. A cancelled acquire that finds waiters queued meanwhile acquires again.
   *   Q3. A waiter leaves the queue exactly once: polled by the pump, withdrawn (its future
   *       completed from outside: timeout, cancel), pushed out by a newcomer, or drained by close
   *       or by a semaphore that refuses. Whoever removes it completes it, or finds it completed.
   *   Q4. size() <= maxQueue.
   *   Q5. A permit granted to the pump is given to exactly one waiter or released.
   *
   * Nothing calls the semaphore or completes a future while holding `lock`.
   */

  /** A queued request: completed with a permit, or exceptionally (Refused, timeout, cancel). */
  static final class Waiter extends CompletableFuture<Permit> {
    final long rank;
    final long seq;
    final long enqueuedNanos;
    final boolean queued; // false: refused at the door, never in the queue

    Waiter(long rank, long seq, long enqueuedNanos, boolean queued) {
      this.rank = rank;
      this.seq = seq;
      this.enqueuedNanos = enqueuedNanos;
      this.queued = queued;
    }
  }

  /** Why a waiter was refused; carries no stack trace, shared. */
  static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Refused FULL = new Refused(Reason.QUEUE_FULL);
    static final Refused CLOSED = new Refused(Reason.CLOSED);
    static final Refused LIMIT = new Refused(Reason.LIMIT_REACHED);

    final Reason reason;

    private Refused(Reason reason) {
      super(reason.toString(), null, false, false);
      this.reason = reason;
    }
  }

  private static final Comparator<Waiter> ORDER =
      Comparator.<Waiter>comparingLong(w -> w.rank).thenComparingLong(w -> w.seq);

  private final Semaphore semaphore;
  private final int maxQueue;
  private final boolean lifo;
  private final long agingNanos; // 0: off
  private final LongSupplier ticker;

  private final ReentrantLock lock = new ReentrantLock();
  private final TreeSet<Waiter> queue = new TreeSet<>(ORDER);
  private long nextSeq;
  private volatile boolean pumping; // read without the lock as a hint by tryAcquireIfIdle
  private @Nullable CompletableFuture<Permit> pending;
  private boolean closed;

  AdmissionQueue(
      Semaphore semaphore, int maxQueue, boolean lifo, long agingNanos, LongSupplier ticker) {
    this.semaphore = semaphore;
    this.maxQueue = maxQueue;
    this.lifo = lifo;
    this.agingNanos = agingNanos;
    this.ticker = ticker;
  }

  /**
   * A permit if no one is queued and one is free now: the request skips the queue. The answer
   * is exact, not a hint: a permit taken while someone queued is given back (to the pump).
   */
  @Nullable Permit tryAcquireIfIdle() {
    if (pumping) {
      return null;
    }
    Optional<Permit> permit;
    try {
      permit = semaphore.tryAcquire(1);
    } catch (RuntimeException refused) { // closed, limit 0: the pump will meet it and report it
      return null;
    }
    if (permit.isEmpty()) {
      return null;
    }
    lock.lock();
    try {
      if (queue.isEmpty() && !closed) {
        return permit.get();
      }
    } finally {
      lock.unlock();
    }
    permit.get().release(); // someone queued meanwhile: the pump has this permit for them
    return null;
  }

  /**
   * Queues a request of {@code priority} (ignored unless aging or priorities are on: see rank).
   * The waiter completes with a permit, or exceptionally with {@link Refused} (at once if the
   * queue is full or closed, later if pushed out or closed). Completing it from outside withdraws
   * it.
   */
  Waiter enqueue(int priority) {
    Waiter waiter;
    Waiter pushedOut = null;
    boolean startPump = false;
    lock.lock();
    try {
      long now = ticker.getAsLong();
      long seq = nextSeq++;
      if (closed) {
        waiter = refused(seq, now, Refused.CLOSED);
      } else {
        waiter = new Waiter(rank(priority, seq, now), seq, now, true);
        if (queue.size() >= maxQueue) {
          Waiter worst = queue.last();
          if (ORDER.compare(waiter, worst) > 0) {
            return refused(seq, now, Refused.FULL);
          }
          queue.pollLast();
          pushedOut = worst;
        }
        queue.add(waiter);
        startPump = !pumping;
        pumping = true;
      }
    } finally {
      lock.unlock();
    }
    if (pushedOut != null) {
      pushedOut.completeExceptionally(Refused.FULL);
    }
    Waiter queued = waiter;
    var unused = waiter.whenComplete((permit, failure) -> withdraw(queued));
    if (startPump) {
      pump();
    }
    return waiter;
  }

  private static Waiter refused(long seq, long now, Refused why) {
    Waiter waiter = new Waiter(0, seq, now, false);
    waiter.completeExceptionally(why);
    return waiter;
  }

  private long rank(int priority, long seq, long now) {
    if (lifo) {
      return -seq;
    }
    if (agingNanos == 0) {
      return -(long) priority;
    }
    long boost;
    try {
      boost = Math.multiplyExact(priority, agingNanos);
    } catch (ArithmeticException overflow) {
      boost = priority > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }
    try {
      return Math.subtractExact(now, boost);
    } catch (ArithmeticException overflow) {
      return boost > 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /** The number of requests waiting now. */
  int size() {
    lock.lock();
    try {
      return queue.size();
    } finally {
      lock.unlock();
    }
  }

  /** Refuses new requests and fails every queued one with {@link Refused#CLOSED}. */
  void close() {
    List<Waiter> drained;
    CompletableFuture<Permit> acquiring;
    lock.lock();
    try {
      closed = true;
      drained = drain();
      acquiring = pending;
    } finally {
      lock.unlock();
    }
    if (acquiring != null) {
      acquiring.cancel(false);
    }
    for (Waiter w : drained) {
      w.completeExceptionally(Refused.CLOSED);
    }
  }

  // ------------------------------------------------------------------ the pump

  /** Hands permits to waiters while permits come at once; see the Overview. */
  private void pump() {
    while (true) {
      CompletableFuture<Permit> acquiring;
      try {
        acquiring = semaphore.acquireAsync(1);
      } catch (RuntimeException refused) { // e.g. a given semaphore's limit lowered to 0
        acquiring = CompletableFuture.failedFuture(refused);
      }
      if (!acquiring.isDone()) {
        boolean queueEmpty;
        lock.lock();
        try {
          pending = acquiring;
          queueEmpty = queue.isEmpty();
        } finally {
          lock.unlock();
        }
        if (queueEmpty) {
          acquiring.cancel(false); // emptied before `pending` was visible: see Q2
        }
        CompletableFuture<Permit> waiting = acquiring;
        var unused =
            acquiring.whenComplete(
                (permit, failure) -> {
                  if (granted(waiting, permit, failure)) {
                    pump();
                  }
                });
        return;
      }
      Permit permit = null;
      Throwable failure = null;
      try {
        permit = acquiring.join();
      } catch (CompletionException | CancellationException e) {
        failure = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      }
      if (!granted(acquiring, permit, failure)) {
        return;
      }
    }
  }

  /**
   * What the pump does with the outcome of its acquire. Returns whether it goes on: true if it
   * gave the permit and more wait, or if its acquire was cancelled as the queue emptied and a
   * waiter has come since.
   */
  private boolean granted(
      CompletableFuture<Permit> acquiring, @Nullable Permit permit, @Nullable Throwable failure) {
    if (permit != null) {
      return handOut(acquiring, permit);
    }
    List<Waiter> refused;
    lock.lock();
    try {
      if (pending == acquiring) {
        pending = null;
      }
      if (queue.isEmpty()) {
        pumping = false;
        return false;
      }
      if (failure instanceof CancellationException) {
        return true; // withdrawn by us as the queue emptied; a waiter has come since
      }
      refused = drain(); // the semaphore refuses us (closed, limit 0): no one could be admitted
      pumping = false;
    } finally {
      lock.unlock();
    }
    Refused why = failure instanceof SemaphoreClosedException ? Refused.CLOSED : Refused.LIMIT;
    for (Waiter w : refused) {
      w.completeExceptionally(why);
    }
    return false;
  }

  private boolean handOut(CompletableFuture<Permit> acquiring, Permit permit) {
    while (true) {
      Waiter best;
      lock.lock();
      try {
        if (pending == acquiring) {
          pending = null;
        }
        best = queue.pollFirst();
        if (best == null) {
          pumping = false;
        }
      } finally {
        lock.unlock();
      }
      if (best == null) {
        permit.release();
        return false;
      }
      if (best.complete(permit)) {
        lock.lock();
        try {
          pumping = !queue.isEmpty();
          return pumping;
        } finally {
          lock.unlock();
        }
      }
      // It completed meanwhile (timed out, cancelled): the next best gets the permit.
    }
  }

  private void withdraw(Waiter waiter) {
    CompletableFuture<Permit> acquiring = null;
    lock.lock();
    try {
      if (!queue.remove(waiter)) {
        return;
      }
      if (queue.isEmpty()) {
        acquiring = pending;
      }
    } finally {
      lock.unlock();
    }
    if (acquiring != null) {
      acquiring.cancel(false);
    }
  }

  /** Empties the queue; under the lock. */
  private List<Waiter> drain() {
    List<Waiter> drained = new ArrayList<>(queue);
    queue.clear();
    return drained;
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "AdmissionQueue[queued=" + queue.size() + "/" + maxQueue + (lifo ? ", lifo" : "")
          + (pumping ? ", pumping" : "") + (closed ? ", closed" : "") + "]";
    } finally {
      lock.unlock();
    }
  }
}
