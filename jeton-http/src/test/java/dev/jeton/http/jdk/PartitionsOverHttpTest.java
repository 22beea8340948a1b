package dev.jeton.http.jdk;

import static dev.jeton.http.jdk.ServerFixture.assertOnlyOkOrRejected;
import static dev.jeton.http.jdk.ServerFixture.assertRejected;
import static dev.jeton.http.jdk.ServerFixture.awaitTrue;
import static dev.jeton.http.jdk.ServerFixture.heldUntil;
import static dev.jeton.http.jdk.ServerFixture.joinAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.jdk.ServerFixture.Gauge;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Partitions end to end, as issue 14 asks: a limit per tenant (the {@code X-Tenant} header) and a
 * global limit, in a real JDK {@code HttpServer} driven by the JDK's {@code HttpClient}. Three
 * tenants send many requests at once, and the handler holds every admitted one on a latch, so the
 * limits are reached for certain rather than by chance: counted inside the handler, no tenant ever
 * has more than its limit at work and all of them together never more than the global limit; every
 * other request is a well-formed rejection. After the release, a churn of short requests, under the
 * same limits; at the end, nothing is in flight.
 *
 * <p>Nothing is released while the latch holds, so the permits held only grow and the end state is
 * fixed: with 3 tenants of limit 2 under a global limit of 5, exactly 5 at work; queued, each queue
 * stays as it filled (a waiter cannot be served), so the total cap is reached too.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard only
class PartitionsOverHttpTest {
  private static final List<String> TENANTS = List.of("a", "b", "c");
  private static final int PER_TENANT = 2;
  private static final int GLOBAL = 5;

  private final ServerFixture fixture = new ServerFixture();
  private final Map<String, Gauge> atWorkPerTenant = new ConcurrentHashMap<>();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    fixture.close();
  }

  private static AdmissionControl.Builder<HttpExchange> byTenant() {
    return AdmissionControl.<HttpExchange>builder()
        .partitionBy(exchange -> tenant(exchange), PER_TENANT)
        .limit(GLOBAL);
  }

  private static String tenant(HttpExchange exchange) {
    return exchange.getRequestHeaders().getFirst("X-Tenant");
  }

  /** Starts the server with work that is counted per tenant and held until {@link #release}. */
  private URI start(AdmissionControl<HttpExchange> control) throws IOException {
    HttpHandler held = heldUntil(release);
    return fixture.start(
        new AdmissionFilter(control),
        exchange -> {
          Gauge tenant = atWorkPerTenant.computeIfAbsent(tenant(exchange), t -> new Gauge());
          tenant.enter();
          try {
            held.handle(exchange);
          } finally {
            tenant.exit();
          }
        });
  }

  /** Sends {@code each} requests per tenant at once, the tenants interleaved. */
  private List<CompletableFuture<HttpResponse<String>>> send(URI uri, int each) {
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (int i = 0; i < each; i++) {
      for (String tenant : TENANTS) {
        sent.add(fixture.get(uri, "X-Tenant", tenant));
      }
    }
    return sent;
  }

  /** While held: the global limit reached, and no tenant beyond its own. */
  private void assertAtWorkAtTheLimits(AdmissionControl<HttpExchange> control) {
    awaitTrue(() -> fixture.atWork.now() == GLOBAL, "the admitted requests at work", () -> control);
    int sum = 0;
    for (String tenant : TENANTS) {
      int now = atWorkPerTenant.getOrDefault(tenant, new Gauge()).now();
      assertTrue(now <= PER_TENANT, now + " of tenant " + tenant + " at work");
      sum += now;
    }
    assertEquals(GLOBAL, sum);
  }

  /**
   * After the release, a churn of short requests; then: the limits held throughout, and nothing is
   * left.
   */
  private void churnThenAssertLimitsHeldAndNothingLeft(
      AdmissionControl<HttpExchange> control, URI uri, int rejectStatus) {
    assertOnlyOkOrRejected(joinAll(send(uri, 50)), rejectStatus);
    atWorkPerTenant.forEach(
        (tenant, gauge) ->
            assertTrue(gauge.most() <= PER_TENANT, gauge.most() + " of " + tenant + " at once"));
    assertTrue(fixture.atWork.most() <= GLOBAL, fixture.atWork.most() + " at work at once");
    awaitTrue(
        () -> control.inFlight() == 0 && control.queued() == 0, "nothing left", () -> control);
  }

  @Test
  void bestEffort_perTenantAndGlobalLimitsHold_restRejectedWith429() throws Exception {
    AdmissionControl<HttpExchange> control = byTenant().rejectionStatus(429).build();
    URI uri = start(control);
    List<CompletableFuture<HttpResponse<String>>> sent = send(uri, 30);
    int rejected = sent.size() - GLOBAL;
    awaitTrue(
        () -> control.inFlight() == GLOBAL && control.stats().rejectedTotal() == rejected,
        "5 admitted, the others rejected",
        () -> control);
    assertAtWorkAtTheLimits(control);
    release.countDown();
    List<HttpResponse<String>> responses = joinAll(sent);
    assertEquals(GLOBAL, assertOnlyOkOrRejected(responses, 429));
    responses.stream()
        .filter(r -> r.statusCode() != 200)
        .forEach(r -> assertRejected(r, 429, "LIMIT_REACHED"));
    churnThenAssertLimitsHeldAndNothingLeft(control, uri, 429);
  }

  @Test
  void queued_eachTenantsQueueAndTheTotalCapHold_queuedServedAfterTheRelease() throws Exception {
    int maxQueue = 3;
    int maxQueuedTotal = 5; // below the 9 that three tenants' queues could hold
    AdmissionControl<HttpExchange> control =
        byTenant().queue(maxQueue, Duration.ofMinutes(5)).maxQueuedTotal(maxQueuedTotal).build();
    URI uri = start(control);
    List<CompletableFuture<HttpResponse<String>>> sent = send(uri, 20);
    int rejected = sent.size() - GLOBAL - maxQueuedTotal;
    awaitTrue(
        () ->
            control.inFlight() == GLOBAL
                && control.queued() == maxQueuedTotal
                && control.stats().rejectedTotal() == rejected,
        "5 admitted, 5 queued, the others rejected",
        () -> control);
    assertAtWorkAtTheLimits(control);
    release.countDown();
    List<HttpResponse<String>> responses = joinAll(sent);
    assertEquals(GLOBAL + maxQueuedTotal, assertOnlyOkOrRejected(responses, 503));
    responses.stream()
        .filter(r -> r.statusCode() != 200)
        .forEach(r -> assertRejected(r, 503, "QUEUE_FULL"));
    assertEquals(maxQueuedTotal, control.stats().dequeued());
    churnThenAssertLimitsHeldAndNothingLeft(control, uri, 503);
  }
}
