package dev.jeton.redis;

import java.lang.ref.Reference;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The lease a caller holds when its lease is watched for leaks: it delegates to the {@link
 * RedisLease}, which the handle and its timer hold, and only the caller holds this. So it becomes
 * unreachable when the caller drops it, and its leak record (kept by the lease, which forgets it
 * whichever way the lease ends) is then reported if the lease is still held.
 *
 * <p>Release keeps this reachable until the lease has forgotten the record: were it collected in
 * the middle of its own release, the record could be found not yet forgotten, and a released lease
 * reported.
 */
final class WatchedLease implements Lease {
  private final RedisLease lease;

  WatchedLease(RedisLease lease) {
    this.lease = lease;
  }

  @Override
  public void release() {
    try {
      lease.release();
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public CompletableFuture<Boolean> releaseAsync() {
    try {
      return lease.releaseAsync();
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  @Override
  public int permits() {
    return lease.permits();
  }

  @Override
  public String id() {
    return lease.id();
  }

  @Override
  public String semaphore() {
    return lease.semaphore();
  }

  @Override
  public List<FencingToken> fencingTokens() {
    return lease.fencingTokens();
  }

  @Override
  public Instant expiresAt() {
    return lease.expiresAt();
  }

  @Override
  public boolean isHeld() {
    return lease.isHeld();
  }

  @Override
  public CompletionStage<LeaseLoss> lost() {
    return lease.lost();
  }

  @Override
  public String toString() {
    return lease.toString();
  }
}
