package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class BestEffortTest {

  private static AdmissionControl<String> control(int limit) {
    return AdmissionControl.<String>builder()
        .limit(limit)
        .exempt(path -> path.equals("/health"))
        .build();
  }

  @Test
  void admitsUpToTheLimitThenRejects() throws InterruptedException {
    AdmissionControl<String> control = control(2);
    Ticket a = assertInstanceOf(Ticket.class, control.admit("/a"));
    Ticket b = assertInstanceOf(Ticket.class, control.admit("/b"));
    assertEquals(2, control.inFlight());
    Rejection r = assertInstanceOf(Rejection.class, control.admit("/c"));
    assertEquals(503, r.status());
    assertEquals(Reason.LIMIT_REACHED, r.reason());
    assertEquals(1, r.retryAfterSeconds()); // nothing completed yet
    a.close();
    assertEquals(1, control.inFlight());
    Ticket c = assertInstanceOf(Ticket.class, control.admit("/c"));
    b.close();
    c.close();
    assertEquals(0, control.inFlight());
    AdmissionStats stats = control.stats();
    assertEquals(3, stats.admitted());
    assertEquals(1, stats.rejected(Reason.LIMIT_REACHED));
    assertEquals(1, stats.rejectedTotal());
  }

  @Test
  void eachCloseMethodGivesThePermitBackOnceWhateverComesAfter() throws InterruptedException {
    AdmissionControl<String> control = control(1);
    for (int way = 0; way < 3; way++) {
      Ticket t = assertInstanceOf(Ticket.class, control.admit("/x"));
      assertFalse(t.exempt());
      switch (way) {
        case 0 -> t.close();
        case 1 -> t.dropped();
        default -> t.abandon();
      }
      t.close();
      t.dropped();
      t.abandon();
      assertEquals(0, control.inFlight());
    }
    // Had any been released twice, the limit-1 semaphore would now admit two.
    Ticket t = assertInstanceOf(Ticket.class, control.admit("/x"));
    assertInstanceOf(Rejection.class, control.admit("/y"));
    t.close();
  }

  @Test
  void statsCountTicketsByHowTheyEnded() throws InterruptedException {
    AdmissionControl<String> control = control(3);
    Ticket closed = (Ticket) control.admit("/a");
    Ticket dropped = (Ticket) control.admit("/b");
    Ticket abandoned = (Ticket) control.admit("/c");
    Ticket exempt = (Ticket) control.admit("/health");
    closed.close();
    dropped.dropped();
    abandoned.abandon();
    abandoned.close(); // a second ending counts nothing
    exempt.dropped(); // holds nothing: counts nothing
    Ticket open = (Ticket) control.admit("/d");
    AdmissionStats stats = control.stats();
    assertEquals(1, stats.ticketsClosed());
    assertEquals(1, stats.ticketsDropped());
    assertEquals(1, stats.ticketsAbandoned());
    assertEquals(
        stats.admitted(),
        stats.ticketsClosed()
            + stats.ticketsDropped()
            + stats.ticketsAbandoned()
            + control.inFlight());
    open.close();
    assertEquals(2, control.stats().ticketsClosed());
  }

  @Test
  void exemptRequestsPassWhenFullAndAfterCloseHoldingNothing() throws InterruptedException {
    AdmissionControl<String> control = control(1);
    Ticket held = assertInstanceOf(Ticket.class, control.admit("/a"));
    Ticket health = assertInstanceOf(Ticket.class, control.admit("/health"));
    assertTrue(health.exempt());
    assertEquals(1, control.inFlight());
    health.close();
    assertEquals(1, control.inFlight());
    control.close();
    assertTrue(assertInstanceOf(Ticket.class, control.admit("/health")).exempt());
    assertEquals(2, control.stats().exempted());
    held.close();
  }

  @Test
  void closeRejectsNewRequestsAndLetsOpenTicketsFinish() throws InterruptedException {
    AdmissionControl<String> control = control(2);
    Ticket held = assertInstanceOf(Ticket.class, control.admit("/a"));
    control.close();
    control.close();
    Rejection r = assertInstanceOf(Rejection.class, control.admit("/b"));
    assertEquals(Reason.CLOSED, r.reason());
    assertEquals(Reason.CLOSED, ((Rejection) control.admitAsync("/c").join()).reason());
    held.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void rejectionStatusCanBe429() throws InterruptedException {
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().limit(1).rejectionStatus(429).build();
    Ticket t = assertInstanceOf(Ticket.class, control.admit("/a"));
    assertEquals(429, assertInstanceOf(Rejection.class, control.admit("/b")).status());
    t.close();
  }

  @Test
  void aGivenSemaphoreIsSharedAndNeverClosed() throws InterruptedException {
    Semaphore shared = Semaphore.create(2);
    var other = shared.acquire(1); // another user of the same limit
    AdmissionControl<String> control = AdmissionControl.<String>builder().semaphore(shared).build();
    Ticket t = assertInstanceOf(Ticket.class, control.admit("/a"));
    assertInstanceOf(Rejection.class, control.admit("/b"));
    shared.setLimit(0); // a request can no longer ever fit: rejected, not thrown
    assertEquals(
        Reason.LIMIT_REACHED, assertInstanceOf(Rejection.class, control.admit("/c")).reason());
    shared.setLimit(2);
    t.close();
    control.close();
    other.release();
    assertEquals(2, shared.tryAcquire(2).orElseThrow().permits()); // still open, all back
  }

  @Test
  void aClosedSemaphoreRejectsWithClosed() throws InterruptedException {
    Semaphore shared = Semaphore.create(2);
    AdmissionControl<String> control = AdmissionControl.<String>builder().semaphore(shared).build();
    shared.close();
    assertEquals(Reason.CLOSED, assertInstanceOf(Rejection.class, control.admit("/a")).reason());
  }

  @Test
  void admitAsyncDecidesAtOnceInBestEffortMode() {
    AdmissionControl<String> control = control(1);
    CompletableFuture<Decision> first = control.admitAsync("/a");
    CompletableFuture<Decision> second = control.admitAsync("/b");
    assertTrue(first.isDone() && second.isDone());
    assertInstanceOf(Rejection.class, second.join());
    ((Ticket) first.join()).close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void ticketsCloseFromAnyThreadExactlyOnce() throws Exception {
    AdmissionControl<String> control = control(1);
    for (int round = 0; round < 200; round++) {
      Ticket t = assertInstanceOf(Ticket.class, control.admit("/a"));
      List<Thread> closers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        int way = i;
        Thread closer =
            new Thread(
                () -> {
                  if (way % 2 == 0) {
                    t.close();
                  } else {
                    t.abandon();
                  }
                });
        closer.start();
        closers.add(closer);
      }
      for (Thread c : closers) {
        c.join();
      }
      assertEquals(0, control.inFlight());
    }
    Ticket t = assertInstanceOf(Ticket.class, control.admit("/a"));
    assertInstanceOf(Rejection.class, control.admit("/b"));
    t.close();
  }

  @Test
  void retryAfterGrowsWithHeldTimeAndIsCapped() {
    // Latency 2 s, 1 busy: rate 0.5/s, so 1 request ahead of none → 2 s.
    assertEquals(2, DrainEstimate.seconds(2e9, 1, 0, 30));
    // 4 busy, 2 s each: rate 2/s; 5 ahead → ceil(6 / 2) = 3 s.
    assertEquals(3, DrainEstimate.seconds(2e9, 4, 5, 30));
    assertEquals(30, DrainEstimate.seconds(60e9, 1, 0, 30));
    assertEquals(1, DrainEstimate.seconds(1e6, 8, 0, 30)); // fast server: never below 1
    assertEquals(1, DrainEstimate.seconds(Double.NaN, 8, 100, 30)); // nothing observed yet
    assertEquals(7, DrainEstimate.seconds(1e9, 0, 6, 30)); // nothing busy counts as 1
  }

  @Test
  void theEstimateFoldsCompletionsIntoASmoothedMean() {
    long[] now = {0};
    DrainEstimate drain = new DrainEstimate(() -> now[0]);
    assertTrue(Double.isNaN(drain.meanNanos()));
    drain.completed(4_000_000_000L);
    assertEquals(4e9, drain.meanNanos()); // the first completion counts at once
    drain.completed(0);
    assertEquals(4e9, drain.meanNanos()); // not yet due
    now[0] += DrainEstimate.FOLD_NANOS;
    assertEquals(4e9 + DrainEstimate.WEIGHT * (0 - 4e9), drain.meanNanos());
    assertEquals(3, drain.retryAfterSeconds(1, 0, 30));
  }

  @Test
  void rejectionRoundsRetryAfterUpToWholeSeconds() {
    assertEquals(1, new Rejection(503, Duration.ZERO, Reason.CLOSED).retryAfterSeconds());
    assertEquals(2, new Rejection(503, Duration.ofMillis(1001), Reason.CLOSED).retryAfterSeconds());
    assertEquals(
        3, new Rejection(429, Duration.ofSeconds(3), Reason.QUEUE_FULL).retryAfterSeconds());
    assertTrue(
        new Rejection(503, Duration.ofSeconds(3), Reason.QUEUE_FULL)
            .message()
            .contains("QUEUE_FULL"));
    assertSame(Ticket.exemptTicket(), Ticket.exemptTicket());
  }

  /** Regression: a cap of ChronoUnit.FOREVER wrapped to a Retry-After of 1 s. */
  @Test
  void aCapOfForeverIsNoCapNotOneSecond() {
    java.time.Duration forever = java.time.temporal.ChronoUnit.FOREVER.getDuration();
    assertEquals(
        Long.MAX_VALUE, new Rejection(503, forever, Reason.LIMIT_REACHED).retryAfterSeconds());
  }
}
