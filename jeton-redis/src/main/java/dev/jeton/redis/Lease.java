package dev.jeton.redis;

import dev.jeton.Permit;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Permits held in Redis as a lease: they expire on the Redis server's clock unless renewed, and are
 * renewed in the background while held. Every permit a {@link RedisSemaphore} hands out is a {@code
 * Lease}.
 *
 * <p>A lease that could not be renewed in time is <em>lost</em>: {@link #lost()} completes and
 * {@link #isHeld()} turns false, at the latest when the lease may have expired in Redis (the client
 * counts the lease time from the moment it sent the request that set the expiry, which is never
 * after Redis set it). A holder that must not run unprotected stops its work when that happens; a
 * resource that must reject late writes checks the {@link #fencingTokens() fencing tokens} (see
 * {@link FencingGuard}).
 *
 * <p>A lease dropped while held, never released, would be renewed for as long as the process runs:
 * it is reported once the garbage collector finds it, and released then if the builder asked for it
 * (see {@link RedisSemaphore.Builder#leakDetection} and {@link
 * RedisSemaphore.Builder#releaseLeaked}).
 */
public interface Lease extends Permit {

  /** {@return the lease's id: the request id it was granted to, unique across the fleet} */
  String id();

  /** {@return the name of the semaphore it is a lease of} */
  String semaphore();

  /**
   * {@return one token per permit: the slot it occupies and that slot's token} The token grows with
   * every grant of the slot. A resource that has seen a higher token for a slot rejects this
   * holder.
   */
  List<FencingToken> fencingTokens();

  /**
   * {@return when the lease expires in Redis unless renewed, by the server's clock, as last known}
   */
  Instant expiresAt();

  /** {@return true until the lease is released or lost} */
  boolean isHeld();

  /**
   * {@return a stage that completes when the lease is found lost} It expired in Redis (the holder
   * was paused, Redis restarted or lost it), or it could not be renewed before it may have expired.
   * Never completes if the lease is released first.
   */
  CompletionStage<LeaseLoss> lost();

  /**
   * Gives the permits back, as {@link #release()}, and tells whether Redis still held them.
   *
   * @return a future of true if Redis held them; false if the lease had expired (nothing is given
   *     back twice) or was already released
   */
  CompletableFuture<Boolean> releaseAsync();

  /**
   * Why a lease was lost.
   *
   * @param leaseId the lease
   * @param reason what happened, in words
   * @param at when the client found out
   */
  record LeaseLoss(String leaseId, String reason, Instant at) {}

  /** Thrown by {@link FencingGuard#check} when a holder's tokens are stale. */
  final class StaleLeaseException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StaleLeaseException(String message) {
      super(message);
    }
  }
}
