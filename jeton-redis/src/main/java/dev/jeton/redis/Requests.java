package dev.jeton.redis;

import dev.jeton.SemaphoreClosedException;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.LeakTracker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The requests one handle waits on: sends them to Redis, alone or in batches, and settles each with
 * what Redis says of it, in a reply or a wake-up. Each {@link RedisRequest} talks to its handle
 * through this.
 */
final class Requests {
  /*
   * Overview
   *
   * Each request gets a random id, chosen here. A request is sent as "grant it if it is first in
   * line and fits, else queue it" and may be sent any number of times: a request id already
   * holding gets its lease back, a queued one keeps its place (and its entry's expiry is pushed
   * back), a finished one is refused by its tombstone. So a retry, or Lettuce re-sending a
   * command after a reconnect, never takes a second lease.
   *
   * Whoever frees permits in Redis grants the requests at the head of the queue in the same call
   * and publishes the grants (lease expiry and fencing tokens) on the channel of the handle that
   * queued them: onWake settles ours from the message, without asking Redis again. A lost
   * message costs at most one poll interval: pollAll sends every request already answered once
   * again (in batches of 200), which also keeps its queue entry alive. A request whose entry
   * expired anyway, or whose grant expired before it was seen, is resubmitted under a new id,
   * and the old id is withdrawn.
   *
   * A request with no time to wait (a zero timeout) is sent once as "try": granted if it is
   * first in line and fits, else refused ("busy", or "quarantined" while the semaphore grants
   * nothing after a loss of its state), and never queued. Sent as "queue", it sat in Redis's
   * queue until its withdrawal came, holding back other tries, and was sometimes granted a
   * permit only to give it back. A "queued" answer in quarantine names its end too, so that a
   * waiter whose timeout runs out before then says the quarantine was why.
   *
   * A reply or a wake-up acts on a request only while it is pending (RedisRequest's state) and
   * known by the id the item names, so a late or duplicated report of a withdrawn or resubmitted
   * request does nothing; its cancel, sent after it on the same connection, gives back any grant.
   *
   * Fields: waiting maps each pending request's current id to it (a concurrent map): a request
   * enters at submit and leaves when it is granted or withdrawn; resubmit enters the new id
   * before the old one leaves. closed is volatile and set once: submit checks it before and
   * after entering waiting, and close() fails what it then finds in waiting, so a request
   * submitted as the handle closes either fails or is failed.
   */

  private static final int BATCH = 200;

  private final String name;
  private final RedisSemaphoreOptions options;
  private final String owner;
  private final Calls calls;
  private final Leases leases;
  private final ReplicaAcks replicaAcks;
  private final Executor completionExecutor;
  private final Runnable left;
  private final Map<String, RedisRequest<?>> waiting = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * {@code owner} is who this handle's requests say they are; {@code left} runs each time a request
   * is withdrawn (the handle may then be done).
   */
  Requests(
      String name,
      RedisSemaphoreOptions options,
      String owner,
      Calls calls,
      Leases leases,
      ReplicaAcks replicaAcks,
      Executor completionExecutor,
      Runnable left) {
    this.name = name;
    this.options = options;
    this.owner = owner;
    this.calls = calls;
    this.leases = leases;
    this.replicaAcks = replicaAcks;
    this.completionExecutor = completionExecutor;
    this.left = left;
  }

  /** See {@link Leases#acquiring()}: asked on the acquiring thread, as each request is made. */
  LeakTracker.@Nullable Acquisition leakWatch() {
    return leases.acquiring();
  }

  /** Starts a request that waits (or {@code weight} 0: until the semaphore is idle). */
  <T extends @Nullable Object> RedisRequest<T> submit(
      int weight, boolean blocking, @Nullable Duration timeout) {
    RedisRequest<T> request = new RedisRequest<>(this, weight, blocking, timeout);
    boolean timed = timeout != null && !request.tries(); // a try is decided by its answer
    if (timed) {
      request.expectTimer();
    }
    if (closed && weight != 0) {
      request.fail(closedException());
      return request;
    }
    waiting.put(request.id, request);
    if (closed && weight != 0) { // closed while we queued it
      request.fail(closedException());
      return request;
    }
    if (timeout != null && timed) {
      request.setTimer(RedisTimer.TIMER.schedule(request::timerFired, Arguments.toNanos(timeout)));
    }
    sendAndSettle(List.of(request), request.tries());
    return request;
  }

