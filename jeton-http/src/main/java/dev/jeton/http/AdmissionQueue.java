package dev.jeton.http;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.internal.engine.RankOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
 *
 * <p>A waiter is itself the future of the request's {@link Decision}, and whoever takes it out of
 * the queue decides it: the pump with a ticket, its timeout, a newcomer that pushes it out, close,
 * or the caller cancelling or completing it.
 */
final class AdmissionQueue {
  /*
   * Overview
   *
   * Waiters live in one TreeSet, `queue`, ordered by `order` and guarded by `lock` with
   * `pumping`, `pending`, `nextSeq` and `closed`. seq counts arrivals; the engine's RankOrder
   * orders them: newest first (LIFO), or by priority with aging, FIFO among equals (FIFO when
   * priorities are off: every waiter's is 0).
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
   * removes the best waiter at that moment and completes it with a ticket holding the permit
   * (outside the lock); if none is left, the permit goes back. If the acquire fails, the best
   * waiter at that moment, the one the permit would have gone to, is rejected with the reason
   * the failure gives (SemaphoreFailures: CLOSED, LIMIT_REACHED, UNAVAILABLE), and the pump asks
   * again for the others: a failure of a remote semaphore costs one request, not the queue, and
   * a semaphore that fails at every call (closed, out of reach) rejects the waiters one by one,
   * at once. It loops while acquires complete at once, else leaves a callback on its one pending
   * acquire and returns; it ends when it finds the queue empty.
   *
   * Whoever decides a waiter (the pump, its timeout, a newcomer pushing it out, close, its
   * caller's cancel or complete) first removes it from the queue under the lock, then completes
   * it; only the one that removed it may complete it: the caller's cancel, complete and
   * completeExceptionally (and so orTimeout and completeOnTimeout) return false once someone else
   * has, and the ways to complete a future that bypass those (obtrude*, completeAsync) are
   * refused. So no one sees a request decided while it still takes a place, a cancel that returns
   * true means that the request left the queue undecided, and the pump makes a ticket (which
   * begins an adaptive limit's sample) only for a waiter that it has taken out and that nobody
   * else can complete: a grant is never retracted. What is not atomic: between the removal and
   * the completion, the place is free but the decision not yet visible. A decision of the
   * control's is counted in the stats before its waiter is completed; the caller's never is.
   *
   * Invariants (each changes only under `lock`):
   *   Q1. `pumping` is true iff a pump is looping or waiting on `pending`: at most one. Every
   *       waiter is seen by it: it ends only after seeing the queue empty under the lock, and an
   *       enqueue that finds `pumping` false starts one; in front of a semaphore that may block,
   *       it starts a check instead, which starts the pump if the semaphore has no permit (see
   *       QueueChecks' R1, and R2 for the checks made while the pump waits).
   *   Q2. The pump holds at most one acquire. When the queue empties (a waiter times out or is
   *       cancelled, close), the pending acquire is cancelled, so that a shared semaphore is not
   *       held up; the pump publishes `pending` and then re-checks the queue, so one of the two
   *       sees the other. A cancelled acquire that finds waiters queued meanwhile acquires again.
   *   Q3. A waiter leaves the queue exactly once: polled by the pump (for a permit, or for a
   *       failed acquire), expired, pushed out by a newcomer, drained by close, or cancelled or
   *       completed by its caller. Whoever removes it completes it, and no one else can.
   *   Q4. size() <= maxQueue.
   *   Q5. A permit granted to the pump is in exactly one ticket handed to a waiter, or released.
   *       A ticket is counted in flight before its waiter is completed (so a caller that closes it
   *       at once cannot take the count below zero).
   *
   * Nothing calls the semaphore or completes a future while holding `lock`.
   */

  private final Ledger ledger;
  private final Semaphore semaphore;
  private final @Nullable SemaphoreCalls calls; // a semaphore that may block
  private final @Nullable QueueChecks checks; // with `calls`
  private final int maxQueue;
  private final boolean lifo;
  private final RankOrder order;
  private final LongSupplier ticker;

  private final ReentrantLock lock = new ReentrantLock();
  private final TreeSet<Waiter> queue;
  private long nextSeq;
  private volatile boolean pumping; // read without the lock as a hint by tryAcquireIfIdle
  private @Nullable CompletableFuture<Permit> pending;
  private boolean closed;

