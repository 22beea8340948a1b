package dev.jeton.redis;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Test access to a {@link RedisSemaphore} handle's parts: what tests set up or look at that the
 * public API does not show. Nothing here is on a production path.
 */
final class RedisSemaphores {
  private RedisSemaphores() {}

  /** Opens a handle whose replica acknowledgement waits are answered by {@code answers}. */
  static RedisSemaphore openAnsweringReplicaWaits(
      RedisSemaphore.Builder builder, Supplier<CompletableFuture<Long>> answers) {
    return builder.open((replicas, timeout) -> answers.get());
  }
}
