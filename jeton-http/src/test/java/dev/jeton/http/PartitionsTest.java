package dev.jeton.http;

import static dev.jeton.http.Decided.rejected;
import static dev.jeton.http.Decided.ticket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PartitionsTest {
  /** A request: a tenant and a number. */
  record Req(String tenant, int n) {}

  @Test
  void eachKeyHasItsOwnLimit() throws InterruptedException {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder().partitionBy(Req::tenant, 1).build();
    Ticket a = assertInstanceOf(Ticket.class, control.admit(new Req("a", 1)));
    Ticket b = assertInstanceOf(Ticket.class, control.admit(new Req("b", 1)));
    assertEquals(
        Reason.LIMIT_REACHED,
        assertInstanceOf(Rejection.class, control.admit(new Req("a", 2))).reason());
    assertEquals(2, control.inFlight());
    a.close();
    b.close();
    assertInstanceOf(Ticket.class, control.admit(new Req("a", 3))).close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void theGlobalLimitBoundsAllKeys() throws InterruptedException {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder().partitionBy(Req::tenant, 2).limit(3).build();
    Ticket a1 = assertInstanceOf(Ticket.class, control.admit(new Req("a", 1)));
    Ticket a2 = assertInstanceOf(Ticket.class, control.admit(new Req("a", 2)));
    Ticket b1 = assertInstanceOf(Ticket.class, control.admit(new Req("b", 1)));
    assertInstanceOf(Rejection.class, control.admit(new Req("c", 1)));
    a1.close();
    a2.close();
    b1.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void queuedPartitionsWaitPerKeyWithAQueueEach() {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder()
            .partitionBy(Req::tenant, 1)
            .queue(1, Duration.ofMinutes(10))
            .build();
    Ticket a = ticket(control.admitAsync(new Req("a", 1)));
    CompletableFuture<Decision> a2 = control.admitAsync(new Req("a", 2));
    assertEquals(Reason.QUEUE_FULL, rejected(control.admitAsync(new Req("a", 3))));
    Ticket b = ticket(control.admitAsync(new Req("b", 1))); // another key is not held up
    CompletableFuture<Decision> b2 = control.admitAsync(new Req("b", 2));
    assertEquals(2, control.queued());
    assertFalse(a2.isDone());
    a.close();
    ticket(a2).close();
    assertTrue(b2.cancel(false));
    assertEquals(0, control.queued());
    b.close();
    assertEquals(0, control.inFlight());
  }

  /**
   * Regression: each key had a queue of {@code maxQueue} and nothing bounded their sum, while the
   * keys come from the client (a header): as many keys, as many queues.
   */
  @Test
  void theQueuesOfAllKeysHoldSixteenTimesMaxQueueByDefault() {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder()
            .partitionBy(Req::tenant, 1)
            .queue(2, Duration.ofMinutes(10))
            .build();
    List<Ticket> tickets = new ArrayList<>();
    List<CompletableFuture<Decision>> waiting = new ArrayList<>();
    for (int key = 0; key < 16; key++) {
      tickets.add(ticket(control.admitAsync(new Req("k" + key, 0))));
      waiting.add(control.admitAsync(new Req("k" + key, 1)));
      waiting.add(control.admitAsync(new Req("k" + key, 2)));
    }
    assertEquals(32, control.queued());
    tickets.add(ticket(control.admitAsync(new Req("k16", 0))));
    assertEquals(Reason.QUEUE_FULL, rejected(control.admitAsync(new Req("k16", 1))));
    assertEquals(32, control.queued());
    waiting.forEach(f -> assertTrue(f.cancel(false)));
    tickets.forEach(Ticket::close);
    assertEquals(0, control.queued());
    assertEquals(0, control.inFlight());
  }

  @Test
  void maxQueuedTotalBoundsTheQueuesOfAllKeysTogether() {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder()
            .partitionBy(Req::tenant, 1)
            .queue(2, Duration.ofMinutes(10))
            .maxQueuedTotal(3)
            .build();
    Ticket a = ticket(control.admitAsync(new Req("a", 0)));
    Ticket b = ticket(control.admitAsync(new Req("b", 0)));
    CompletableFuture<Decision> a1 = control.admitAsync(new Req("a", 1));
    CompletableFuture<Decision> a2 = control.admitAsync(new Req("a", 2));
    CompletableFuture<Decision> b1 = control.admitAsync(new Req("b", 1));
    assertEquals(Reason.QUEUE_FULL, rejected(control.admitAsync(new Req("b", 2))));
    assertEquals(3, control.queued());
    a.close(); // a1 is admitted: its place is free for b
    Ticket ta1 = ticket(a1);
    CompletableFuture<Decision> b2 = control.admitAsync(new Req("b", 2));
    assertFalse(b2.isDone());
    ta1.close();
    ticket(a2).close();
    b.close();
    ticket(b1).close();
    ticket(b2).close();
    assertEquals(0, control.queued());
    assertEquals(0, control.inFlight());
  }

  @Test
  void maxQueuedTotalNeedsPartitionsAndAQueue() {
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () -> AdmissionControl.<Req>builder().maxQueuedTotal(0));
    assertTrue(e.getMessage().contains("maxQueuedTotal must be at least 1, was 0"), e::getMessage);
    var noQueue =
        assertThrows(
            IllegalStateException.class,
            () ->
                AdmissionControl.<Req>builder()
                    .partitionBy(Req::tenant, 1)
                    .maxQueuedTotal(5)
                    .build());
    assertTrue(noQueue.getMessage().contains("maxQueuedTotal(n) bounds"), noQueue::getMessage);
    assertThrows(
        IllegalStateException.class,
        () ->
            AdmissionControl.<Req>builder()
                .limit(1)
                .queue(1, Duration.ofSeconds(1))
                .maxQueuedTotal(5)
                .build());
  }

  /** {@code keys} distinct keys, each with a ticket and one request queued behind it. */
  private record Crowd(
      AdmissionControl<Req> control,
      Partitions partitions,
      List<Ticket> tickets,
      List<CompletableFuture<Decision>> waiting) {

    static Crowd of(int keys, Duration maxWait) {
      AdmissionControl<Req> control =
          AdmissionControl.<Req>builder()
              .partitionBy(Req::tenant, 1)
              .queue(1, maxWait)
              .maxQueuedTotal(keys)
              .build();
      Crowd crowd =
          new Crowd(
              control,
              Objects.requireNonNull(control.partitions()),
              new ArrayList<>(),
              new ArrayList<>());
      for (int key = 0; key < keys; key++) {
        crowd.tickets.add(ticket(control.admitAsync(new Req("k" + key, 0))));
        crowd.waiting.add(control.admitAsync(new Req("k" + key, 1)));
      }
      return crowd;
    }

    void assertNoKeyLeft() {
      assertEquals(0, control.queued());
      assertEquals(0, partitions.keysWaiting(), "no key's count is left behind");
      assertEquals(0, partitions.keysHeld(), "no key's semaphore is left behind");
    }
  }

  @Test
  void manyDistinctKeysLeaveNoStateOnceTheirRequestsAreDone() {
    int keys = 3_000;
    Crowd crowd = Crowd.of(keys, Duration.ofMinutes(10));
    assertEquals(keys, crowd.partitions().keysWaiting());
    assertEquals(keys, crowd.partitions().keysHeld());
    for (int key = 0; key < keys; key++) {
      if (key % 2 == 0) {
        assertTrue(crowd.waiting().get(key).cancel(false)); // withdrawn
        crowd.tickets().get(key).close();
      } else {
        crowd.tickets().get(key).close(); // the waiter is admitted
        ticket(crowd.waiting().get(key)).close();
      }
    }
    crowd.assertNoKeyLeft();
  }

  @Test
  void keysWhoseRequestsTimedOutLeaveNoState() {
    Crowd crowd = Crowd.of(200, Duration.ofMillis(1));
    for (CompletableFuture<Decision> f : crowd.waiting()) {
      assertEquals(Reason.QUEUE_TIMEOUT, assertInstanceOf(Rejection.class, f.join()).reason());
    }
    crowd.tickets().forEach(Ticket::close);
    crowd.assertNoKeyLeft();
  }

  @Test
  void aPartitionedWaiterTimesOutAndCloseRejectsTheRest() {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder()
            .partitionBy(Req::tenant, 1)
            .queue(5, Duration.ofMillis(20))
            .build();
    Ticket a = ticket(control.admitAsync(new Req("a", 1)));
    assertEquals(
        Reason.QUEUE_TIMEOUT,
        assertInstanceOf(Rejection.class, control.admitAsync(new Req("a", 2)).join()).reason());
    control.close();
    assertEquals(Reason.CLOSED, rejected(control.admitAsync(new Req("a", 3))));
    a.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void aNullKeyIsRefusedClearly() {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder().partitionBy(r -> null, 1).build();
    var e = assertThrows(NullPointerException.class, () -> control.admit(new Req("a", 1)));
    assertTrue(e.getMessage().contains("partitionBy key function returned null"));
  }
}
