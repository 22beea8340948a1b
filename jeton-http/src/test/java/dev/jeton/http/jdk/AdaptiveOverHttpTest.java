package dev.jeton.http.jdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpServer;
import dev.jeton.AdaptiveLimit;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.http.AdmissionControl;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The adaptive limit end to end, as issue 14 asks: a JDK {@code HttpServer} whose endpoint does 20
 * ms of work and can do {@code capacity} at once (a FIFO semaphore inside the handler stands for a
 * pool; beyond it requests wait inside the server, so latency grows), behind the filter with an
 * {@link AdaptiveLimit} from 4 up to 256, and closed-loop clients of the JDK {@code HttpClient}
 * that always want more than the capacity. The capacity is 32, then 8, then 32 again: in each phase
 * the limit settles near it and then stays near it.
 *
 * <p>Event-driven: each phase waits until the limit has come within [C/2, 2C] (a deadline only as a
 * hang guard), then takes 40 readings of it, one every 25 completed requests (about a window of
 * samples each), and asserts what the stress test of {@code AdaptiveLimit} asserts on a loaded
 * machine: the median within [C/2, 2C] and three quarters of the readings too (a stall of the
 * machine is latency as well, and dips the limit for a window or two). Every answer is a 200 or a
 * 503 with a Retry-After; nothing is left in flight at the end.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS) // a hang guard only
class AdaptiveOverHttpTest {
  private static final long GUARD_NANOS = TimeUnit.SECONDS.toNanos(120);
  private static final int CLIENTS = 80;
  private static final int READINGS = 40;

  private final ExecutorService serverThreads = Executors.newCachedThreadPool();
  private final ExecutorService clientThreads = Executors.newFixedThreadPool(CLIENTS);
  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicLong completed = new AtomicLong();
  private final ConcurrentHashMap<String, AtomicInteger> unexpected = new ConcurrentHashMap<>();
  private HttpServer server;

  @AfterEach
  void stop() throws InterruptedException {
    stopping.set(true);
    clientThreads.shutdown();
    clientThreads.awaitTermination(60, TimeUnit.SECONDS);
    if (server != null) {
      server.stop(0);
    }
    serverThreads.shutdownNow();
  }

  @Test
  void theLimitSettlesNearTheCapacity_andFollowsItFrom32To8AndBack() throws Exception {
    Semaphore workers = Semaphore.create(32); // the server's capacity; setLimit changes it
    AdaptiveLimit adaptive =
        AdaptiveLimit.builder()
            .initialLimit(4)
            .minLimit(4)
            .maxLimit(256)
            .build(Semaphore.create(4));
    AdmissionControl<com.sun.net.httpserver.HttpExchange> control =
        AdmissionControl.<com.sun.net.httpserver.HttpExchange>builder().adaptive(adaptive).build();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    server.setExecutor(serverThreads);
    server
        .createContext(
            "/",
            exchange -> {
              try (Permit worker = workers.acquire(1)) {
                TimeUnit.MILLISECONDS.sleep(20);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              exchange.sendResponseHeaders(200, 3);
              try (OutputStream out = exchange.getResponseBody()) {
                out.write("ok\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
              }
            })
        .getFilters()
        .add(new AdmissionFilter(control));
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
    for (int i = 0; i < CLIENTS; i++) {
      clientThreads.execute(() -> loop(uri));
    }

    for (int capacity : new int[] {32, 8, 32}) {
      workers.setLimit(capacity);
      int low = capacity / 2;
      int high = 2 * capacity;
      awaitTrue(
          () -> adaptive.limit() >= low && adaptive.limit() <= high,
          "the limit came within [" + low + ", " + high + "] of capacity " + capacity,
          adaptive);
      int[] readings = new int[READINGS];
      for (int i = 0; i < READINGS; i++) {
        long after = completed.get() + 25;
        awaitTrue(() -> completed.get() >= after, "25 more requests completed", adaptive);
        readings[i] = adaptive.limit();
      }
      int[] sorted = readings.clone();
      Arrays.sort(sorted);
      int within = 0;
      for (int r : readings) {
        within += r >= low && r <= high ? 1 : 0;
      }
      String seen = "capacity " + capacity + ": readings " + Arrays.toString(readings);
      assertTrue(sorted[READINGS / 2] >= low && sorted[READINGS / 2] <= high, "median; " + seen);
      assertTrue(within >= READINGS * 3 / 4, "three quarters within; " + seen);
    }

    stopping.set(true);
    clientThreads.shutdown();
    assertTrue(clientThreads.awaitTermination(60, TimeUnit.SECONDS), "the clients stopped");
    assertEquals(Map.of(), Map.copyOf(unexpected), "answers other than 200 or 503");
    awaitTrue(() -> control.inFlight() == 0, "nothing left in flight", adaptive);
    assertEquals(0, adaptive.inFlight(), "no sample left open");
  }

  /** One closed-loop client: a request, its answer, the next; 2 ms of pause after a rejection. */
  private void loop(URI uri) {
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).build();
    while (!stopping.get()) {
      String outcome;
      try {
        HttpResponse<Void> response = client.send(request, HttpResponse.BodyHandlers.discarding());
        int status = response.statusCode();
        if (status == 200) {
          completed.incrementAndGet();
          continue;
        }
        boolean retryAfter =
            response
                .headers()
                .firstValue("Retry-After")
                .filter(v -> v.matches("[1-9][0-9]*"))
                .isPresent();
        if (status == 503 && retryAfter) {
          TimeUnit.MILLISECONDS.sleep(2);
          continue;
        }
        outcome = "status " + status + (retryAfter ? "" : " without a valid Retry-After");
      } catch (IOException e) {
        outcome = e.getClass().getSimpleName();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      unexpected.computeIfAbsent(outcome, k -> new AtomicInteger()).incrementAndGet();
    }
  }

  private static void awaitTrue(
      java.util.function.BooleanSupplier condition, String what, AdaptiveLimit adaptive)
      throws InterruptedException {
    long deadline = System.nanoTime() + GUARD_NANOS;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        fail("never happened: " + what + " (" + adaptive + ")");
      }
      TimeUnit.MILLISECONDS.sleep(1);
    }
  }
}