  AdmissionQueue(
      Ledger ledger,
      Semaphore semaphore,
      @Nullable SemaphoreCalls calls,
      Timeouts timeouts,
      int maxQueue,
      boolean lifo,
      long agingNanos,
      LongSupplier ticker) {
    this.ledger = ledger;
    this.semaphore = semaphore;
    this.calls = calls;
    this.checks = calls == null ? null : new QueueChecks(this, calls, ledger, timeouts);
    this.maxQueue = maxQueue;
    this.lifo = lifo;
    this.order = lifo ? RankOrder.newestFirst() : RankOrder.byPriority(agingNanos);
    this.queue = new TreeSet<>(order);
    this.ticker = ticker;
  }

  /**
   * A permit if no one is queued and one is free now: the request skips the queue. The answer is
   * exact, not a hint: a permit taken while someone queued is given back (to the pump).
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
    ledger.giveBack(permit.get()); // someone queued meanwhile: the pump has it for them
    return null;
  }

  /**
   * Queues a request of {@code priority} (used only with priorities on). The waiter is decided at
   * once if the queue is full or closed ({@code queued} is then false), else later. Cancelling it
   * withdraws it.
   */
  Waiter enqueue(int priority) {
    Waiter waiter;
    Waiter pushedOut = null;
    boolean startPump = false;
    boolean check = false;
    Reason refused = null;
    int size;
    lock.lock();
    try {
      long now = ticker.getAsLong();
      long seq = nextSeq++;
      waiter = new Waiter(priority, seq, now, closed ? null : this);
      if (closed) {
        refused = Reason.CLOSED;
      } else if (queue.size() >= maxQueue && order.compare(waiter, queue.last()) > 0) {
        refused = Reason.QUEUE_FULL;
        waiter = new Waiter(priority, seq, now, null);
      } else {
        if (queue.size() >= maxQueue) {
          pushedOut = queue.pollLast();
        }
        queue.add(waiter);
        if (calls == null) {
          startPump = !pumping;
          pumping = true;
        } else {
          check = !pumping; // QueueChecks' R1
        }
      }
      size = queue.size();
    } finally {
      lock.unlock();
    }
    if (refused != null) {
      decide(waiter, ledger.rejection(refused, size));
      return waiter;
    }
    if (pushedOut != null) {
      decide(pushedOut, ledger.rejection(Reason.QUEUE_FULL, size));
    }
    if (startPump) {
      pump();
    }
    if (check) {
      Objects.requireNonNull(checks).check();
    }
    return waiter;
  }

  /**
   * The waiter's maxWait has passed: if it still waits, it leaves and is rejected; in front of a
   * semaphore that may block, once it is known whether the semaphore answers (QueueChecks' R3).
   */
  void expire(Waiter waiter) {
    int size;
    CompletableFuture<Permit> acquiring;
    lock.lock();
    try {
      if (!queue.remove(waiter)) {
        return;
      }
      size = queue.size();
      acquiring = pendingIfEmpty();
    } finally {
      lock.unlock();
    }
    cancel(acquiring);
    QueueChecks k = checks;
    if (k == null) {
      decide(waiter, ledger.rejection(Reason.QUEUE_TIMEOUT, size));
      return;
    }
    var unused = // the semaphore's fault, if it is silent or failing, not the queue's: R3
        k.troubleForTimeout()
            .thenAccept(
                trouble -> {
                  Reason reason = trouble.map(ledger::reasonFor).orElse(Reason.QUEUE_TIMEOUT);
                  decide(waiter, ledger.rejection(reason, size));
                });
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

  /** Refuses new requests and rejects every queued one with {@link Reason#CLOSED}. */
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
    cancel(acquiring);
    for (Waiter w : drained) {
      decide(w, ledger.rejection(Reason.CLOSED, 0));
    }
  }

  // ------------------------------------------------------------------ the pump

  /** Hands permits to waiters while permits come at once; see the Overview. */
  private void pump() {
    while (true) {
      CompletableFuture<Permit> acquiring;
      try {
        acquiring = semaphore.acquireAsync(1);
      } catch (RuntimeException failed) { // closed, its limit lowered to 0, out of reach
        acquiring = CompletableFuture.failedFuture(failed);
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
        } else if (checks != null) {
          checks.watch();
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
        failure = e;
      }
      if (!granted(acquiring, permit, failure)) {
        return;
      }
    }
  }

