package dev.jeton.http;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.PermitPump;
import dev.jeton.internal.engine.RankOrder;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
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
final class AdmissionQueue extends PermitPump<Waiter, Permit> {
  /*
   * Overview
   *
   * Waiters live in the engine's PermitPump: one TreeSet, `queue`, ordered by `order` and guarded
   * by `lock` with the pump's state, `nextSeq` and `closed` (each @GuardedBy, so the build checks
   * it). seq counts arrivals; the engine's RankOrder orders them: newest first (LIFO), or by
   * priority with aging, FIFO among equals (FIFO when priorities are off: every waiter's is 0).
   *
   * A full queue: the newcomer and the worst waiter (the last in order) compete, and the worse
   * of the two is refused with QUEUE_FULL. In FIFO order that is always the newcomer (the old
   * ones keep their place). In LIFO order it is always the oldest, pushed out: it is the one
   * whose client has waited longest, so is likeliest to have given up or timed out already,
   * while the newcomer's client is surely still there, and serving fresh requests is the point
   * of LIFO under overload; keeping the old ones would fill the queue with stale requests that
   * then time out. With priorities, the lower-ranked one goes.
   *
   * The pump is the engine's (PermitPump, as under PriorityScheduler): it asks the semaphore for
   * one permit; when granted it removes the best waiter at that moment and completes it with a
   * ticket holding the permit (outside the lock); if none is left, the permit goes back. If the
   * acquire fails, the best waiter at that moment, the one the permit would have gone to, is
   * rejected with the reason the failure gives (SemaphoreFailures: CLOSED, LIMIT_REACHED,
   * UNAVAILABLE), and the pump asks again for the others: a failure of a remote semaphore costs
   * one request, not the queue, and a semaphore that fails at every call (closed, out of reach)
   * rejects the waiters one by one, at once.
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
   *   Q1. The pump's P1 (at most one; every waiter seen by it), except that in front of a
   *       semaphore that may block an enqueue that finds no pump starts a check instead, which
   *       starts the pump if the semaphore has no permit (see QueueChecks' R1, and R2 for the
   *       checks made while the pump waits).
   *   Q2. The pump's P2: its one acquire is cancelled when the queue empties (a waiter times out
   *       or is cancelled, close).
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
  private final LongSupplier ticker;

  @GuardedBy("lock")
  private long nextSeq;

  @GuardedBy("lock")
  private boolean closed;

  AdmissionQueue(
      Ledger ledger,
      Semaphore semaphore,
      @Nullable SemaphoreCalls calls,
      Deadlines timeouts,
      int maxQueue,
      boolean lifo,
      long agingNanos,
      LongSupplier ticker) {
    super(lifo ? RankOrder.newestFirst() : RankOrder.byPriority(agingNanos));
    this.ledger = ledger;
    this.semaphore = semaphore;
    this.calls = calls;
    this.checks = calls == null ? null : new QueueChecks(this, calls, ledger, timeouts);
    this.maxQueue = maxQueue;
    this.lifo = lifo;
    this.ticker = ticker;
  }

  /**
   * A permit if no one is queued and one is free now: the request skips the queue. The answer is
   * exact, not a hint: a permit taken while someone queued is given back (to the pump).
   */
  @Nullable Permit tryAcquireIfIdle() {
    // The pump calls it with its lock held (tryAcquireIfIdle's contract): the GuardedBy check
    // cannot see that in a lambda.
    @SuppressWarnings("GuardedBy")
    BooleanSupplier open = () -> !closed;
    return tryAcquireIfIdle(open);
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
          startPump = startPumpLocked();
        } else {
          check = !isPumping(); // QueueChecks' R1
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
    int size = withdraw(waiter);
    if (size < 0) {
      return;
    }
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
      drained = drainLocked();
      acquiring = pendingLocked();
    } finally {
      lock.unlock();
    }
    cancel(acquiring);
    for (Waiter w : drained) {
      decide(w, ledger.rejection(Reason.CLOSED, 0));
    }
  }

  // ------------------------------------------------------------------ the pump's hooks

  @Override
  protected CompletableFuture<Permit> acquire() {
    return semaphore.acquireAsync(1);
  }

  @Override
  protected Optional<Permit> tryAcquire() {
    return semaphore.tryAcquire(1);
  }

  @Override
  protected void release(Permit permit) {
    ledger.giveBack(permit);
  }

  @Override
  protected void grant(Waiter best, Permit permit) {
    decide(best, ledger.ticket(permit)); // ours alone to complete: see the Overview
  }

  @Override
  @GuardedBy("lock")
  protected List<Waiter> refusedLocked(Throwable failure) {
    return List.of(Objects.requireNonNull(queue.pollFirst())); // the one the permit would go to
  }

  @Override
  protected void refuse(List<Waiter> refused, Throwable failure, int left) {
    for (Waiter w : refused) {
      decide(w, ledger.rejection(ledger.reasonFor(failure), left));
    }
  }

  @Override
  protected Throwable unwrap(Throwable failure) {
    return SemaphoreFailures.unwrap(failure);
  }

  @Override
  protected void waiting() {
    if (checks != null) {
      checks.watch();
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
      return new Taken(best, queue.size(), isPumping());
    } finally {
      lock.unlock();
    }
  }

  /** Starts the pump if someone waits and none runs. */
  void pumpIfWaiting() {
    boolean start;
    lock.lock();
    try {
      start = !queue.isEmpty() && startPumpLocked();
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
      return pendingLocked() != null && !queue.isEmpty();
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
    return withdraw(waiter) >= 0;
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
          + (isPumping() ? ", pumping" : "")
          + (closed ? ", closed" : "")
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
