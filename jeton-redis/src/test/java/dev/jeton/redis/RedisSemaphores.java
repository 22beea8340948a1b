package dev.jeton.redis;

import dev.jeton.redis.testing.Await;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Test access to a {@link RedisSemaphore} handle's parts: what tests set up, look at or provoke
 * that the public API does not show, and the set-up several suites share. Nothing here is on a
 * production path.
 */
final class RedisSemaphores {
  private RedisSemaphores() {}

  /** Takes {@code count} leases of one permit, asked for all at once (many holders at once). */
  static List<Lease> takeLeases(RedisSemaphore semaphore, int count) throws Exception {
    List<CompletableFuture<Lease>> asked = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      asked.add(semaphore.acquireLeaseAsync(1));
    }
    List<Lease> leases = new ArrayList<>();
    for (CompletableFuture<Lease> lease : asked) {
      leases.add(lease.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    }
    return leases;
  }

  /** Opens a handle whose replica acknowledgement waits are answered by {@code answers}. */
  static RedisSemaphore openAnsweringReplicaWaits(
      RedisSemaphore.Builder builder, Supplier<CompletableFuture<Long>> answers) {
    return builder.open((replicas, timeout) -> answers.get());
  }

  /** The request ids {@code semaphore} waits on. */
  static Collection<String> waitingIds(RedisSemaphore semaphore) {
    return semaphore.handle().requests.ids();
  }

  /** The leases {@code semaphore} holds. */
  static Collection<RedisLease> heldLeases(RedisSemaphore semaphore) {
    return semaphore.handle().leases.all();
  }

  /** Calls the function as {@code semaphore} does; its items. */
  static CompletionStage<List<Object>> rawCall(
      RedisSemaphore semaphore, String op, String... args) {
    return semaphore.handle().calls.call(op, args).thenApply(reply -> reply.items);
  }

  /** Drops every wake-up to {@code semaphore} from now on, as a broken subscription would. */
  static void deafen(RedisSemaphore semaphore) {
    semaphore.handle().link.ignore(semaphore.handle().calls.channel());
  }

  /** Handles {@code message} as a wake-up that came on {@code semaphore}'s channel. */
  static void wakeUp(RedisSemaphore semaphore, String message) {
    semaphore.handle().requests.onWake(message);
  }

  /** The channel {@code semaphore}'s wake-ups come on. */
  static String wakeChannel(RedisSemaphore semaphore) {
    return semaphore.handle().calls.channel();
  }
}
