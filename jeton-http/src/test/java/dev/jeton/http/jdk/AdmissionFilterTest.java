package dev.jeton.http.jdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.FailingSemaphore;
import dev.jeton.http.Reason;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The filter in a real JDK {@code HttpServer} on port 0, driven by the JDK's {@code HttpClient}:
 * the limit holds under many concurrent requests (counted inside the handler), rejections are
 * well formed, nothing leaks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard only
class AdmissionFilterTest {
  private static final long GUARD_NANOS = TimeUnit.SECONDS.toNanos(60);

  private final ExecutorService serverThreads = Executors.newFixedThreadPool(64);
  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final AtomicInteger atWork = new AtomicInteger();
  private final AtomicInteger most = new AtomicInteger();
  private HttpServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
    serverThreads.shutdownNow();
  }

  /** Starts a server whose "/" runs {@code work} under the filter, and "/health" answers "ok". */
  private URI start(AdmissionFilter filter, HttpHandler work) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    server.setExecutor(serverThreads);
    server.createContext("/", exchange -> {
      int now = atWork.incrementAndGet();
      most.accumulateAndGet(now, Math::max);
      try {
        work.handle(exchange);
      } finally {
        atWork.decrementAndGet();
      }
    }).getFilters().add(filter);
    server.createContext("/health", exchange -> respond(exchange, 200, "ok"))
        .getFilters().add(filter);
    server.start();
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
  }

  private static void respond(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private CompletableFuture<HttpResponse<String>> get(URI uri) {
    return client.sendAsync(
        HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void awaitTrue(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + GUARD_NANOS;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        fail("never happened: " + what);
      }
      Thread.onSpinWait();
      Thread.yield();
    }
  }

  /** Fires {@code n} requests at once; returns the responses. */
  private List<HttpResponse<String>> fire(URI uri, int n) {
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sent.add(get(uri));
    }
    List<HttpResponse<String>> responses = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> f : sent) {
      responses.add(f.join());
    }
    return responses;
  }

  private void assertOnlyOkOrRejected(List<HttpResponse<String>> responses, int rejectStatus) {
    int ok = 0;
    for (HttpResponse<String> r : responses) {
      if (r.statusCode() == 200) {
        ok++;
        continue;
      }
      assertEquals(rejectStatus, r.statusCode(), r::body);
      long retryAfter =
          Long.parseLong(
              r.headers()
                  .firstValue("Retry-After")
                  .orElseThrow(() -> new AssertionError("no Retry-After")));
      assertTrue(retryAfter >= 1, "Retry-After " + retryAfter);
      assertTrue(r.headers().firstValue("Content-Type").orElseThrow().startsWith("text/plain"));
      assertTrue(r.body().contains("LIMIT_REACHED") || r.body().contains("QUEUE"), r::body);
    }
    assertTrue(ok >= 1, "nothing admitted");
  }

  private static HttpHandler working() {
    return exchange -> {
      try {
        Thread.sleep(5); // the work: long enough that requests overlap
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      respond(exchange, 200, "done");
    };
  }

  @Test
  void bestEffort_200ConcurrentRequestsWithLimit8() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(8).build();
    URI uri = start(new AdmissionFilter(control), working());
    List<HttpResponse<String>> responses = fire(uri, 200);
    assertTrue(most.get() <= 8, most.get() + " at work at once");
    assertOnlyOkOrRejected(responses, 503);
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0"); // the ticket closes after
    assertEquals(200, control.stats().admitted() + control.stats().rejectedTotal());
  }

  @Test
  void queued_200ConcurrentRequestsWithLimit8() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(8).queue(16, Duration.ofMillis(50)).build();
    URI uri = start(new AdmissionFilter(control), working());
    List<HttpResponse<String>> responses = fire(uri, 200);
    assertTrue(most.get() <= 8, most.get() + " at work at once");
    assertOnlyOkOrRejected(responses, 503);
    awaitTrue(() -> control.inFlight() == 0 && control.queued() == 0, "nothing left");
  }

  @Test
  void rejectionsCanBe429() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(2).rejectionStatus(429).build();
    URI uri = start(new AdmissionFilter(control), working());
    assertOnlyOkOrRejected(fire(uri, 100), 429);
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }

  @Test
  void aHandlerThatThrowsGivesItsTicketBack() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(1).build();
    AtomicInteger calls = new AtomicInteger();
    URI uri = start(new AdmissionFilter(control), exchange -> {
      if (calls.getAndIncrement() == 0) {
        throw new IllegalStateException("handler bug");
      }
      respond(exchange, 200, "fine");
    });
    try {
      get(uri).join(); // the server drops the connection: the client fails or sees an error
    } catch (RuntimeException expected) {
      // the connection was closed without a response
    }
    awaitTrue(() -> control.inFlight() == 0, "the failed request's ticket back");
    assertEquals(200, get(uri).join().statusCode());
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
    URI uri = start(new AdmissionFilter(control), exchange -> {
      awaitLatch(release);
      respond(exchange, 200, "done");
    });
    CompletableFuture<HttpResponse<String>> holding = get(uri);
    awaitTrue(() -> atWork.get() == 1, "the first request at work");
    assertEquals(503, get(uri).join().statusCode());
    HttpResponse<String> health = get(uri.resolve("/health")).join();
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
    URI uri = start(new AdmissionFilter(control), exchange -> {
      awaitLatch(release);
      respond(exchange, 200, "done");
    });
    CompletableFuture<HttpResponse<String>> first = get(uri);
    awaitTrue(() -> atWork.get() == 1, "the first request at work");
    CompletableFuture<HttpResponse<String>> second = get(uri);
    awaitTrue(() -> control.queued() == 1, "the second request queued");
    release.countDown();
    assertEquals(200, first.join().statusCode());
    assertEquals(200, second.join().statusCode());
    assertEquals(1, most.get());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
    assertEquals(1, control.stats().dequeued());
  }

  /**
   * Regression: a semaphore that threw (a remote one out of reach) escaped the filter, and the
   * JDK server dropped the connection without an answer (a servlet container answers 500).
   */
  @Test
  void aSemaphoreThatFailsIsAnswered503WithRetryAfter() throws Exception {
    FailingSemaphore semaphore = new FailingSemaphore(4);
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().semaphore(semaphore).build();
    URI uri = start(new AdmissionFilter(control), exchange -> respond(exchange, 200, "done"));
    semaphore.failWith(new FailingSemaphore.Unreachable("connection refused"));
    HttpResponse<String> rejected = get(uri).join();
    assertEquals(503, rejected.statusCode(), rejected::body);
    assertEquals("1", rejected.headers().firstValue("Retry-After").orElseThrow());
    assertTrue(rejected.body().contains("UNAVAILABLE"), rejected::body);
    semaphore.failWith(null);
    assertEquals(200, get(uri).join().statusCode());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }

  @Test
  void aCustomRejectionHandlerWritesItsOwnResponse() throws Exception {
    AdmissionControl<HttpExchange> control =
        AdmissionControl.<HttpExchange>builder().limit(1).build();
    CountDownLatch release = new CountDownLatch(1);
    AdmissionFilter filter = new AdmissionFilter(control, (exchange, rejection) -> {
      String retryAfter = Long.toString(rejection.retryAfterSeconds());
      exchange.getResponseHeaders().set("Retry-After", retryAfter);
      respond(exchange, rejection.status(), "{\"error\":\"" + rejection.reason() + "\"}");
    });
    URI uri = start(filter, exchange -> {
      awaitLatch(release);
      respond(exchange, 200, "done");
    });
    CompletableFuture<HttpResponse<String>> holding = get(uri);
    awaitTrue(() -> atWork.get() == 1, "the first request at work");
    HttpResponse<String> rejected = get(uri).join();
    assertEquals(503, rejected.statusCode());
    assertEquals("{\"error\":\"" + Reason.LIMIT_REACHED + "\"}", rejected.body());
    release.countDown();
    assertEquals(200, holding.join().statusCode());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to 0");
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("never released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
