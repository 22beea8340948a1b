package dev.jeton.http;

import dev.jeton.Permit;
import dev.jeton.internal.engine.Deadlines;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * What an {@link AdmissionQueue} does in front of a semaphore that may block (through {@link
 * SemaphoreCalls}): it asks the semaphore for a permit for a request that finds no pump, rather
 * than start one, and while its pump waits it asks every period, to learn whether the semaphore
 * still answers.
 */
final class QueueChecks {
  /*
   * A check is one tryAcquire through SemaphoreCalls, bounded by its timeout. Its outcome:
   *   - a permit: the best waiter gets it, as from the pump; if none waits, it goes back;
   *   - empty (the semaphore is full) or no answer in time: the pump is started if someone waits,
   *     and waits on the semaphore for the next permit, as it would without checks;
   *   - a failure: the best waiter, the one its permit would have gone to, is rejected for the
   *     reason the failure gives, and while the pump waits the next check is made at once, so a
   *     semaphore that fails at every call rejects the waiters one by one, at once.
   *
   * R1. Every waiter is seen: by the pump, or by a check. A request that finds no pump running
   *     starts a check of its own (AdmissionQueue.enqueue), so that requests arriving together
   *     are asked for in parallel, as they were with a tryAcquire each, and not one permit at a
   *     time by the pump; while no pump runs, the checks in flight are at least the waiters:
   *     each check decides one waiter (a permit, a failure) or starts the pump (empty, silent).
   *     The pump ends only when the queue is empty.
   * R2. While the pump waits on the semaphore and someone is queued, a check is made every
   *     period (the call timeout): a remote semaphore's acquireAsync may never fail (a client
   *     that retries until its server is back), so without it a dead server would leave every
   *     request to time out as QUEUE_TIMEOUT. At most one is scheduled (`scheduled`), and none
   *     is made while a call is overdue: that one is evidence enough, and another would only add
   *     to the silent server's backlog. A waiter that times out while the semaphore fails or does
   *     not answer is rejected UNAVAILABLE (AdmissionQueue.expire, SemaphoreCalls.trouble), not
   *     QUEUE_TIMEOUT.
   * R3. Silent means unanswered for the call timeout. A waiter that times out while nothing is
   *     known (no call failed or is overdue, and none returned within the timeout: the server
   *     may have frozen since the last check) is decided by the call in flight, or by a check
   *     made for it: an answer means QUEUE_TIMEOUT, no answer within the timeout UNAVAILABLE.
   *     Without it, a waiter queued before the server froze timed out before any check went
   *     overdue, and was told QUEUE_TIMEOUT (429). So such a waiter is decided up to one call
   *     timeout (at most half its maxWait) after its maxWait, and only then.
   */

  private final AdmissionQueue queue;
  private final SemaphoreCalls calls;
  private final Ledger ledger;
  private final Deadlines timeouts;
  private final AtomicBoolean scheduled = new AtomicBoolean();

  QueueChecks(AdmissionQueue queue, SemaphoreCalls calls, Ledger ledger, Deadlines timeouts) {
    this.queue = queue;
    this.calls = calls;
    this.ledger = ledger;
    this.timeouts = timeouts;
  }

  /** Asks the semaphore for a permit for the best waiter, without queuing in it. */
  void check() {
    var unused = checking();
  }

  private CompletableFuture<Optional<Permit>> checking() {
    CompletableFuture<Optional<Permit>> call = calls.tryAcquire();
    var unused = call.whenComplete(this::checked);
    return call;
  }

  /**
   * Why the semaphore cannot be relied on, for a waiter that timed out (R3): the failure, or {@link
   * SemaphoreCalls#unanswered()}; empty if it answers.
   */
  CompletableFuture<Optional<Throwable>> troubleForTimeout() {
    Throwable known = calls.trouble();
    if (known != null || calls.returnedLately()) {
      return CompletableFuture.completedFuture(Optional.ofNullable(known));
    }
    CompletableFuture<Optional<Permit>> call = calls.inFlight();
    return (call != null ? call : checking())
        .handle(
            (permit, failure) ->
                Optional.ofNullable(failure == null ? null : SemaphoreFailures.unwrap(failure)));
  }

  private void checked(@Nullable Optional<Permit> permit, @Nullable Throwable failure) {
    if (permit != null && permit.isPresent()) {
      AdmissionQueue.Taken taken = queue.takeBest();
      Waiter best = taken.best();
      if (best == null) {
        ledger.giveBack(permit.get());
      } else {
        queue.decide(best, ledger.ticket(permit.get()));
      }
    } else if (failure == null || failure == calls.unanswered()) {
      queue.pumpIfWaiting(); // full, or silent: the pump waits on it for the next permit
    } else {
      AdmissionQueue.Taken taken = queue.takeBest();
      Waiter refused = taken.best();
      if (refused != null) {
        queue.decide(refused, ledger.rejection(ledger.reasonFor(failure), taken.left()));
      }
      if (taken.pumping() && taken.left() > 0) {
        check(); // R2: the next at once
        return;
      }
    }
    watch();
  }

  /** While the pump waits on the semaphore and someone is queued: a check a period from now. */
  void watch() {
    if (queue.pumpWaits() && scheduled.compareAndSet(false, true)) {
      var unused = timeouts.schedule(this::periodic, calls.timeoutNanos());
    }
  }

  private void periodic() {
    scheduled.set(false);
    if (!queue.pumpWaits()) {
      return; // nobody waits, or the pump is busy: it sees the semaphore's answers itself
    }
    if (calls.notAnswering()) {
      watch(); // the overdue call is evidence enough: none more until it returns
    } else {
      check(); // its outcome schedules the next
    }
  }
}
