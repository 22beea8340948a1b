package dev.jeton.http;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.KeyedSemaphore;
import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.HashMap;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Partitioned mode: a {@link KeyedSemaphore} (a limit per key, and the optional global limit) and,
 * when queued, a count of the requests waiting per key and in all.
 */
final class Partitions {
  /*
   * Queued requests wait in their key's semaphore itself (acquireAsync with maxWait), not in an
   * AdmissionQueue: the keyed semaphore is always in-process (KeyedSemaphore has no remote
   * implementation), so a waiter costs nothing remote, and it is FIFO per key, which is the only
   * order this mode offers (LIFO and priorities are refused by the builder: a pump per key would
   * be needed). The semaphore does the timeouts, on Jeton's timer, and withdraws a cancelled or
   * timed-out request at once.
   *
   * maxQueue bounds each key's waiters, so that one busy key cannot fill the queue for all, and
   * maxQueuedTotal bounds their sum, since the keys come from the client (a header, an address):
   * without it, as many keys, as many queues. Both counts are exact, changed together under
   * `lock` (only by requests that have to wait, never on the path of one admitted at once):
   * `waiting` maps a key to its waiters, and a key with none has no entry, so memory grows with
   * the keys waiting now, not with every key seen; the keyed semaphore likewise drops a key's
   * entry when it is idle.
   *
   * Invariants (under `lock`):
   *   P1. waiting.get(k) = the requests of k between a successful reserve and the completion of
   *       their acquire (granted, timed out, cancelled, refused), which unreserves them; a key
   *       with none has no entry.
   *   P2. queued = the sum of waiting's values <= maxQueuedTotal, and each value <= maxQueue.
   */

  /** The failure of a request refused because its key's queue is full; shared, no stack. */
  static final RuntimeException FULL = new QueueFull();

  private static final class QueueFull extends RuntimeException {
    private static final long serialVersionUID = 1L;

    QueueFull() {
      super("the queue is full (the key's, or all keys')", null, false, false);
    }
  }

  private final Ledger ledger;
  private final KeyedSemaphore<Object> keyed;
  private final int maxQueue; // per key; 0: best effort
  private final int maxQueuedTotal; // across keys
  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private final HashMap<Object, Integer> waiting = new HashMap<>();

  @GuardedBy("lock")
  private int queued;

  /** The global limit across all keys, if any. */
  OptionalInt globalLimit() {
    return keyed.globalLimit();
  }

  Partitions(Ledger ledger, int limitPerKey, int globalLimit, int maxQueue, int maxQueuedTotal) {
    this.ledger = ledger;
    // tickets are watched for leaks, so their keys' permits are not: one leak, one report
    var builder =
        KeyedSemaphore.builder().limitPerKey(limitPerKey).leakDetection(LeakDetection.OFF);
    if (globalLimit > 0) {
      builder.globalLimit(globalLimit);
    }
    this.keyed = builder.build();
    this.maxQueue = maxQueue;
    this.maxQueuedTotal = maxQueuedTotal;
  }

  /**
   * Admits or rejects a request of {@code key}: at once if its semaphore has a permit free, or in
   * best-effort mode ({@code maxWait} null); else it waits, see {@link #await}.
   */
  CompletableFuture<Decision> admit(Object key, @Nullable Duration maxWait) {
    Semaphore s = keyed.forKey(key);
    IntSupplier busy = () -> s.limit() - s.available();
    Decision now = ledger.tryAdmit(s, maxWait == null ? Reason.LIMIT_REACHED : null, busy);
    if (now != null || maxWait == null) {
      return CompletableFuture.completedFuture(Objects.requireNonNull(now));
    }
    return await(key, s, maxWait, busy);
  }

  /**
   * Waits for a permit of {@code key}, at most {@code maxWait}, and decides: a ticket, or a
   * rejection (QUEUE_FULL at once if the key has maxQueue waiting or all keys maxQueuedTotal,
   * QUEUE_TIMEOUT, CLOSED), with {@code busy} the permits of the key held, for Retry-After.
   * Cancelling the future withdraws the request.
   */
  private CompletableFuture<Decision> await(
      Object key, Semaphore semaphore, Duration maxWait, IntSupplier busy) {
    long since = System.nanoTime();
    Waiting waiting = acquire(key, semaphore, maxWait);
    CompletableFuture<Permit> request = waiting.request();
    if (request.isCompletedExceptionally()) { // refused at the door
      Rejection r =
          ledger.rejection(reasonOf(failureOf(request)), semaphore.queueLength(), busy.getAsInt());
      ledger.count(r);
      return CompletableFuture.completedFuture(r);
    }
    return decide(request, waiting.settled(), since, semaphore::queueLength, busy);
  }

