package dev.jeton.redis;

import dev.jeton.internal.LeakTracker;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The leases one handle holds: made from grants, renewed together in the background, released or
 * given back. Each {@link RedisLease} talks to its handle through this.
 */
final class Leases {
  /**
   * Bounds the work of one call: Redis serves no one else while it runs, so thousands of leases of
   * one handle must not stall every other client for that long.
   */
  private static final int RENEWALS_PER_CALL = 200;

  /*
   * Overview
   *
   * A lease is in held from just before its caller can see it (so that a release, which removes
   * it, always finds it) until it is released, given back or lost; held is a concurrent map, by
   * lease id. A grant reported twice (a wake-up and a poll's reply) is registered once: the
   * second registration fails and changes nothing.
   *
   * Every renewal interval, one call renews every lease in held. Each lease's local deadline
   * counts the lease time from when that call was sent, so it is never later than the expiry in
   * Redis (unless clocks run at different rates); a lease Redis no longer has is lost at once,
   * and one whose renewals keep failing is lost by its own watch at its deadline, with the last
   * failure (lastRenewFailure, volatile: written by each renewal's answer) as the reason.
   */

  private final String name;
  private final RedisSemaphoreOptions options;
  private final Calls calls;
  private final ReplicaAcks replicaAcks;
  private final Executor completionExecutor;
  private final @Nullable LeakTracker leakTracker;
  private final Runnable forgotten;
  private final Map<String, RedisLease> held = new ConcurrentHashMap<>();
  private volatile @Nullable Throwable lastRenewFailure;

  /**
   * {@code leakTracker} watches the leases handed out (null: none); {@code forgotten} runs each
   * time a lease leaves (the handle may then be done).
   */
  Leases(
      String name,
      RedisSemaphoreOptions options,
      Calls calls,
      ReplicaAcks replicaAcks,
      Executor completionExecutor,
      @Nullable LeakTracker leakTracker,
      Runnable forgotten) {
    this.name = name;
    this.options = options;
    this.calls = calls;
    this.replicaAcks = replicaAcks;
    this.completionExecutor = completionExecutor;
    this.leakTracker = leakTracker;
    this.forgotten = forgotten;
  }

  /**
   * A lease from a grant's {@code item}: {@code serverMillis} is the server's time then, {@code
   * sentNanos} a local time before Redis granted it (the local deadline counts from there). One
   * that expires sooner than a lease time after {@code serverMillis} was granted from the queue,
   * until its waiter would have been dropped (semaphore.lua, grantHead): it renews itself before
   * then, as the next renewal round may come too late.
   */
  RedisLease newLease(
      String id, int permits, List<Object> item, long serverMillis, long sentNanos) {
    long expiry = Reply.expiry(item);
    List<FencingToken> tokens = Reply.tokens(item);
    long deadline = sentNanos + TimeUnit.MILLISECONDS.toNanos(expiry - serverMillis);
    boolean shortened = expiry - serverMillis < options.leaseTime().toMillis();
    return new RedisLease(this, id, permits, tokens, expiry, deadline, shortened);
  }

  /**
   * Whether the lease a request is being made for, on this (the acquiring) thread, will be watched
   * for leaks, with the stack taken now if so; null if not. See {@link RedisLease#handOut}.
   */
  LeakTracker.@Nullable Acquisition acquiring() {
    LeakTracker tracker = leakTracker;
    return tracker == null ? null : tracker.acquiring();
  }

  /** The tracker of this handle's leases: there is one if {@link #acquiring()} returned any. */
  @Nullable LeakTracker leakTracker() {
    return leakTracker;
  }

  /** Holds {@code lease} from now on; false if a lease of that id is held already. */
  boolean register(RedisLease lease) {
    return held.putIfAbsent(lease.id(), lease) == null;
  }

  /**
   * A lease was released, given back or lost, or its request was withdrawn between its registration
   * and its grant: it is no longer held here. Each time, the handle is told: a closed handle shuts
   * down when the last lease leaves, whichever way it leaves.
   */
  void forget(RedisLease lease) {
    held.remove(lease.id(), lease);
    forgotten.run();
  }

  boolean isEmpty() {
    return held.isEmpty();
  }

  Collection<RedisLease> all() {
    return List.copyOf(held.values());
  }

  /** Releases {@code leaseId} in Redis: true if it was held there, false if it had expired. */
  CompletableFuture<Boolean> release(String leaseId) {
    return calls
        .call("release", leaseId)
        .thenApply(reply -> "released".equals(Reply.status(reply.item(0))));
  }

  /** Cancels the request {@code leaseId}: gives its grant back, recorded as cancelled. */
  void withdraw(String leaseId) {
    calls.withdraw(List.of(leaseId));
  }

  /** Renews {@code lease} now, ahead of the next round (see {@link #newLease}). */
  void renewNow(RedisLease lease) {
    renew(List.of(lease));
  }

  /** Renews every lease held, in calls of at most {@value #RENEWALS_PER_CALL} leases. */
  void renewAll() {
    List<RedisLease> leases = new ArrayList<>(held.values());
    for (int from = 0; from < leases.size(); from += RENEWALS_PER_CALL) {
      renew(leases.subList(from, Math.min(from + RENEWALS_PER_CALL, leases.size())));
    }
  }

  private void renew(List<RedisLease> leases) {
    String[] args = new String[1 + leases.size()];
    args[0] = Long.toString(options.leaseTime().toMillis());
    for (int i = 0; i < leases.size(); i++) {
      args[i + 1] = leases.get(i).id();
    }
    long sentNanos = System.nanoTime();
    var unused =
        calls
            .call("renew", args)
            .thenCompose(
                reply ->
                    replicaAcks.enabled()
                        ? replicaAcks.confirm("renewal").thenApply(confirmed -> reply)
                        : CompletableFuture.completedFuture(reply))
            .whenComplete(
                (reply, failure) -> {
                  if (failure != null) {
                    lastRenewFailure =
                        failure; // leases not renewed in time are lost by their watch
                    return;
                  }
                  lastRenewFailure = null;
                  for (int i = 0; i < leases.size(); i++) {
                    List<Object> item = reply.item(i);
                    String status = Reply.status(item);
                    RedisLease lease = leases.get(i);
                    if ("renewed".equals(status)) {
                      long expiry = Reply.expiry(item);
                      lease.renewed(
                          expiry,
                          sentNanos + TimeUnit.MILLISECONDS.toNanos(expiry - reply.serverMillis));
                    } else {
                      lease.lose("it is no longer held in Redis (" + status + ")");
                    }
                  }
                });
  }

  @Nullable Throwable lastRenewFailure() {
    return lastRenewFailure;
  }

  /** {@return the semaphore's name} */
  String semaphoreName() {
    return name;
  }

  Executor completionExecutor() {
    return completionExecutor;
  }

  /** How this handle's threads wait for Redis. */
  ReplySpin spin() {
    return calls.spin;
  }
}
