package dev.jeton.http;

import dev.jeton.KeyedSemaphore;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Partitioned mode: a {@link KeyedSemaphore} (a limit per key, and the optional global limit)
 * and, when queued, a count of the requests waiting per key.
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
   * maxQueue bounds each key's waiters, so that one busy key cannot fill the queue for all. The
   * count is exact: `waiting` maps a key to its waiters, changed only by ConcurrentHashMap's
   * atomic compute, and a key with none has no entry (memory grows with the keys waiting, not
   * with every key seen). Invariant: waiting.get(k) = the requests of k between reserve and the
   * completion of their acquire; `queued` is the sum over keys.
   */

  private final KeyedSemaphore<Object> keyed;
  private final int maxQueue; // 0: best effort
  private final ConcurrentHashMap<Object, Integer> waiting = new ConcurrentHashMap<>();
  private final AtomicInteger queued = new AtomicInteger();

  Partitions(int limitPerKey, int globalLimit, int maxQueue) {
    var builder = KeyedSemaphore.builder().limitPerKey(limitPerKey);
    if (globalLimit > 0) {
      builder.globalLimit(globalLimit);
    }
    this.keyed = builder.build();
    this.maxQueue = maxQueue;
  }

  Semaphore forKey(Object key) {
    return keyed.forKey(key);
  }

  /**
   * Waits for a permit of {@code key}, at most {@code maxWait}: the future completes with it, or
   * fails with {@link AdmissionQueue.Refused#FULL} (at once, when the key already has maxQueue
   * waiting), a {@code TimeoutException}, or the semaphore's refusal. Cancelling it withdraws.
   */
  CompletableFuture<Permit> acquire(Object key, Semaphore semaphore, Duration maxWait) {
    if (!reserve(key)) {
      return CompletableFuture.failedFuture(AdmissionQueue.Refused.FULL);
    }
    CompletableFuture<Permit> acquiring;
    try {
      acquiring = semaphore.acquireAsync(1, maxWait);
    } catch (RuntimeException refused) { // closed, limit 0
      acquiring = CompletableFuture.failedFuture(refused);
    }
    var unused = acquiring.whenComplete((permit, failure) -> unreserve(key));
    return acquiring;
  }

  private boolean reserve(Object key) {
    boolean[] reserved = {false};
    waiting.compute(
        key,
        (k, n) -> {
          int count = n == null ? 0 : n;
          if (count >= maxQueue) {
            return n;
          }
          reserved[0] = true;
          return count + 1;
        });
    if (reserved[0]) {
      queued.incrementAndGet();
    }
    return reserved[0];
  }

  private void unreserve(Object key) {
    queued.decrementAndGet();
    waiting.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
  }

  /** The requests waiting now, over all keys. */
  int queued() {
    return queued.get();
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