  /**
   * Maps the outcome of a wait to a decision, once {@code settled} (the request has left its
   * queue); cancelling the decision cancels {@code waiting}; a ticket whose caller has gone is
   * abandoned.
   */
  private CompletableFuture<Decision> decide(
      CompletableFuture<Permit> waiting,
      CompletableFuture<Permit> settled,
      long since,
      IntSupplier ahead,
      IntSupplier busy) {
    CompletableFuture<Decision> result = new CompletableFuture<>();
    var unused =
        settled.whenComplete(
            (permit, failure) -> {
              ledger.dequeued(System.nanoTime() - since);
              if (failure != null
                  && SemaphoreFailures.unwrap(failure) instanceof CancellationException) {
                return; // withdrawn by the caller: no decision to make
              }
              Decision d =
                  permit != null
                      ? ledger.ticket(permit)
                      : ledger.rejection(
                          reasonOf(Objects.requireNonNull(failure)),
                          ahead.getAsInt(),
                          busy.getAsInt());
              if (result.complete(d)) {
                ledger.count(d);
              } else if (d instanceof Ticket t) {
                t.abandon(); // its caller has gone: the permit goes back
              }
            });
    var alsoUnused =
        result.whenComplete(
            (d, failure) -> {
              if (failure != null) {
                waiting.cancel(false);
              }
            });
    return result;
  }

  private static Throwable failureOf(CompletableFuture<?> failed) {
    try {
      failed.join();
      throw new IllegalStateException("not failed: " + failed);
    } catch (CompletionException e) {
      return e;
    }
  }

  /** Why a wait for a key's permit failed: its queue was full, it timed out, or as for any. */
  private Reason reasonOf(Throwable failure) {
    Throwable f = SemaphoreFailures.unwrap(failure);
    if (f == Partitions.FULL) {
      return Reason.QUEUE_FULL;
    }
    if (f instanceof TimeoutException) {
      return Reason.QUEUE_TIMEOUT;
    }
    return ledger.reasonFor(f); // closed, its limit lowered below 1
  }

  /**
   * Waits for a permit of {@code key}, at most {@code maxWait}: the request completes with it, or
   * fails with {@link #FULL} (at once, when the key already has maxQueue waiting or all keys
   * maxQueuedTotal), a {@code TimeoutException}, or the semaphore's refusal. Cancelling it
   * withdraws.
   */
  private Waiting acquire(Object key, Semaphore semaphore, Duration maxWait) {
    if (!reserve(key)) {
      CompletableFuture<Permit> full = CompletableFuture.failedFuture(FULL);
      return new Waiting(full, full);
    }
    CompletableFuture<Permit> acquiring;
    try {
      acquiring = semaphore.acquireAsync(1, maxWait);
    } catch (RuntimeException refused) { // closed, limit 0
      acquiring = CompletableFuture.failedFuture(refused);
    }
    // Its place is given back before anyone learns of the outcome: see decide.
    return new Waiting(acquiring, acquiring.whenComplete((permit, failure) -> unreserve(key)));
  }

  /**
   * A request waiting for its key's permit: cancel {@code request} to withdraw it; {@code settled}
   * completes as it does, once its place in the key's queue is given back.
   */
  record Waiting(CompletableFuture<Permit> request, CompletableFuture<Permit> settled) {}

  /** Takes a place in the queue of {@code key}, if it and the queue of all keys have one. */
  private boolean reserve(Object key) {
    lock.lock();
    try {
      int ofKey = waiting.getOrDefault(key, 0);
      if (ofKey >= maxQueue || queued >= maxQueuedTotal) {
        return false;
      }
      waiting.put(key, ofKey + 1);
      queued++;
      return true;
    } finally {
      lock.unlock();
    }
  }

  private void unreserve(Object key) {
    lock.lock();
    try {
      int ofKey = waiting.getOrDefault(key, 0);
      if (ofKey <= 1) {
        waiting.remove(key);
      } else {
        waiting.put(key, ofKey - 1);
      }
      queued--;
    } finally {
      lock.unlock();
    }
  }

  /** The requests waiting now, over all keys. */
  int queued() {
    lock.lock();
    try {
      return queued;
    } finally {
      lock.unlock();
    }
  }

  /** The keys with a request waiting now. */
  int keysWaiting() {
    lock.lock();
    try {
      return waiting.size();
    } finally {
      lock.unlock();
    }
  }

  /** The keys the keyed semaphore holds an entry for now: some permit held or request queued. */
  int keysHeld() {
    return keyed.keyCount();
  }

  /** Fails every waiting request and refuses new ones; permits held stay valid. */
  void close() {
    keyed.close();
  }

  @Override
  public String toString() {
    return keyed.toString();
  }
}
