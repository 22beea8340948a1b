package demo.redis;

import dev.jeton.redis.Lease;
import dev.jeton.redis.RedisSemaphore;

public final class Main {
  /** {@code args[0]}: the Redis URI. */
  public static void main(String[] args) throws Exception {
    try (RedisSemaphore semaphore =
        RedisSemaphore.builder("consumer").uri(args[0]).limitIfNew(1).open()) {
      try (Lease lease = semaphore.acquire(1)) {
        System.out.println("ok " + lease.fencingTokens());
      }
    }
  }
}