  /**
   * A request that never waits: the lease if Redis grants it at once, else empty.
   *
   * @throws SemaphoreQuarantinedException if the semaphore is in quarantine
   */
  Optional<Lease> tryAcquire(int permits) {
    RedisRequest<Lease> request = new RedisRequest<>(this, permits, true, null);
    Reply reply = calls.await(send(List.of(request), true, System.nanoTime()));
    List<Object> item = reply.item(0);
    switch (Reply.status(item)) {
      case "granted":
        RedisLease lease =
            leases.newLease(
                request.id, request.weight, item, reply.serverMillis, request.queuedSince);
        leases.register(lease);
        Lease handed = lease.handOut(request.leakWatch);
        lease.watch();
        return Optional.of(handed);
      case "toobig":
        throw new IllegalArgumentException(
            "permits must not exceed the limit " + reply.limit + ", was " + permits);
      case "quarantined":
        throw quarantine(item, reply.serverMillis);
      default:
        return Optional.empty();
    }
  }

  /** A wake-up: ours among its items are settled from it, as from a reply. */
  void onWake(String message) {
    Reply.Wake wake = Reply.Wake.parse(message);
    if (wake == null) {
      return; // not a message of this version of the function: the poll still finds the outcome
    }
    for (List<Object> item : wake.items()) {
      RedisRequest<?> request = waiting.get(Reply.id(item));
      if (request != null) {
        // Granted after Redis had our last request that found it queued, so its lease time
        // counts from no earlier than when that request was sent.
        settle(request, item, calls.knownLimit(), wake.serverMillis(), request.queuedSince);
      }
    }
  }

  /** The fallback poll, and the retry of withdrawals that could not be sent. */
  void pollAll() {
    calls.resendWithdrawals();
    if (!waiting.isEmpty()) {
      List<RedisRequest<?>> answered = new ArrayList<>();
      for (RedisRequest<?> request : waiting.values()) {
        if (request.answered) { // one whose first reply is still on its way needs no second ask
          answered.add(request);
        }
      }
      poll(answered);
    }
  }

  /** Sends (again) every request in {@code requests}, and settles each with its reply. */
  private void poll(Collection<RedisRequest<?>> requests) {
    List<RedisRequest<?>> batch = new ArrayList<>();
    for (RedisRequest<?> request : requests) {
      if (request.isPending()) {
        batch.add(request);
      }
      if (batch.size() == BATCH) {
        sendAndSettle(batch, false);
        batch = new ArrayList<>();
      }
    }
    if (!batch.isEmpty()) {
      sendAndSettle(batch, false);
    }
  }

  /** The quarantine that {@code item} names, as Redis said it at {@code serverMillis}. */
  private SemaphoreQuarantinedException quarantine(List<Object> item, long serverMillis) {
    long until = Reply.quarantineEnd(item);
    return new SemaphoreQuarantinedException(
        name, Instant.ofEpochMilli(until), Duration.ofMillis(Math.max(0, until - serverMillis)));
  }

  /** Sends the requests at {@code sentNanos}; the reply is the caller's to read. */
  private CompletableFuture<Reply> send(
      List<RedisRequest<?>> batch, boolean trying, long sentNanos) {
    String[] args = new String[1 + 4 * batch.size()];
    args[0] = trying ? "try" : "queue";
    String lease = Long.toString(options.leaseTime().toMillis());
    int i = 1;
    for (RedisRequest<?> request : batch) {
      args[i++] = request.id;
      args[i++] = Integer.toString(request.weight);
      args[i++] = lease;
      args[i++] = owner;
    }
    for (RedisRequest<?> request : batch) {
      if (request.queuedSince == 0) {
        request.queuedSince = sentNanos; // its first send: a grant can only come after it
      }
    }
    return calls.call("acquire", args);
  }

  /** Sends the requests, and settles each with its reply. */
  private void sendAndSettle(List<RedisRequest<?>> batch, boolean trying) {
    long sentNanos = System.nanoTime();
    var unused =
        send(batch, trying, sentNanos)
            .whenComplete(
                (r, failure) -> {
                  if (failure != null) {
                    batch.forEach(request -> request.attemptFailed(failure));
                    return;
                  }
                  try {
                    for (int k = 0; k < r.items.size(); k++) {
                      settle(batch.get(k), r.item(k), r.limit, r.serverMillis, sentNanos);
                    }
                  } catch (RuntimeException unexpected) {
                    // A reply this code does not understand (another version of the function?):
                    // fail
                    // the requests rather than leave them waiting for ever.
                    batch.forEach(request -> request.fail(unexpected));
                  }
                });
  }

