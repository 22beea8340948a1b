package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The README's rate limiter example, as written there. */
class RateLimiterReadmeExamplesTest {
  private final AtomicInteger calls = new AtomicInteger();

  private void callVendor() {
    calls.incrementAndGet();
  }

  private CompletableFuture<String> callVendorAsync() {
    calls.incrementAndGet();
    return CompletableFuture.completedFuture("ok");
  }

  private String example(RateLimiter vendor) throws Exception {
    vendor.acquire(); // waits for its turn
    callVendor();

    if (!vendor.tryAcquire()) { // or answer at once
      return "429, retry after " + vendor.timeToAdmit(1).toMillis() + " ms";
    }

    return vendor.acquireAsync(1).thenCompose(passed -> callVendorAsync()).get();
  }

  @Test
  void theVendorExample() throws Exception {
    // The vendor allows 10 calls a second; after a pause, let 5 go at once, then pace the rest.
    RateLimiter vendor = RateLimiter.builder().rate(10, Duration.ofSeconds(1)).burst(5).build();

    assertEquals("ok", example(vendor)); // three of the burst of five, none waiting
    assertEquals(2, calls.get());
  }

  @Test
  void theRefusal() throws Exception {
    RateLimiter hourly = RateLimiter.builder().rate(1, Duration.ofHours(1)).burst(1).build();
    // the acquire takes the one permit; the try would wait an hour, and answers at once
    String answer = example(hourly);
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("429, retry after (\\d+) ms").matcher(answer);
    assertTrue(m.matches(), answer);
    long ms = Long.parseLong(m.group(1));
    assertTrue(ms > 3_500_000 && ms <= 3_600_000, "about an hour: " + answer);
  }

  @Test
  void theDefaultBurst() {
    assertEquals(100, RateLimiter.create(100, Duration.ofSeconds(1)).burst());
  }
}