  /**
   * What the pump does with the outcome of its acquire. Returns whether it goes on: true if it
   * handed the permit out, or rejected a waiter for the acquire's failure, and more wait; or if its
   * acquire was cancelled as the queue emptied and a waiter has come since.
   */
  private boolean granted(
      CompletableFuture<Permit> acquiring, @Nullable Permit permit, @Nullable Throwable failure) {
    if (permit != null) {
      return handOut(acquiring, permit);
    }
    Throwable cause =
        failure != null
            ? SemaphoreFailures.unwrap(failure)
            : new NullPointerException("the semaphore granted a null permit");
    Waiter refused;
    int size;
    lock.lock();
    try {
      if (pending == acquiring) {
        pending = null;
      }
      if (queue.isEmpty()) {
        pumping = false;
        return false;
      }
      if (cause instanceof CancellationException) {
        return true; // withdrawn by us as the queue emptied; a waiter has come since
      }
      refused = queue.pollFirst(); // the one the permit would have gone to
      size = queue.size();
    } finally {
      lock.unlock();
    }
    decide(refused, ledger.rejection(ledger.reasonFor(cause), size));
    return goOn();
  }

  private boolean handOut(CompletableFuture<Permit> acquiring, Permit permit) {
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
      ledger.giveBack(permit);
      return false;
    }
    decide(best, ledger.ticket(permit)); // ours alone to complete: see the Overview
    return goOn();
  }

  /**
   * After the pump decided a waiter: whether it goes on, as waiters came meanwhile. `pumping`
   * stayed true while the waiter was completed, so that its callbacks queue for this pump rather
   * than start one of their own, in constant stack.
   */
  private boolean goOn() {
    lock.lock();
    try {
      pumping = !queue.isEmpty();
      return pumping;
    } finally {
      lock.unlock();
    }
  }

  // ------------------------------------------------------------------ for QueueChecks

  /** The best waiter taken out of the queue to be decided (or none), and what is left. */
  record Taken(@Nullable Waiter best, int left, boolean pumping) {}

  /** Takes the best waiter out of the queue, to decide it: see QueueChecks. */
  Taken takeBest() {
    lock.lock();
    try {
      Waiter best = queue.pollFirst();
      return new Taken(best, queue.size(), pumping);
    } finally {
      lock.unlock();
    }
  }

  /** Starts the pump if someone waits and none runs. */
  void pumpIfWaiting() {
    boolean start;
    lock.lock();
    try {
      start = !pumping && !queue.isEmpty();
      pumping |= start;
    } finally {
      lock.unlock();
    }
    if (start) {
      pump();
    }
  }

  /** Whether the pump waits on the semaphore for someone queued. */
  boolean pumpWaits() {
    lock.lock();
    try {
      return pending != null && !queue.isEmpty();
    } finally {
      lock.unlock();
    }
  }

  /** Completes a waiter taken out of the queue with the control's decision, counted first. */
  void decide(Waiter waiter, Decision decision) {
    ledger.count(decision);
    waiter.decide(decision);
  }

  /** Takes the waiter out if it still waits (its caller cancels it); whether it did. */
  boolean remove(Waiter waiter) {
    CompletableFuture<Permit> acquiring;
    lock.lock();
    try {
      if (!queue.remove(waiter)) {
        return false;
      }
      acquiring = pendingIfEmpty();
    } finally {
      lock.unlock();
    }
    cancel(acquiring);
    return true;
  }

  /** The pump's pending acquire if the queue is empty: it is no longer needed (Q2). Locked. */
  private @Nullable CompletableFuture<Permit> pendingIfEmpty() {
    return queue.isEmpty() ? pending : null;
  }

  private static void cancel(@Nullable CompletableFuture<Permit> acquiring) {
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
      return "AdmissionQueue[queued="
          + queue.size()
          + "/"
          + maxQueue
          + (lifo ? ", lifo" : "")
          + (pumping ? ", pumping" : "")
          + (closed ? ", closed" : "")
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
