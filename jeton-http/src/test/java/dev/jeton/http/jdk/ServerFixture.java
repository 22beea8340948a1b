package dev.jeton.http.jdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the end-to-end tests of the filter share: a real JDK {@code HttpServer} on a loopback port
 * whose "/" is counted while at work, the JDK's {@code HttpClient}, the checks of a well-formed
 * rejection, and waiting for a condition (its deadline only a hang guard, never an assertion of
 * timing).
 */
final class ServerFixture implements AutoCloseable {
  private static final long GUARD_NANOS = TimeUnit.SECONDS.toNanos(60);
  private static final long MAX_RETRY_AFTER_SECONDS = 30; // the default cap

  /** The requests inside handlers now, and the most at once; servers may share one. */
  static final class Gauge {
    private final AtomicInteger now = new AtomicInteger();
    private final AtomicInteger most = new AtomicInteger();

    void enter() {
      most.accumulateAndGet(now.incrementAndGet(), Math::max);
    }

    void exit() {
      now.decrementAndGet();
    }

    int now() {
      return now.get();
    }

    int most() {
      return most.get();
    }
  }

  final Gauge atWork;
  private final ExecutorService serverThreads = Executors.newFixedThreadPool(64);
  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private HttpServer server;

  ServerFixture() {
    this(new Gauge());
  }

  ServerFixture(Gauge atWork) {
    this.atWork = atWork;
  }

  /** Starts the server: "/" runs {@code work} under the filter, and "/health" answers "ok". */
  URI start(AdmissionFilter filter, HttpHandler work) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    server.setExecutor(serverThreads);
    server
        .createContext(
            "/",
            exchange -> {
              atWork.enter();
              try {
                work.handle(exchange);
              } finally {
                atWork.exit();
              }
            })
        .getFilters()
        .add(filter);
    server
        .createContext("/health", exchange -> respond(exchange, 200, "ok"))
        .getFilters()
        .add(filter);
    server.start();
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
  }

  @Override
  public void close() {
    if (server != null) {
      server.stop(0);
    }
    serverThreads.shutdownNow();
  }

  /** Sends a GET with {@code headers} (name, value, name, value...). */
  CompletableFuture<HttpResponse<String>> get(URI uri, String... headers) {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri);
    if (headers.length > 0) {
      request.headers(headers);
    }
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Fires {@code n} requests at once; returns the responses. */
  List<HttpResponse<String>> fire(URI uri, int n) {
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sent.add(get(uri));
    }
    return joinAll(sent);
  }

  static List<HttpResponse<String>> joinAll(List<CompletableFuture<HttpResponse<String>>> sent) {
    List<HttpResponse<String>> responses = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> f : sent) {
      responses.add(f.join());
    }
    return responses;
  }

  static void respond(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  /** Work long enough that requests overlap. */
  static HttpHandler working() {
    return exchange -> {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      respond(exchange, 200, "done");
    };
  }

  /** Work that holds its request until {@code release} is counted down, then does as working. */
  static HttpHandler heldUntil(CountDownLatch release) {
    HttpHandler work = working();
    return exchange -> {
      awaitLatch(release);
      work.handle(exchange);
    };
  }

  /**
   * Asserts that every response is a 200 or a well-formed rejection with {@code rejectStatus}, and
   * that at least one is a 200; returns how many are.
   */
  static int assertOnlyOkOrRejected(List<HttpResponse<String>> responses, int rejectStatus) {
    int ok = 0;
    for (HttpResponse<String> r : responses) {
      if (r.statusCode() == 200) {
        ok++;
      } else {
        assertRejected(r, rejectStatus, "LIMIT_REACHED", "QUEUE_FULL", "QUEUE_TIMEOUT");
      }
    }
    assertTrue(ok >= 1, "nothing admitted");
    return ok;
  }

  /**
   * Asserts that {@code r} is a rejection with {@code status}, a Retry-After of whole seconds in
   * [1, 30], a plain-text body naming one of {@code reasons}.
   */
  static void assertRejected(HttpResponse<String> r, int status, String... reasons) {
    assertEquals(status, r.statusCode(), r::body);
    String header =
        r.headers()
            .firstValue("Retry-After")
            .orElseThrow(() -> new AssertionError("no Retry-After"));
    long retryAfter = Long.parseLong(header);
    assertTrue(retryAfter >= 1 && retryAfter <= MAX_RETRY_AFTER_SECONDS, "Retry-After " + header);
    assertTrue(r.headers().firstValue("Content-Type").orElseThrow().startsWith("text/plain"));
    for (String reason : reasons) {
      if (r.body().contains("(" + reason + ")")) {
        return;
      }
    }
    fail("not a rejection for " + List.of(reasons) + ": " + r.body());
  }

  static void awaitTrue(BooleanSupplier condition, String what) {
    awaitTrue(condition, what, () -> "");
  }

  /** As {@link #awaitTrue(BooleanSupplier, String)}; a failure adds {@code state} now. */
  static void awaitTrue(BooleanSupplier condition, String what, Supplier<?> state) {
    long deadline = System.nanoTime() + GUARD_NANOS;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        fail("never happened: " + what + "; " + state.get());
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // leaves a loaded machine's cores be
    }
  }

  static void awaitLatch(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("never released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
