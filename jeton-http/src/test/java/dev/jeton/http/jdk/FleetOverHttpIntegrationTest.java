package dev.jeton.http.jdk;

import static dev.jeton.http.jdk.ServerFixture.assertOnlyOkOrRejected;
import static dev.jeton.http.jdk.ServerFixture.assertRejected;
import static dev.jeton.http.jdk.ServerFixture.awaitTrue;
import static dev.jeton.http.jdk.ServerFixture.heldUntil;
import static dev.jeton.http.jdk.ServerFixture.joinAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Reason;
import dev.jeton.http.jdk.ServerFixture.Gauge;
import dev.jeton.redis.RedisSemaphore;
import dev.jeton.redis.testing.RedisServer;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A fleet-wide limit end to end, as issue 14 asks: two JDK {@code HttpServer}s, two instances of
 * one service, each behind its own {@link AdmissionControl} on its own {@link RedisSemaphore}
 * handle of the same name, on one real {@code redis-server}; the JDK's {@code HttpClient} spreads
 * many concurrent requests over both. Counted inside both handlers together, never more than the
 * fleet limit at work; every other request is a well-formed rejection; at the end nothing is in
 * flight on either server, and Redis has every permit back.
 *
 * <p>First the admitted requests are held on a latch, so the fleet limit is reached for certain
 * (nothing is released meanwhile, so a request is refused only when Redis has every permit taken);
 * then a churn of short requests, where permits come and go across the two servers.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS) // a hang guard only
class FleetOverHttpIntegrationTest {
  private static final int FLEET_LIMIT = 4;
  private static final int HELD_REQUESTS = 40;
  private static final int CHURN_REQUESTS = 200;

  @AutoClose private final RedisServer redis = RedisServer.start(); // closed after @AfterEach
  private final Gauge atWork = new Gauge(); // both servers' handlers together
  private final List<ServerFixture> servers =
      List.of(new ServerFixture(atWork), new ServerFixture(atWork));
  private final List<RedisSemaphore> semaphores = new ArrayList<>();
  private final List<AdmissionControl<HttpExchange>> controls = new ArrayList<>();
  private final List<URI> uris = new ArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    servers.forEach(ServerFixture::close);
    semaphores.forEach(RedisSemaphore::close);
  }

  /**
   * Starts both instances, in {@code mode}, each with its own handle on one Redis semaphore; their
   * work is held until {@link #release}, then short.
   */
  private void startFleet(UnaryOperator<AdmissionControl.Builder<HttpExchange>> mode)
      throws Exception {
    for (ServerFixture server : servers) {
      RedisSemaphore semaphore =
          RedisSemaphore.builder("fleet").uri(redis.uri()).limit(FLEET_LIMIT).open();
      semaphores.add(semaphore);
      AdmissionControl<HttpExchange> control =
          mode.apply(AdmissionControl.<HttpExchange>builder().semaphore(semaphore)).build();
      controls.add(control);
      uris.add(server.start(new AdmissionFilter(control), heldUntil(release)));
    }
  }

  /** Sends {@code n} requests at once, alternately to each server. */
  private List<CompletableFuture<HttpResponse<String>>> spread(int n) {
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int server = i % servers.size();
      sent.add(servers.get(server).get(uris.get(server)));
    }
    return sent;
  }

  private long sum(ToLongFunction<AdmissionControl<HttpExchange>> count) {
    return controls.stream().mapToLong(count).sum();
  }

  /**
   * Releases the held requests; asserts that {@code admitted} were, that the rest were rejected for
   * {@code reason}; then runs the churn and asserts that nothing is left.
   */
  private void releaseAndChurn(
      List<CompletableFuture<HttpResponse<String>>> held, int admitted, String reason) {
    awaitTrue(() -> atWork.now() == FLEET_LIMIT, "the admitted requests at work", () -> controls);
    assertEquals(0, semaphores.get(0).available());
    release.countDown();
    List<HttpResponse<String>> responses = joinAll(held);
    assertEquals(admitted, assertOnlyOkOrRejected(responses, 503));
    responses.stream()
        .filter(r -> r.statusCode() != 200)
        .forEach(r -> assertRejected(r, 503, reason));
    assertEquals(FLEET_LIMIT, atWork.most());

    assertOnlyOkOrRejected(joinAll(spread(CHURN_REQUESTS)), 503);
    assertTrue(atWork.most() <= FLEET_LIMIT, atWork.most() + " at work at once in the fleet");
    awaitTrue(() -> sum(c -> c.inFlight() + c.queued()) == 0, "nothing left", () -> controls);
    for (RedisSemaphore semaphore : semaphores) { // the releases reach Redis asynchronously
      awaitTrue(() -> semaphore.available() == FLEET_LIMIT, "every permit back", () -> semaphore);
      assertEquals(0, semaphore.queueLength());
    }
  }

  @Test
  void bestEffort_theFleetLimitHoldsAcrossTwoServers() throws Exception {
    startFleet(mode -> mode);
    List<CompletableFuture<HttpResponse<String>>> held = spread(HELD_REQUESTS);
    awaitTrue(
        () ->
            sum(c -> c.inFlight()) == FLEET_LIMIT
                && sum(c -> c.stats().rejectedTotal()) == HELD_REQUESTS - FLEET_LIMIT,
        "the fleet limit admitted, the others rejected",
        () -> controls);
    releaseAndChurn(held, FLEET_LIMIT, "LIMIT_REACHED");
  }

  /**
   * Queued, the queues fill while the first tryAcquires are still on their way to Redis (a request
   * queues behind anyone queued, whatever Redis says), and each pump then takes what is left of the
   * fleet limit for its queue: how many stay queued on each server is a race, but in the end the
   * fleet limit is taken, and every request is at work, queued or rejected.
   */
  @Test
  void queued_theFleetLimitHoldsAcrossTwoServers_theQueuedServedAfterTheRelease() throws Exception {
    int maxQueue = 8;
    startFleet(mode -> mode.queue(maxQueue, Duration.ofMinutes(2)));
    List<CompletableFuture<HttpResponse<String>>> held = spread(HELD_REQUESTS);
    awaitTrue(
        () ->
            sum(c -> c.inFlight()) == FLEET_LIMIT
                && sum(c -> c.inFlight() + c.queued() + c.stats().rejectedTotal()) == HELD_REQUESTS,
        "the fleet limit admitted, the others queued or rejected",
        () -> controls);
    controls.forEach(c -> assertTrue(c.queued() <= maxQueue, c::toString));
    releaseAndChurn(held, FLEET_LIMIT + (int) sum(c -> c.queued()), "QUEUE_FULL");
  }

  /**
   * Issue 29, as the attack ran it: queued (20, 2 s), answered with 429, and Redis dead. Every
   * request is answered 503 UNAVAILABLE, promptly (a maxWait of 20 s would otherwise show as
   * QUEUE_TIMEOUT), with a Retry-After, and counted.
   */
  @Test
  void aDeadRedisIsAnswered503UnavailableInQueuedModeDespite429() throws Exception {
    startFleet(mode -> mode.queue(20, Duration.ofSeconds(20)).rejectionStatus(429));
    release.countDown();
    assertOnlyOkOrRejected(joinAll(spread(4)), 429); // it works
    redis.kill();
    List<HttpResponse<String>> responses = joinAll(spread(20));
    responses.forEach(r -> assertRejected(r, 503, "UNAVAILABLE"));
    assertEquals(20, sum(c -> c.stats().rejected(Reason.UNAVAILABLE)));
    assertEquals(0, sum(c -> c.stats().rejected(Reason.QUEUE_TIMEOUT)));
  }
}
