package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.KeyedRateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The rate limit per key in front of the concurrency limit, in the neutral core. Its rate is one an
 * hour, so that nothing refills while a test runs and every value is known (up to the nanoseconds
 * the test itself takes, which the rounding up to whole seconds absorbs).
 */
class RateLimitTest {
  private static final String POLICY = "\"default\";q=1;w=3600";

  /** A request of some server: who sent it. */
  record Request(String client) {}

  private final KeyedRateLimiter<String> perClient =
      KeyedRateLimiter.<String>builder().rate(1, Duration.ofHours(1)).burst(2).build();

  private AdmissionControl.Builder<Request> builder(int limit) {
    return AdmissionControl.<Request>builder().limit(limit).rateLimit(Request::client, perClient);
  }

  @Test
  void overItsRate_aKeyIsRejectedWith429_RetryAfter_andTheHeaders() throws Exception {
    AdmissionControl<Request> control = builder(4).build(); // rejectionStatus 503 by default
    Request a = new Request("a");
    ((Ticket) control.admit(a)).close();
    ((Ticket) control.admit(a)).close();
    Rejection r = assertInstanceOf(Rejection.class, control.admit(a));
    assertEquals(Reason.RATE_LIMITED, r.reason());
    assertEquals(429, r.status(), "the client's excess, whatever the rejection status");
    assertEquals(3600, r.retryAfterSeconds(), "one unit back in an hour, less the test's time");
    assertEquals(
        Map.of("RateLimit-Policy", POLICY, "RateLimit", "\"default\";r=0;t=3600"), r.headers());
    assertTrue(r.message().contains("RATE_LIMITED"), r.message());
    ((Ticket) control.admit(new Request("b"))).close(); // another key has its own rate
    assertEquals(1, control.stats().rejected(Reason.RATE_LIMITED));
    assertEquals(3, control.stats().admitted());
  }

  @Test
  void refusedByTheConcurrencyLimit_aRequestGetsItsWeightBack() throws Exception {
    AdmissionControl<Request> control = builder(1).build();
    Request a = new Request("a");
    Ticket first = (Ticket) control.admit(a);
    Rejection busy = assertInstanceOf(Rejection.class, control.admit(a));
    assertEquals(Reason.LIMIT_REACHED, busy.reason(), "passed the rate, not the limit");
    assertEquals(503, busy.status());
    assertEquals(Map.of(), busy.headers());
    first.close();
    ((Ticket) control.admit(a)).close(); // the second of its burst of 2: the busy one gave it back
    assertEquals(Reason.RATE_LIMITED, ((Rejection) control.admit(a)).reason());
  }

  /**
   * Queued: a request that passed the rate and then timed out in the queue, or was withdrawn from
   * it, gets its weight back. The test fires the queue's timeout itself, so the give-back (a
   * dependent of the decision) has run when the firing returns.
   */
  @Test
  void timedOutOrWithdrawnFromTheQueue_aRequestGetsItsWeightBack() throws Exception {
    List<Runnable> armed = new ArrayList<>();
    AdmissionControl<Request> control =
        builder(1)
            .queue(4, Duration.ofMinutes(10))
            .timeouts(
                (expire, nanos) -> {
                  armed.add(expire);
                  return CompletableFuture.completedFuture(null);
                })
            .build();
    Request a = new Request("a");
    Ticket first = (Ticket) control.admitAsync(a).join();
    CompletableFuture<Decision> late = control.admitAsync(a);
    armed.forEach(Runnable::run);
    assertEquals(Reason.QUEUE_TIMEOUT, ((Rejection) late.join()).reason());
    CompletableFuture<Decision> withdrawn = control.admitAsync(a);
    assertTrue(withdrawn.cancel(false));
    first.close();
    ((Ticket) control.admitAsync(a).join()).close(); // the second of its burst: both gave it back
    assertEquals(Reason.RATE_LIMITED, ((Rejection) control.admitAsync(a).join()).reason());
  }

  @Test
  void exemptRequests_areNotCounted() throws Exception {
    AdmissionControl<Request> control = builder(1).exempt(r -> r.client().equals("probe")).build();
    for (int i = 0; i < 5; i++) {
      assertTrue(((Ticket) control.admit(new Request("probe"))).exempt());
    }
    assertEquals(0, perClient.keys());
  }

  @Test
  void admittedResponses_carryTheHeaders_onlyIfAskedFor() throws Exception {
    Request a = new Request("a");
    AdmissionControl<Request> silent = builder(4).build();
    ((Ticket) silent.admit(a)).close();
    assertEquals(Map.of(), silent.rateLimitHeaders(a));

    AdmissionControl<Request> told =
        AdmissionControl.<Request>builder()
            .limit(4)
            .rateLimit(Request::client, 1, Duration.ofMinutes(1))
            .rateWeight(r -> 1)
            .rateLimitHeaders("per \"client\"", true)
            .build();
    assertEquals(
        Map.of(
            "RateLimit-Policy",
            "\"per \\\"client\\\"\";q=1;w=60",
            "RateLimit",
            "\"per \\\"client\\\"\";r=1;t=0"),
        told.rateLimitHeaders(a),
        "a key not seen: its whole quota, full now");
    ((Ticket) told.admit(a)).close();
    assertEquals("\"per \\\"client\\\"\";r=0;t=60", told.rateLimitHeaders(a).get("RateLimit"));
  }

  @Test
  void theWindowIsTheRatesPeriodInWholeSeconds_andTheQuotaWhatFitsInIt() {
    Rejection r =
        rejectedSecond(
            KeyedRateLimiter.<String>builder().rate(3, Duration.ofMillis(1_500)).burst(1));
    assertEquals("\"default\";q=4;w=2", r.headers().get("RateLimit-Policy"), "3 per 1.5 s");
    Rejection fast =
        rejectedSecond(
            KeyedRateLimiter.<String>builder().rate(10, Duration.ofMillis(100)).burst(1));
    assertEquals("\"default\";q=100;w=1", fast.headers().get("RateLimit-Policy"));
    assertEquals(1, fast.retryAfterSeconds(), "10 ms, at least a second");
  }

  private static Rejection rejectedSecond(KeyedRateLimiter.Builder<String> limiter) {
    AdmissionControl<Request> control =
        AdmissionControl.<Request>builder()
            .limit(4)
            .rateLimit(Request::client, limiter.build())
            .build();
    control.admitAsync(new Request("a")).join();
    return (Rejection) control.admitAsync(new Request("a")).join();
  }

  @Test
  void badInput_failsAtOnce_namingTheValue() {
    AdmissionControl.Builder<Request> b = AdmissionControl.builder();
    assertMessage("was 0", () -> b.rateLimit(Request::client, 0, Duration.ofSeconds(1)));
    assertMessage("was -5", () -> b.rateLimit(Request::client, -5, Duration.ofSeconds(1)));
    assertMessage("was PT0S", () -> b.rateLimit(Request::client, 1, Duration.ZERO));
    assertMessage("was \"\"", () -> b.rateLimitHeaders("", false));
    assertMessage("was \"caf\u00e9\"", () -> b.rateLimitHeaders("caf\u00e9", false));
    IllegalStateException alone =
        assertThrows(
            IllegalStateException.class,
            () -> AdmissionControl.<Request>builder().limit(1).rateWeight(r -> 2).build());
    assertTrue(alone.getMessage().contains("rateWeight"), alone.getMessage());
    AdmissionControl<Request> heavy = builder(1).rateWeight(r -> 3).build();
    assertMessage("the burst, 2, was 3", () -> heavy.admit(new Request("a")));
  }

  private static void assertMessage(String expected, Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}
