package dev.jeton.http.jdk;

import static dev.jeton.http.jdk.ServerFixture.assertRejected;
import static dev.jeton.http.jdk.ServerFixture.awaitTrue;
import static dev.jeton.http.jdk.ServerFixture.heldUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.jeton.http.AdmissionControl;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The order in which the queue is served, end to end in a real JDK {@code HttpServer} driven by the
 * JDK's {@code HttpClient}: by priority (the {@code X-Priority} header) and newest first. A limit
 * of 1 is held by a first request on a latch while the others queue, one at a time (each sent once
 * the one before is counted in {@code queued()}, so their arrival order is known); after the
 * release, the handler records the order it saw them in ({@code X-Id}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard only
class QueueOrderOverHttpTest {
  private static final Duration LONG = Duration.ofHours(1); // waits and aging that never expire

  private final ServerFixture fixture = new ServerFixture();
  private final List<String> served = new CopyOnWriteArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);
  private final Map<String, CompletableFuture<HttpResponse<String>>> sent = new LinkedHashMap<>();
  private AdmissionControl<HttpExchange> control;
  private URI uri;

  @AfterEach
  void stop() {
    fixture.close();
  }

  private static AdmissionControl.Builder<HttpExchange> limit1(int maxQueue) {
    return AdmissionControl.<HttpExchange>builder().limit(1).queue(maxQueue, LONG);
  }

  /** Starts the server, and sends "held", which takes the only permit until {@link #release}. */
  private void startHeld(AdmissionControl<HttpExchange> admission) throws IOException {
    control = admission;
    HttpHandler held = heldUntil(release);
    uri =
        fixture.start(
            new AdmissionFilter(admission),
            exchange -> {
              served.add(exchange.getRequestHeaders().getFirst("X-Id"));
              held.handle(exchange);
            });
    send("held", 0);
    awaitTrue(() -> fixture.atWork.now() == 1, "the first request at work");
  }

  private CompletableFuture<HttpResponse<String>> send(String id, int priority) {
    CompletableFuture<HttpResponse<String>> response =
        fixture.get(uri, "X-Id", id, "X-Priority", Integer.toString(priority));
    sent.put(id, response);
    return response;
  }

  /** Sends {@code id}, and waits until the queue holds {@code queuedThen}. */
  private void queue(String id, int priority, int queuedThen) {
    send(id, priority);
    awaitTrue(() -> control.queued() == queuedThen, id + " queued", () -> control);
  }

  /** Releases the first request; asserts that the others admitted were served in {@code order}. */
  private void releaseAndExpect(String... order) {
    release.countDown();
    for (String id : order) {
      assertEquals(200, sent.get(id).join().statusCode(), id);
    }
    assertEquals(List.of(order), served);
    awaitTrue(
        () -> control.inFlight() == 0 && control.queued() == 0, "nothing left", () -> control);
  }

  private static int priorityOf(HttpExchange exchange) {
    return Integer.parseInt(exchange.getRequestHeaders().getFirst("X-Priority"));
  }

  @Test
  void priority_higherFirst_firstComeFirstServedWithinAPriority() throws Exception {
    startHeld(limit1(10).priority(QueueOrderOverHttpTest::priorityOf, LONG).build());
    queue("low-1", 0, 1);
    queue("high-1", 5, 2);
    queue("low-2", 0, 3);
    queue("high-2", 5, 4);
    queue("low-3", 0, 5);
    queue("high-3", 5, 6);
    releaseAndExpect("held", "high-1", "high-2", "high-3", "low-1", "low-2", "low-3");
  }

  @Test
  void priority_aNewcomerToAFullQueuePushesOutTheLowestRankedIfItRanksHigher() throws Exception {
    startHeld(limit1(2).priority(QueueOrderOverHttpTest::priorityOf, LONG).build());
    queue("low-1", 0, 1);
    queue("low-2", 0, 2);
    send("high", 5);
    assertRejected(sent.get("low-2").join(), 503, "QUEUE_FULL"); // the newer of the low ones
    assertRejected(send("low-3", 0).join(), 503, "QUEUE_FULL"); // ranks below all: refused
    releaseAndExpect("held", "high", "low-1");
  }

  @Test
  void lifo_newestFirst_aNewcomerToAFullQueuePushesOutTheOldest() throws Exception {
    startHeld(limit1(3).lifo().build());
    queue("1", 0, 1);
    queue("2", 0, 2);
    queue("3", 0, 3);
    send("4", 0);
    assertRejected(sent.get("1").join(), 503, "QUEUE_FULL");
    awaitTrue(() -> control.queued() == 3, "4 queued in place of 1", () -> control);
    releaseAndExpect("held", "4", "3", "2");
  }
}
