package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.jeton.AdaptiveLimit;
import dev.jeton.KeyedRateLimiter;
import dev.jeton.Semaphore;
import dev.jeton.http.jdk.AdmissionFilter;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The README's "Admission control for HTTP servers" examples, as written there. */
class ReadmeExamplesTest {
  private final HttpHandler handler = exchange -> exchange.sendResponseHeaders(204, -1);
  private final Semaphore sharedSemaphore = Semaphore.create(4);
  private int status;
  private long retryAfter;

  /** A request of some other server. */
  record Request(String path) {}

  private void respond(int status, long retryAfterSeconds, String body) {
    this.status = status;
    this.retryAfter = retryAfterSeconds;
  }

  private void handle(Request request) {
    status = 200;
  }

  @Test
  void jdkHttpServer() throws IOException {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder()
            .limit(64)
            .exempt(exchange -> exchange.getRequestURI().getPath().equals("/health"))
            .build();
    // The README binds port 8080; here, any free port.
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", handler).getFilters().add(new AdmissionFilter(control));
    server.start();
    server.stop(0);
  }

  private void neutral(AdmissionControl<Request> control, Request request)
      throws InterruptedException {
    Decision decision = control.admit(request); // waits if queued; admitAsync never blocks
    if (decision instanceof Rejection r) {
      respond(r.status(), r.retryAfterSeconds(), r.message()); // set the Retry-After header
    } else {
      try (Ticket ticket = (Ticket) decision) {
        handle(request);
      }
    }
  }

  @Test
  void anyOtherServer() throws InterruptedException {
    AdmissionControl<Request> control = AdmissionControl.<Request>builder().limit(1).build();
    neutral(control, new Request("/a"));
    assertEquals(200, status);
    Ticket held = assertInstanceOf(Ticket.class, control.admit(new Request("/b")));
    neutral(control, new Request("/c"));
    assertEquals(503, status);
    assertEquals(1, retryAfter);
    held.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void modes() {
    // queued: wait at most 200 ms among at most 100 waiting, premium requests first
    AdmissionControl<HttpExchange> queued =
        AdmissionControl.<HttpExchange>builder()
            .limit(64)
            .queue(100, Duration.ofMillis(200))
            .priority(
                exchange -> exchange.getRequestHeaders().containsKey("X-Premium") ? 1 : 0,
                Duration.ofSeconds(1))
            .build();

    // partitions: at most 8 per client address, 64 in all, answered with 429
    AdmissionControl<HttpExchange> perClient =
        AdmissionControl.<HttpExchange>builder()
            .partitionBy(exchange -> exchange.getRemoteAddress().getAddress(), 8)
            .limit(64)
            .rejectionStatus(429)
            .build();

    // fleet-wide: any Semaphore, such as a RedisSemaphore, backs the limit; a request waits
    // at most 250 ms for it to answer, else 503 UNAVAILABLE
    AdmissionControl<HttpExchange> fleet =
        AdmissionControl.<HttpExchange>builder()
            .semaphore(sharedSemaphore)
            .semaphoreTimeout(Duration.ofMillis(250))
            .build();

    // adaptive: the limit follows latency (AdaptiveLimit, in jeton-core), from 8 to 256
    AdmissionControl<HttpExchange> adaptive =
        AdmissionControl.<HttpExchange>builder()
            .adaptive(
                AdaptiveLimit.builder()
                    .initialLimit(32)
                    .minLimit(8)
                    .maxLimit(256)
                    .build(Semaphore.create(32)))
            .build();

    assertEquals(0, queued.queued() + perClient.queued() + fleet.inFlight() + adaptive.inFlight());
  }

  /**
   * The rate per client, as written there, behind the JDK server's filter: the burst of 20 passes,
   * with the headers, and then a request is answered 429 with Retry-After and both headers (one
   * more passes within 0.6 s, so Retry-After is 1, and t with it).
   */
  @Test
  void aRatePerClient() throws Exception {
    // 100 requests a minute per client address, 20 at once after a pause; then at most 64 at work
    KeyedRateLimiter<InetAddress> perClient =
        KeyedRateLimiter.<InetAddress>builder().rate(100, Duration.ofMinutes(1)).burst(20).build();
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder()
            .rateLimit(exchange -> exchange.getRemoteAddress().getAddress(), perClient)
            .rateLimitHeaders("per-client", true) // on admitted responses too, not only on a 429
            .limit(64)
            .build();

    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", handler).getFilters().add(new AdmissionFilter(control));
    server.start();
    try {
      HttpClient client = HttpClient.newHttpClient();
      InetSocketAddress at = server.getAddress();
      URI uri = URI.create("http://" + at.getHostString() + ":" + at.getPort() + "/");
      HttpRequest request = HttpRequest.newBuilder(uri).build();
      // At least the burst passes, more if the test is slow enough for the rate to refill.
      int passed = 0;
      HttpResponse<String> limited = client.send(request, HttpResponse.BodyHandlers.ofString());
      while (limited.statusCode() == 204 && passed < 1_000) {
        passed++;
        String rateLimit = limited.headers().firstValue("RateLimit").orElseThrow();
        assertTrue(rateLimit.matches("\"per-client\";r=\\d+;t=\\d+"), rateLimit);
        limited = client.send(request, HttpResponse.BodyHandlers.ofString());
      }
      assertTrue(passed >= 20, passed + " passed");
      assertEquals(429, limited.statusCode());
      assertEquals(Optional.of("1"), limited.headers().firstValue("Retry-After"));
      assertEquals(
          Optional.of("\"per-client\";q=100;w=60"),
          limited.headers().firstValue("RateLimit-Policy"));
      assertEquals(
          Optional.of("\"per-client\";r=0;t=1"), limited.headers().firstValue("RateLimit"));
    } finally {
      server.stop(0);
    }
  }
}