  /**
   * Settles a request with what Redis said of it: {@code item} is {@code id, status[, expiry,
   * tokens]}, {@code serverMillis} the server's time then, {@code sentNanos} a local time before
   * Redis said it (the lease's local deadline counts from there).
   */
  private void settle(
      RedisRequest<?> request, List<Object> item, int limit, long serverMillis, long sentNanos) {
    String id = Reply.id(item);
    String status = Reply.status(item);
    if (!id.equals(request.id) || !request.isPending()) {
      return; // withdrawn meanwhile: its cancel, sent after this request, gives back any grant
    }
    switch (status) {
      case "granted":
        RedisLease lease =
            leases.newLease(request.id, request.weight, item, serverMillis, sentNanos);
        if (lease.deadlinePassed()) {
          // Granted while this process could not hear of it (paused past its waiter expiry):
          // the grant is gone, or going, in Redis. Not a lease to give anyone: queue again.
          resubmit(request);
          break;
        }
        if (replicaAcks.enabled()) {
          replicaAcks.settleGrant(lease.id(), missed -> settleAcknowledged(request, lease, missed));
        } else {
          grant(request, lease);
        }
        break;
      case "queued":
        if (sentNanos - request.queuedSince > 0) {
          request.queuedSince = sentNanos;
        }
        long until = Reply.quarantineEnd(item);
        request.queued(
            until < 0 ? null : quarantine(item, serverMillis),
            sentNanos + TimeUnit.MILLISECONDS.toNanos(until - serverMillis));
        break;
      case "busy":
        if (request.tries()) {
          request.refused(null); // no permit free
        } else {
          request.fail(new IllegalStateException("a queued request got 'busy'"));
        }
        break;
      case "quarantined":
        request.refused(quarantine(item, serverMillis));
        break;
      case "idle":
        request.grant(null);
        break;
      case "toobig":
        request.fail(
            new IllegalArgumentException(
                "permits must not exceed the limit " + limit + ", was " + request.weight));
        break;
      case "expired":
      case "abandoned":
      case "damaged":
        // Our queue entry expired (we could not poll in time), a grant expired before we saw
        // it, or Redis found our record damaged and ended it (semaphore.lua, Damage): the
        // request is still wanted, so it queues again, under a new id.
        resubmit(request);
        break;
      default:
        request.fail(
            new IllegalStateException(
                "request "
                    + id
                    + " of semaphore '"
                    + name
                    + "' was "
                    + status
                    + " in Redis by another client"));
    }
  }

  /**
   * Settles a grant once replicas answered: grants it if enough have it; otherwise gives it back (a
   * failover could forget it) and asks again under a new id.
   */
  private void settleAcknowledged(
      RedisRequest<?> request, RedisLease lease, @Nullable Throwable missed) {
    if (missed == null) {
      grant(request, lease);
      return;
    }
    var releasing = leases.release(lease.id()); // gives it back, or it expires
    request.attemptFailed(missed);
    resubmit(request);
  }

  private void grant(RedisRequest<?> request, RedisLease lease) {
    // Registered before the caller can see it (and release it); a second reply for the same
    // grant (a poll crossing the first reply) finds it registered and the request settled.
    if (!leases.register(lease)) {
      return;
    }
    if (request.grant(lease)) {
      lease.watch();
    } else {
      // Withdrawn meanwhile (its cancel gives the permits back), perhaps by close(), which then
      // saw this lease registered and left the shut-down to whoever drops it: this call.
      leases.forget(lease);
    }
  }

  /**
   * Sends the request again under a new id, and withdraws the old one: a poll still in flight for
   * it may yet be granted, and the withdrawal, sent after it, gives that grant back.
   */
  private void resubmit(RedisRequest<?> request) {
    if (request.tries()) {
      request.refused(null); // one answer, and it brought no lease: its withdrawal gives it back
      return;
    }
    String old = request.id;
    String fresh = Ids.newId();
    request.queuedSince = 0;
    request.id = fresh;
    waiting.put(fresh, request);
    waiting.remove(old, request);
    calls.withdraw(List.of(old));
    if (request.isPending()) {
      poll(List.of(request));
    } else {
      waiting.remove(fresh, request);
    }
  }

  /** A request left the pending state (granted or withdrawn): it no longer waits here. */
  void settled(RedisRequest<?> request) {
    waiting.remove(request.id, request);
  }

  /** A request was withdrawn: it leaves, and Redis is told (which gives back a late grant). */
  void withdrawn(RedisRequest<?> request) {
    waiting.remove(request.id, request);
    calls.withdraw(List.of(request.id));
    left.run();
  }

  /** Takes no new requests, and fails the queued ones; awaitIdle requests keep waiting. */
  void close() {
    closed = true;
    for (RedisRequest<?> request : List.copyOf(waiting.values())) {
      if (request.weight != 0) {
        request.fail(closedException());
      }
    }
  }

  boolean isClosed() {
    return closed;
  }

  boolean isEmpty() {
    return waiting.isEmpty();
  }

  /** {@return the ids of the requests waiting now} */
  Collection<String> ids() {
    return List.copyOf(waiting.keySet());
  }

  SemaphoreClosedException closedException() {
    return new SemaphoreClosedException("semaphore '" + name + "' is closed (this handle)");
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
