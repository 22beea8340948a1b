package dev.jeton.http;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.internal.engine.Deadlines;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Admission under one semaphore, not partitioned: best effort, or queued in an {@link
 * AdmissionQueue} in front of it. Jeton core's semaphores are called directly; any other may be
 * remote, and is asked through {@link SemaphoreCalls}, which bounds how long a request waits for
 * its answer.
 */
final class SemaphoreAdmission {
  /*
   * A request is, in this order: refused with UNAVAILABLE at once while a call to the semaphore
   * is overdue (SemaphoreCalls.notAnswering: asking it again would only leave one more request
   * waiting on a silent semaphore); given a permit at once if one is free; rejected with
   * LIMIT_REACHED in best-effort mode; or queued.
   *
   * Directly (Jeton core's semaphore): "at once" is tryAcquire on the caller's thread, and in
   * queued mode only while no one is queued (AdmissionQueue.tryAcquireIfIdle).
   *
   * Through SemaphoreCalls (a semaphore that may block): best effort, the decision is a Waiter
   * in no queue, completed on the call's answer (a ticket, LIMIT_REACHED, the failure's reason)
   * or on its timeout (UNAVAILABLE); the call's completion and the caller's cancel race to take()
   * it, so that a ticket is made only for a decision no one else can complete, and a permit that
   * loses the race goes back. Queued, every request is queued, and the queue asks the semaphore
   * for it (AdmissionQueue's R1): its maxWait then bounds the wait for a silent semaphore too.
   */

  private final Ledger ledger;
  private final Semaphore semaphore;
  private final @Nullable SemaphoreCalls calls;
  private final @Nullable AdmissionQueue queue; // null: best effort
  private final long maxWaitNanos;
  private final Deadlines timeouts;
  private volatile boolean closed;

  SemaphoreAdmission(
      Ledger ledger,
      Semaphore semaphore,
      AdmissionControl.Builder<?> b,
      Deadlines timeouts,
      @Nullable Duration aging) {
    this.ledger = ledger;
    this.semaphore = semaphore;
    this.timeouts = timeouts;
    Duration wait = b.maxWait;
    this.maxWaitNanos = wait == null ? 0 : saturatedNanos(wait);
    this.calls =
        SemaphoreCalls.mayBlock(semaphore)
            ? new SemaphoreCalls(semaphore, callTimeoutNanos(b), timeouts, ledger.failures())
            : null;
    LongSupplier ticker = b.ticker;
    this.queue =
        wait == null
            ? null
            : new AdmissionQueue(
                ledger,
                semaphore,
                calls,
                timeouts,
                b.maxQueue,
                b.lifo,
                aging == null ? 0 : saturatedNanos(aging),
                ticker);
  }

  /**
   * How long a call to a semaphore that may block may go unanswered: the semaphore timeout; queued,
   * at most half of maxWait, so that a semaphore gone silent is found out before the requests
   * waiting on it time out.
   */
  private static long callTimeoutNanos(AdmissionControl.Builder<?> b) {
    long timeout = saturatedNanos(b.semaphoreTimeout);
    Duration wait = b.maxWait;
    return wait == null ? timeout : Math.max(1, Math.min(timeout, saturatedNanos(wait) / 2));
  }

  /** Admits or rejects a request of {@code priority} (used only with priorities on). */
  CompletableFuture<Decision> admit(int priority) {
    SemaphoreCalls c = calls;
    if (c != null && c.notAnswering()) {
      Reason reason = ledger.reasonFor(c.unanswered());
      return CompletableFuture.completedFuture(ledger.reject(reason, 0, ledger.inFlight()));
    }
    AdmissionQueue q = queue;
    if (q == null) {
      return c == null
          ? CompletableFuture.completedFuture(
              Objects.requireNonNull(
                  ledger.tryAdmit(semaphore, Reason.LIMIT_REACHED, ledger::inFlight)))
          : admitThrough(c);
    }
    Permit now = c == null ? q.tryAcquireIfIdle() : null; // else the queue asks: its R1
    if (now != null) {
      return CompletableFuture.completedFuture(ledger.admitted(now));
    }
    Waiter waiter = q.enqueue(priority);
    if (waiter.queued) { // its decision is counted by the queue, when the queue makes it
      var unused =
          waiter.whenComplete(
              (decision, failure) -> ledger.dequeued(System.nanoTime() - waiter.enqueuedNanos));
    }
    if (!waiter.isDone()) {
      Future<?> timer = timeouts.schedule(() -> q.expire(waiter), maxWaitNanos);
      var alsoUnused = waiter.whenComplete((decision, cancelled) -> timer.cancel(false));
    }
    return waiter;
  }

  /** Best effort over a semaphore that may block: see the Overview. */
  private CompletableFuture<Decision> admitThrough(SemaphoreCalls c) {
    Waiter decision = new Waiter(0, 0, 0, null);
    var unused =
        c.tryAcquire()
            .whenComplete(
                (permit, failure) -> {
                  boolean ours = decision.take();
                  Permit granted = permit == null ? null : permit.orElse(null);
                  if (granted != null && (!ours || closed)) {
                    ledger.giveBack(granted); // withdrawn by its caller, or closed, meanwhile
                    granted = null;
                  }
                  if (ours) {
                    Reason refused =
                        failure != null
                            ? ledger.reasonFor(failure)
                            : closed ? Reason.CLOSED : Reason.LIMIT_REACHED;
                    decision.decide(
                        granted != null
                            ? ledger.admitted(granted)
                            : ledger.reject(refused, 0, ledger.inFlight()));
                  }
                });
    return decision;
  }

  Semaphore semaphore() {
    return semaphore;
  }

  /** The number of requests waiting now; always 0 in best-effort mode. */
  int queued() {
    AdmissionQueue q = queue;
    return q != null ? q.size() : 0;
  }

  /** Rejects the queued requests with CLOSED; no call to the semaphore is made from now on. */
  void close() {
    closed = true;
    AdmissionQueue q = queue;
    if (q != null) {
      q.close();
    }
    SemaphoreCalls c = calls;
    if (c != null) {
      c.close();
    }
  }

  static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  @Override
  public String toString() {
    return semaphore.toString();
  }
}
