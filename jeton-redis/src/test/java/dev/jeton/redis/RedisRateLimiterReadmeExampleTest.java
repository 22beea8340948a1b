package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The README's fleet-wide rate limiter example, as written there, against a real Redis. */
class RedisRateLimiterReadmeExampleTest extends RedisServerPerTest {
  private final AtomicInteger calls = new AtomicInteger();

  private void callVendor() {
    calls.incrementAndGet();
  }

  @Test
  void theVendorExample() throws Exception {
    String redisUri = server.uri(); // the README's "redis://localhost:6379"
    // Every process that opens "vendor-api" shares its 100 a second.
    try (RedisRateLimiter vendor =
        RedisRateLimiter.builder("vendor-api")
            .uri(redisUri)
            .rate(100, Duration.ofSeconds(1))
            .burst(20)
            .open()) {
      vendor.acquire(); // one round trip, then its turn
      callVendor();
    }
    assertEquals(1, calls.get());
    try (RedisRateLimiter again = RedisRateLimiter.builder("vendor-api").uri(redisUri).open()) {
      assertEquals(100, again.permits());
      assertEquals(20, again.burst());
    }
  }
}
