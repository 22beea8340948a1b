package dev.jeton.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.RateLimiter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class RateLimiterMetricsTest {
  private final MeterRegistry registry = new SimpleMeterRegistry();

  private double gauge(String name) {
    return registry.get(name).tag("name", "vendor").gauge().value();
  }

  private double requests(String outcome) {
    return registry
        .get("jeton.rate.limiter.requests")
        .tags("name", "vendor", "outcome", outcome)
        .functionCounter()
        .count();
  }

  /** The README's example, as written there. */
  @Test
  void readmeExample() {
    RateLimiter vendor =
        RateLimiter.builder().rate(10, Duration.ofSeconds(1)).statistics(true).build();
    new RateLimiterMetrics(vendor, "vendor", Tag.of("service", "payments")).bindTo(registry);
    assertEquals(
        10,
        registry
            .get("jeton.rate.limiter.rate")
            .tags("name", "vendor", "service", "payments")
            .gauge()
            .value());
  }

  @Test
  void everyOutcomeIsCountedAndTheGaugesFollowTheLimiter() throws Exception {
    // One a minute with a burst of one: the first passes, everything after it waits.
    RateLimiter vendor =
        RateLimiter.builder().rate(1, Duration.ofMinutes(1)).burst(1).statistics(true).build();
    RateLimiterMetrics metrics = new RateLimiterMetrics(vendor, "vendor");
    metrics.bindTo(registry);
    assertTrue(metrics.bindsStatistics());
    assertEquals(1 / 60.0, gauge("jeton.rate.limiter.rate"), 1e-12);
    assertEquals(1, gauge("jeton.rate.limiter.burst"));

    assertTrue(vendor.tryAcquire());
    assertFalse(vendor.tryAcquire());
    CompletableFuture<Void> cancelled = vendor.acquireAsync(1);
    CompletableFuture<Void> timedOut = vendor.acquireAsync(1, Duration.ofMillis(1));
    assertEquals(2, gauge("jeton.rate.limiter.queued"));
    assertTrue(cancelled.cancel(true));
    ExecutionException timeout = assertThrows(ExecutionException.class, timedOut::get);
    assertTrue(timeout.getCause() instanceof TimeoutException, timeout.toString());

    assertEquals(1, requests("admitted"));
    assertEquals(1, requests("rejected"));
    assertEquals(1, requests("timeout"));
    assertEquals(1, requests("cancelled"));
    assertEquals(0, gauge("jeton.rate.limiter.queued"));
    assertEquals(2, gauge("jeton.rate.limiter.queued.peak"));
    assertEquals(1, registry.get("jeton.rate.limiter.wait").functionTimer().count());

    vendor.setRate(120, Duration.ofMinutes(1));
    assertEquals(2, gauge("jeton.rate.limiter.rate"), 1e-12);
  }

  @Test
  void waitsOfAdmittedRequestsAreTimed() throws Exception {
    RateLimiter vendor =
        RateLimiter.builder().rate(1000, Duration.ofSeconds(1)).burst(1).statistics(true).build();
    new RateLimiterMetrics(vendor, "vendor").bindTo(registry);
    vendor.acquire();
    vendor.acquire(); // waits about a millisecond for its turn
    var wait = registry.get("jeton.rate.limiter.wait").functionTimer();
    assertEquals(2, wait.count());
    assertTrue(wait.totalTime(TimeUnit.NANOSECONDS) > 0);
    double max =
        registry.get("jeton.rate.limiter.wait.max").timeGauge().value(TimeUnit.NANOSECONDS);
    assertTrue(max > 0 && max <= wait.totalTime(TimeUnit.NANOSECONDS), "max " + max);
  }

  @Test
  void withoutStatisticsOnlyTheGaugesAreBound() {
    RateLimiter vendor = RateLimiter.create(5, Duration.ofSeconds(1));
    RateLimiterMetrics metrics = new RateLimiterMetrics(vendor, "vendor");
    metrics.bindTo(registry);
    assertFalse(metrics.bindsStatistics());
    assertEquals(5, gauge("jeton.rate.limiter.rate"));
    assertNull(registry.find("jeton.rate.limiter.requests").meter());
    assertNull(registry.find("jeton.rate.limiter.wait").meter());
  }

  @Test
  void aBlankNameIsRefused() {
    RateLimiter vendor = RateLimiter.create(5, Duration.ofSeconds(1));
    var e = assertThrows(IllegalArgumentException.class, () -> new RateLimiterMetrics(vendor, " "));
    assertTrue(e.getMessage().contains("a rate limiter"), e.getMessage());
  }
}
