package dev.jeton.http.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.KeyedRateLimiter;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Reason;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rate limit per client in front of a concurrency limit of 1, in embedded Jetty 12 with the JDK's
 * HttpClient: 429 with Retry-After and both RateLimit headers as a client reads them, the headers
 * on admitted responses, and a request that passes the rate but not the concurrency limit (a 503
 * that costs its client nothing). One permit an hour per client with a burst of 2, so that nothing
 * refills while the test runs.
 */
class RateLimitOverJettyTest {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final String POLICY = "\"default\";q=1;w=3600";

  private final TestApp app = new TestApp();
  private final KeyedRateLimiter<String> perClient =
      KeyedRateLimiter.<String>builder().rate(1, Duration.ofHours(1)).burst(2).build();
  private final AdmissionControl<HttpServletRequest> control =
      AdmissionControl.<HttpServletRequest>builder()
          .limit(1)
          .rateLimit(request -> request.getParameter("client"), perClient)
          .rateLimitHeaders("default", true)
          .build();
  private final ServletServer server;

  RateLimitOverJettyTest() throws Exception {
    server =
        ServletServer.Kind.JETTY.start(
            app.servlet, List.<Filter>of(app.probe, new AdmissionFilter(control)));
  }

  @AfterEach
  void stop() throws Exception {
    app.gate.countDown();
    server.close();
    TestApp.awaitTrue(() -> control.inFlight() == 0, "in flight back to zero");
    control.close();
  }

  @Test
  void overItsRate_aClientGets429_RetryAfter_andBothHeaders() throws Exception {
    assertAdmitted(get("/work?short&client=a"), "\"default\";r=1;t=3600");
    assertAdmitted(
        get("/work?short&client=a"), "\"default\";r=0;t=7200"); // whole again in two hours

    HttpResponse<String> limited = get("/work?short&client=a");
    assertEquals(429, limited.statusCode());
    String retryAfter = header(limited, "Retry-After").orElseThrow();
    assertEquals("3600", retryAfter, "one more in an hour, less the test's own nanoseconds");
    assertEquals(Optional.of(POLICY), header(limited, "RateLimit-Policy"));
    assertEquals(
        Optional.of("\"default\";r=0;t=" + retryAfter),
        header(limited, "RateLimit"),
        "t names the moment Retry-After does");
    assertTrue(limited.body().contains(Reason.RATE_LIMITED.name()), limited.body());
    assertEquals(1, control.stats().rejected(Reason.RATE_LIMITED));

    assertAdmitted(get("/work?short&client=b"), "\"default\";r=1;t=3600");
  }

  @Test
  void passingTheRateButNotTheConcurrencyLimit_a503ThatCostsTheClientNothing() throws Exception {
    CompletableFuture<HttpResponse<String>> held =
        CLIENT.sendAsync(request("/work?client=b"), HttpResponse.BodyHandlers.ofString());
    TestApp.awaitTrue(() -> app.atWork.get() == 1, "one request at work");

    HttpResponse<String> busy = get("/work?short&client=c");
    assertEquals(503, busy.statusCode(), busy::body);
    Responses.checkRejection(busy, Reason.LIMIT_REACHED);
    assertEquals(Optional.empty(), header(busy, "RateLimit"), "not the rate limit's rejection");

    app.gate.countDown();
    assertEquals(200, held.get(TestApp.GUARD_SECONDS, TimeUnit.SECONDS).statusCode());
    TestApp.awaitTrue(() -> control.inFlight() == 0, "the held request done");
    // c's weight came back: its whole burst of 2 is there
    assertAdmitted(get("/work?short&client=c"), "\"default\";r=1;t=3600");
    assertAdmitted(
        get("/work?short&client=c"), "\"default\";r=0;t=7200"); // whole again in two hours
    assertEquals(429, get("/work?short&client=c").statusCode());
  }

  private static void assertAdmitted(HttpResponse<String> response, String rateLimit) {
    assertEquals(200, response.statusCode(), response::body);
    assertEquals("ok", response.body());
    assertEquals(Optional.of(POLICY), header(response, "RateLimit-Policy"));
    assertEquals(Optional.of(rateLimit), header(response, "RateLimit"));
  }

  private static Optional<String> header(HttpResponse<String> response, String name) {
    return response.headers().firstValue(name);
  }

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(server.uri(path)).build();
  }

  private HttpResponse<String> get(String path) throws Exception {
    return CLIENT
        .sendAsync(request(path), HttpResponse.BodyHandlers.ofString())
        .get(TestApp.GUARD_SECONDS, TimeUnit.SECONDS);
  }
}
