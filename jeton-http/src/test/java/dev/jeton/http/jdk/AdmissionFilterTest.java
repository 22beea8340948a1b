package dev.jeton.http.jdk;

import static dev.jeton.http.jdk.ServerFixture.assertOnlyOkOrRejected;
import static dev.jeton.http.jdk.ServerFixture.awaitTrue;
import static dev.jeton.http.jdk.ServerFixture.heldUntil;
import static dev.jeton.http.jdk.ServerFixture.respond;
import static dev.jeton.http.jdk.ServerFixture.working;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.FailingSemaphore;
import dev.jeton.http.Reason;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The filter in a real JDK {@code HttpServer} on port 0, driven by the JDK's {@code HttpClient}:
 * the limit holds under many concurrent requests (counted inside the handler), rejections are well
 * formed, nothing leaks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard only
class AdmissionFilterTest {
  private final ServerFixture fixture = new ServerFixture();

  @AfterEach
  void stop() {
    fixture.close();
  }

  @Test
  void bestEffort_200ConcurrentRequestsWithLimit8() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(8).build();
    URI uri = fixture.start(new AdmissionFilter(control), working());
    List<HttpResponse<String>> responses = fixture.fire(uri, 200);
    assertTrue(fixture.atWork.most() <= 8, fixture.atWork.most() + " at work at once");
    assertOnlyOkOrRejected(responses, 503);
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0"); // the ticket closes after
    assertEquals(200, control.stats().admitted() + control.stats().rejectedTotal());
  }

  @Test
  void queued_200ConcurrentRequestsWithLimit8() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(8).queue(16, Duration.ofMillis(50)).build();
    URI uri = fixture.start(new AdmissionFilter(control), working());
    List<HttpResponse<String>> responses = fixture.fire(uri, 200);
    assertTrue(fixture.atWork.most() <= 8, fixture.atWork.most() + " at work at once");
    assertOnlyOkOrRejected(responses, 503);
    awaitTrue(() -> control.inFlight() == 0 && control.queued() == 0, "nothing left");
  }

  @Test
  void rejectionsCanBe429() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(2).rejectionStatus(429).build();
    URI uri = fixture.start(new AdmissionFilter(control), working());
    assertOnlyOkOrRejected(fixture.fire(uri, 100), 429);
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }

  @Test
  void aHandlerThatThrowsGivesItsTicketBack() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(1).build();
    AtomicInteger calls = new AtomicInteger();
    URI uri =
        fixture.start(
            new AdmissionFilter(control),
            exchange -> {
              if (calls.getAndIncrement() == 0) {
                throw new IllegalStateException("handler bug");
              }
              respond(exchange, 200, "fine");
            });
    try {
      fixture.get(uri).join(); // the server drops the connection: the client fails or sees an error
    } catch (RuntimeException expected) {
      // the connection was closed without a response
    }
    awaitTrue(() -> control.inFlight() == 0, "the failed request's ticket back");
    assertEquals(200, fixture.get(uri).join().statusCode());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }

  @Test
  void exemptPathsPassWhenFull() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder()
            .limit(1)
            .exempt(exchange -> exchange.getRequestURI().getPath().equals("/health"))
            .build();
    CountDownLatch release = new CountDownLatch(1);
    URI uri = fixture.start(new AdmissionFilter(control), heldUntil(release));
    CompletableFuture<HttpResponse<String>> holding = fixture.get(uri);
    awaitTrue(() -> fixture.atWork.now() == 1, "the first request at work");
    assertEquals(503, fixture.get(uri).join().statusCode());
    HttpResponse<String> health = fixture.get(uri.resolve("/health")).join();
    assertEquals(200, health.statusCode());
    assertEquals("ok", health.body());
    release.countDown();
    assertEquals(200, holding.join().statusCode());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }

  @Test
  void queuedModeAdmitsAfterARelease() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(1).queue(4, Duration.ofMinutes(1)).build();
    CountDownLatch release = new CountDownLatch(1);
    URI uri = fixture.start(new AdmissionFilter(control), heldUntil(release));
    CompletableFuture<HttpResponse<String>> first = fixture.get(uri);
    awaitTrue(() -> fixture.atWork.now() == 1, "the first request at work");
    CompletableFuture<HttpResponse<String>> second = fixture.get(uri);
    awaitTrue(() -> control.queued() == 1, "the second request queued");
    release.countDown();
    assertEquals(200, first.join().statusCode());
    assertEquals(200, second.join().statusCode());
    assertEquals(1, fixture.atWork.most());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
    assertEquals(1, control.stats().dequeued());
  }

  /**
   * Regression: a semaphore that threw (a remote one out of reach) escaped the filter, and the JDK
   * server dropped the connection without an answer (a servlet container answers 500).
   */
  @Test
  void aSemaphoreThatFailsIsAnswered503WithRetryAfter() throws Exception {
    FailingSemaphore semaphore = new FailingSemaphore(4);
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().semaphore(semaphore).build();
    URI uri =
        fixture.start(new AdmissionFilter(control), exchange -> respond(exchange, 200, "done"));
    semaphore.failWith(new FailingSemaphore.Unreachable("connection refused"));
    HttpResponse<String> rejected = fixture.get(uri).join();
    assertEquals(503, rejected.statusCode(), rejected::body);
    assertEquals("1", rejected.headers().firstValue("Retry-After").orElseThrow());
    assertTrue(rejected.body().contains("UNAVAILABLE"), rejected::body);
    semaphore.failWith(null);
    assertEquals(200, fixture.get(uri).join().statusCode());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }

  @Test
  void aCustomRejectionHandlerWritesItsOwnResponse() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(1).build();
    CountDownLatch release = new CountDownLatch(1);
    AdmissionFilter filter =
        new AdmissionFilter(
            control,
            (exchange, rejection) -> {
              String retryAfter = Long.toString(rejection.retryAfterSeconds());
              exchange.getResponseHeaders().set("Retry-After", retryAfter);
              respond(exchange, rejection.status(), "{\"error\":\"" + rejection.reason() + "\"}");
            });
    URI uri = fixture.start(filter, heldUntil(release));
    CompletableFuture<HttpResponse<String>> holding = fixture.get(uri);
    awaitTrue(() -> fixture.atWork.now() == 1, "the first request at work");
    HttpResponse<String> rejected = fixture.get(uri).join();
    assertEquals(503, rejected.statusCode());
    assertEquals("{\"error\":\"" + Reason.LIMIT_REACHED + "\"}", rejected.body());
    release.countDown();
    assertEquals(200, holding.join().statusCode());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }
}
