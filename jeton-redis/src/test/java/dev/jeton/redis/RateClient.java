package dev.jeton.redis;

import java.time.Duration;

/**
 * A client process for the rate limiter tests: passes a Redis rate limiter {@code count} times,
 * printing {@code READY} once open and {@code PASSED <n>} after each, then {@code DONE}; waits for
 * {@code go} on stdin before the first.
 *
 * <p>Arguments: uri name permits periodMillis burst count
 */
public final class RateClient {
  private RateClient() {}

  public static void main(String[] args) throws Exception {
    try (RedisRateLimiter limiter =
        RedisRateLimiter.builder(args[1])
            .uri(args[0])
            .rate(Long.parseLong(args[2]), Duration.ofMillis(Long.parseLong(args[3])))
            .burst(Integer.parseInt(args[4]))
            .open()) {
      int count = Integer.parseInt(args[5]);
      System.out.println("READY");
      if (!"go"
          .equals(
              new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine())) {
        return;
      }
      for (int n = 1; n <= count; n++) {
        limiter.acquire();
        System.out.println("PASSED " + n);
      }
      System.out.println("DONE");
    }
  }
}
