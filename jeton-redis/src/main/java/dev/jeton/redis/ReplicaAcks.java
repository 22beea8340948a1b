package dev.jeton.redis;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Replica acknowledgements ({@link RedisSemaphoreOptions#replicaAcks()}): a grant or a renewal is
 * relied on only once enough replicas have it, as Redis's {@code WAIT} reports, so that a failover
 * to one of them does not forget it.
 */
final class ReplicaAcks {
  /*
   * Overview
   *
   * WAIT counts the replicas that have every write this connection sent before it, so it is
   * sent on the command connection after the call whose effect it confirms.
   *
   * A grant can be reported twice: by a wake-up and by a poll's reply that crossed it. Only the
   * first report waits and settles it, so that its success and its failure never both act on
   * one lease. acknowledging holds the lease ids whose WAIT is out (a concurrent set: added by
   * whichever thread brings the first report, removed by the thread that completes the WAIT,
   * after the grant is settled); a report that finds its id there is dropped. Once removed, a
   * later report finds the request granted, or known under a new id, and does nothing.
   */

  /** What answers a replica wait: Redis's {@code WAIT} in production, a test's answers in tests. */
  @FunctionalInterface
  interface Waiter {
    /** {@return the number of replicas that acknowledged, within {@code timeout}} */
    CompletableFuture<Long> waitForReplicas(int replicas, Duration timeout);
  }

  private final Waiter waiter;
  private final int required;
  private final Duration timeout;

  /** Grants (lease ids) whose replica acknowledgement is awaited. */
  private final Set<String> acknowledging = ConcurrentHashMap.newKeySet();

  ReplicaAcks(Waiter waiter, RedisSemaphoreOptions options) {
    this.waiter = waiter;
    this.required = options.replicaAcks();
    this.timeout = options.replicaTimeout();
  }

  /** {@return whether grants and renewals wait for replicas} */
  boolean enabled() {
    return required > 0;
  }

  /**
   * Settles the grant of {@code leaseId} once replicas answered: {@code settle} gets null if enough
   * have it, else why not. A report of a grant whose wait is still out is dropped.
   */
  void settleGrant(String leaseId, Consumer<@Nullable Throwable> settle) {
    if (!acknowledging.add(leaseId)) {
      return; // the first report of this grant settles it
    }
    var unused =
        confirm("grant")
            .whenComplete(
                (ok, missed) -> {
                  try {
                    settle.accept(missed);
                  } finally {
                    // Settled: a later report finds the request granted, or under a new id.
                    acknowledging.remove(leaseId);
                  }
                });
  }

  /**
   * Waits for the replicas to have what this handle wrote so far ({@code what}: a grant, a
   * renewal); fails with the wait's failure, or with how many replicas it reached if too few.
   */
  CompletableFuture<@Nullable Void> confirm(String what) {
    CompletableFuture<@Nullable Void> confirmed = new CompletableFuture<>();
    var unused =
        waiter
            .waitForReplicas(required, timeout)
            .whenComplete(
                (acks, failure) -> {
                  if (failure == null && acks != null && acks >= required) {
                    confirmed.complete(null);
                  } else {
                    confirmed.completeExceptionally(
                        failure != null
                            ? failure
                            : new IllegalStateException(
                                what + " reached " + acks + " replicas, not " + required));
                  }
                });
    return confirmed;
  }
}
