package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.AdaptiveLimit;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** The admission control under an {@link AdaptiveLimit}: tickets are its samples. */
class AdaptiveAdmissionTest {

  private static AdaptiveLimit adaptive(int initial) {
    return AdaptiveLimit.builder().initialLimit(initial).build(Semaphore.create(initial));
  }

  @Test
  void theAdaptiveSemaphoreBacksTheControl() throws Exception {
    AdaptiveLimit adaptive = adaptive(2);
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().adaptive(adaptive).build();
    Ticket a = assertInstanceOf(Ticket.class, control.admit("a"));
    Ticket b = assertInstanceOf(Ticket.class, control.admit("b"));
    assertEquals(0, adaptive.semaphore().available(), "each ticket holds one of its permits");
    Rejection full = assertInstanceOf(Rejection.class, control.admit("c"));
    assertEquals(Reason.LIMIT_REACHED, full.reason());
    a.close();
    b.close();
    assertEquals(2, adaptive.semaphore().available());
  }

  @Test
  void eachTicketIsASampleFromAdmissionToItsEnd() throws Exception {
    AdaptiveLimit adaptive = adaptive(3);
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().adaptive(adaptive).build();
    Ticket closed = (Ticket) control.admit("a");
    Ticket dropped = (Ticket) control.admit("b");
    Ticket abandoned = (Ticket) control.admit("c");
    assertEquals(3, adaptive.inFlight());
    assertInstanceOf(Rejection.class, control.admit("d"));
    assertEquals(3, adaptive.inFlight(), "a rejected request is no sample");
    closed.close();
    dropped.dropped();
    abandoned.abandon();
    abandoned.close(); // a second ending does nothing
    assertEquals(0, adaptive.inFlight());
    assertEquals(0, control.inFlight());
  }

  @Test
  void exemptRequestsAreNoSamples() throws Exception {
    AdaptiveLimit adaptive = adaptive(1);
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().adaptive(adaptive).exempt("health"::equals).build();
    Ticket exempt = (Ticket) control.admit("health");
    assertTrue(exempt.exempt());
    assertEquals(0, adaptive.inFlight());
    exempt.close();
  }

  @Test
  void queuedRequestsWithdrawnOrTimedOutLeaveNoSampleOpen() throws Exception {
    AdaptiveLimit adaptive = adaptive(2);
    AdmissionControl<String> control =
        AdmissionControl.<String>builder()
            .adaptive(adaptive)
            .queue(1_000, Duration.ofMillis(50))
            .build();
    List<CompletableFuture<Decision>> all = new ArrayList<>();
    for (int round = 0; round < 200; round++) {
      CompletableFuture<Decision> f = control.admitAsync("r" + round);
      all.add(f);
      if (round % 3 == 0) {
        f.cancel(false);
      }
      if (round % 5 == 0) {
        for (CompletableFuture<Decision> done : all) {
          if (done.isDone() && !done.isCancelled() && done.join() instanceof Ticket t) {
            t.close();
          }
        }
      }
    }
    for (CompletableFuture<Decision> f : all) {
      if (f.isCancelled()) {
        continue;
      }
      if (f.join() instanceof Ticket t) { // waits at most maxWait: then it is a rejection
        t.close();
      }
    }
    assertEquals(0, control.inFlight());
    assertEquals(0, adaptive.inFlight(), "every sample begun was ended");
    assertEquals(adaptive.limit(), adaptive.semaphore().available());
  }

  /**
   * Regression: a queued request whose future its caller completed (its own timeout, as with {@code
   * orTimeout}) stayed in the queue, and the permit granted for it became a ticket that began a
   * sample before it was retracted: a sample that counted in the window's peak in flight, so the
   * limit grew as if it had been reached.
   */
  @Test
  void aQueuedRequestItsCallerCompletedIsNoSample() throws Exception {
    Semaphore semaphore = Semaphore.create(2);
    AdaptiveLimit adaptive =
        AdaptiveLimit.builder().initialLimit(2).windowSamples(1).build(semaphore);
    AdmissionControl<String> control =
        AdmissionControl.<String>builder()
            .adaptive(adaptive)
            .queue(4, Duration.ofMinutes(10))
            .build();
    Permit other = semaphore.acquire(1); // another user of the semaphore: never a sample
    Ticket first = assertInstanceOf(Ticket.class, control.admit("a"));
    CompletableFuture<Decision> queued = control.admitAsync("b");
    assertTrue(queued.completeExceptionally(new TimeoutException("the caller's own timeout")));
    other.release(); // no one waits for this permit any more
    assertEquals(1, adaptive.inFlight());
    // The window of two samples closes: at most 1 of the limit of 2 was ever in flight.
    first.close();
    assertInstanceOf(Ticket.class, control.admit("c")).close();
    assertEquals(2, adaptive.limit(), "the limit was never reached, so it must not grow");
    assertEquals(2, semaphore.available());
    assertEquals(0, control.inFlight());
  }

  @Test
  void anAdaptiveLimitExcludesTheOtherLimits() {
    AdaptiveLimit adaptive = adaptive(2);
    IllegalStateException withLimit =
        assertThrows(
            IllegalStateException.class,
            () -> AdmissionControl.<String>builder().adaptive(adaptive).limit(3).build());
    assertTrue(withLimit.getMessage().contains("limit(int)"), withLimit.getMessage());
    IllegalStateException withSemaphore =
        assertThrows(
            IllegalStateException.class,
            () ->
                AdmissionControl.<String>builder()
                    .adaptive(adaptive)
                    .semaphore(Semaphore.create(2))
                    .build());
    assertTrue(withSemaphore.getMessage().contains("semaphore(Semaphore)"));
    IllegalStateException partitioned =
        assertThrows(
            IllegalStateException.class,
            () ->
                AdmissionControl.<String>builder()
                    .adaptive(adaptive)
                    .partitionBy(r -> r, 2)
                    .build());
    assertTrue(partitioned.getMessage().contains("partitionBy"), partitioned.getMessage());
    assertThrows(
        NullPointerException.class, () -> AdmissionControl.<String>builder().adaptive(null));
  }
}
