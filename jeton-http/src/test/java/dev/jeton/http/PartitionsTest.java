package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class PartitionsTest {
  /** A request: a tenant and a number. */
  record Req(String tenant, int n) {}

  private static Ticket ticket(CompletableFuture<Decision> f) {
    assertTrue(f.isDone(), "not decided yet");
    return assertInstanceOf(Ticket.class, f.join());
  }

  private static Reason rejected(CompletableFuture<Decision> f) {
    assertTrue(f.isDone(), "not decided yet");
    return assertInstanceOf(Rejection.class, f.join()).reason();
  }

  @Test
  void eachKeyHasItsOwnLimit() throws InterruptedException {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder().partitionBy(Req::tenant, 1).build();
    Ticket a = assertInstanceOf(Ticket.class, control.admit(new Req("a", 1)));
    Ticket b = assertInstanceOf(Ticket.class, control.admit(new Req("b", 1)));
    assertEquals(Reason.LIMIT_REACHED,
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

  @Test
  void aPartitionedWaiterTimesOutAndCloseRejectsTheRest() {
    AdmissionControl<Req> control =
        AdmissionControl.<Req>builder()
            .partitionBy(Req::tenant, 1)
            .queue(5, Duration.ofMillis(20))
            .build();
    Ticket a = ticket(control.admitAsync(new Req("a", 1)));
    assertEquals(Reason.QUEUE_TIMEOUT,
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
