/**
 * A semaphore shared by a fleet of machines through Redis: {@link dev.jeton.redis.RedisSemaphore},
 * whose permits are {@link dev.jeton.redis.Lease leases} with fencing tokens; and a rate limiter,
 * {@link dev.jeton.redis.RedisRateLimiter} (how it works is in its class comment and {@code
 * rate.lua}).
 *
 * <h2>How {@link RedisSemaphore} works</h2>
 *
 * <p>The state lives in Redis under keys that share the hash tag {@code {<prefix>:<name>}}, and
 * every change is one call of one Redis function (its algorithm and invariants are in {@code
 * semaphore.lua}, beside this class): who holds which slots until when, the FIFO queue of waiters,
 * each slot's last fencing token, and recently finished request ids.
 *
 * <p>Each request gets a random id, chosen here, and may be sent any number of times: a request id
 * already holding gets its lease back, a queued one keeps its place, a finished one is refused. So
 * a retry, or Lettuce re-sending a command after a reconnect, never takes a second lease. Whoever
 * frees permits grants the requests at the head of the queue in the same call and publishes the
 * grants; the waiting process takes its lease from the message, without asking Redis again. A lost
 * message costs at most one {@linkplain RedisSemaphoreOptions#pollInterval() poll interval}: every
 * waiting process asks again that often, which also keeps its queue entries alive. A waiter that
 * stops asking (its process died) drops out after the {@linkplain
 * RedisSemaphoreOptions#waiterExpiry() waiter expiry}; a holder that stops renewing loses its lease
 * after the lease time.
 *
 * <p>If the state vanishes (Redis restarted without persistence), the first call from a handle that
 * has seen it recreates it in quarantine: nothing is granted for one lease time, by when every
 * holder of the lost state has found its lease lost (see {@code semaphore.lua}, Recreation).
 * Meanwhile a request that would not wait fails with {@link SemaphoreQuarantinedException}, which
 * names when the quarantine ends ({@link RedisSemaphore#tryAcquire(int)} throws it; a zero timeout
 * fails with a {@code TimeoutException} whose cause it is); a waiter queues, and is granted after
 * the quarantine if its timeout allows, else fails with a {@code TimeoutException} whose cause it
 * is. With replica acknowledgements, a grant is relied on only after {@code WAIT}.
 *
 * <p>On this side, each request is a future whose first completion wins, as every Jeton future's: a
 * cancel (or any completion from outside) that returns true never leaves the caller holding
 * permits, whatever raced with it; a grant that loses to a cancel is given back. Commands of one
 * handle travel on one connection, so Redis sees them in the order they were sent: once {@code
 * cancel()} returns, a later {@link RedisSemaphore#queueLength()} no longer counts it, nor {@link
 * RedisSemaphore#available()} its permits.
 *
 * <h2>Replica acknowledgements</h2>
 *
 * <p>Replication is asynchronous: a primary that fails after granting or renewing a lease, before a
 * replica has it, leaves the promoted replica without the lease, and it may grant those permits
 * again for up to one lease time. {@link RedisSemaphoreOptions#withReplicaAcks} makes a handle wait
 * (Redis {@code WAIT}) until that many replicas have each grant and renewal before relying on it: a
 * grant that does not reach them is given back and asked for again, a renewal that does not is not
 * counted. That narrows the window, at one more round trip per grant and renewal; it does not close
 * it, since {@code WAIT} cannot stop a failover from promoting a replica that missed the write, and
 * other clients see a grant on the primary before it is acknowledged. Where that matters, fence the
 * resource ({@link FencingGuard}).
 */
@NullMarked
package dev.jeton.redis;

import org.jspecify.annotations.NullMarked;
