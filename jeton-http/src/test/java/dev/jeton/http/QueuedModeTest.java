package dev.jeton.http;

import static dev.jeton.http.Decided.rejected;
import static dev.jeton.http.Decided.ticket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class QueuedModeTest {
  private static final Duration LONG = Duration.ofMinutes(10);

  /** The timeouts the control armed, fired by the test when it wants. */
  private final List<Runnable> armed = new ArrayList<>();

  private AdmissionControl.Builder<Integer> queued(int limit, int maxQueue) {
    return AdmissionControl.<Integer>builder()
        .limit(limit)
        .queue(maxQueue, LONG)
        .timeouts(
            (expire, nanos) -> {
              armed.add(expire);
              return CompletableFuture.completedFuture(null);
            });
  }

  @Test
  void fifoAdmitsInArrivalOrderAndRejectsTheNewcomerWhenFull() {
    AdmissionControl<Integer> control = queued(1, 2).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    CompletableFuture<Decision> b = control.admitAsync(2);
    assertEquals(2, control.queued());
    assertEquals(Reason.QUEUE_FULL, rejected(control.admitAsync(3)));
    assertFalse(a.isDone() || b.isDone());
    first.close();
    Ticket ta = ticket(a);
    assertFalse(b.isDone());
    ta.close();
    ticket(b).close();
    assertEquals(0, control.inFlight());
    assertEquals(0, control.queued());
    AdmissionStats stats = control.stats();
    assertEquals(3, stats.admitted());
    assertEquals(2, stats.dequeued());
    assertEquals(1, stats.rejected(Reason.QUEUE_FULL));
  }

  @Test
  void lifoServesTheNewestAndANewcomerPushesOutTheOldest() {
    AdmissionControl<Integer> control = queued(1, 2).lifo().build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> oldest = control.admitAsync(1);
    CompletableFuture<Decision> middle = control.admitAsync(2);
    CompletableFuture<Decision> newest = control.admitAsync(3);
    assertEquals(Reason.QUEUE_FULL, rejected(oldest));
    assertEquals(2, control.queued());
    first.close();
    ticket(newest).close();
    ticket(middle).close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void higherPrioritiesGoFirstAndAFullQueuePushesOutTheLowest() {
    AdmissionControl<Integer> control =
        queued(1, 3).priority(priority -> priority, Duration.ofHours(1)).build();
    Ticket first = ticket(control.admitAsync(9));
    CompletableFuture<Decision> low = control.admitAsync(0);
    CompletableFuture<Decision> high = control.admitAsync(5);
    CompletableFuture<Decision> mid = control.admitAsync(1);
    assertEquals(Reason.QUEUE_FULL, rejected(control.admitAsync(0))); // ranks below all
    CompletableFuture<Decision> higher = control.admitAsync(2); // pushes out `low`
    assertEquals(Reason.QUEUE_FULL, rejected(low));
    first.close();
    ticket(high).close();
    ticket(higher).close();
    ticket(mid).close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void agingLiftsARequestThatHasWaited() {
    long[] now = {0};
    Duration aging = Duration.ofSeconds(1);
    AdmissionControl<Integer> control =
        queued(1, 3).priority(p -> p, aging).ticker(() -> now[0]).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> old = control.admitAsync(0);
    now[0] += 3 * aging.toNanos(); // it has waited three periods: it ranks like a 3 now
    CompletableFuture<Decision> two = control.admitAsync(2);
    first.close();
    ticket(old).close();
    ticket(two).close();
  }

  /**
   * Regression: ranks were {@code now - priority * aging} clamped to a long, so with an aging of an
   * hour or more (or any aging, on a clock near its lowest value) distinct priorities clamped to
   * one rank and were served first come first served.
   */
  @Test
  void extremePrioritiesKeepTheirOrderUnderLongAgingAndAnyClock() {
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
    for (Duration aging : List.of(Duration.ofSeconds(1), Duration.ofHours(1), forever)) {
      for (long clock : new long[] {0, Long.MIN_VALUE + 1_000, Long.MAX_VALUE - 1_000}) {
        higherGoesFirst(aging, clock, Integer.MAX_VALUE - 1, Integer.MAX_VALUE);
        higherGoesFirst(aging, clock, Integer.MIN_VALUE, Integer.MIN_VALUE + 1);
        higherGoesFirst(aging, clock, Integer.MIN_VALUE, Integer.MAX_VALUE);
        higherGoesFirst(aging, clock, 5, 6);
      }
    }
  }

  /** Queues {@code lower}, then {@code higher} at the same instant: {@code higher} goes first. */
  private void higherGoesFirst(Duration aging, long clock, int lower, int higher) {
    AdmissionControl<Integer> control =
        queued(1, 2).priority(p -> p, aging).ticker(() -> clock).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> low = control.admitAsync(lower);
    CompletableFuture<Decision> high = control.admitAsync(higher);
    first.close();
    assertTrue(
        high.isDone() && !low.isDone(),
        () -> higher + " should go before " + lower + ", aging " + aging + ", clock " + clock);
    ticket(high).close();
    ticket(low).close();
  }

  @Test
  void extremePrioritiesAgeByOneRankPerAgingUnderShortAging() {
    long[] now = {0};
    AdmissionControl<Integer> control =
        queued(1, 3).priority(p -> p, Duration.ofNanos(1)).ticker(() -> now[0]).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> lowest = control.admitAsync(Integer.MIN_VALUE);
    now[0] = 1_000_000_000L; // lowest has risen 10^9 of the 2^32 - 1 ranks to the highest
    CompletableFuture<Decision> highest = control.admitAsync(Integer.MAX_VALUE);
    now[0] = 1L << 32; // and now all of them, and one more
    CompletableFuture<Decision> late = control.admitAsync(Integer.MAX_VALUE);
    first.close();
    Ticket h = ticket(highest);
    assertFalse(lowest.isDone() || late.isDone());
    h.close();
    Ticket l = ticket(lowest);
    assertFalse(late.isDone());
    l.close();
    ticket(late).close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void aWaiterThatTimesOutLeavesTheQueueAtOnce() {
    AdmissionControl<Integer> control = queued(1, 2).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    CompletableFuture<Decision> b = control.admitAsync(2);
    armed.get(0).run();
    assertEquals(Reason.QUEUE_TIMEOUT, rejected(a));
    assertEquals(1, control.queued());
    first.close();
    ticket(b).close();
    assertEquals(0, control.inFlight());
    assertEquals(1, control.stats().rejected(Reason.QUEUE_TIMEOUT));
  }

  @Test
  void aRealTimeoutRejectsWithQueueTimeout() {
    AdmissionControl<Integer> control =
        AdmissionControl.<Integer>builder().limit(1).queue(4, Duration.ofMillis(20)).build();
    Ticket first = ticket(control.admitAsync(0));
    Rejection r = assertInstanceOf(Rejection.class, control.admitAsync(1).join());
    assertEquals(Reason.QUEUE_TIMEOUT, r.reason());
    assertEquals(0, control.queued());
    first.close();
    ticket(control.admitAsync(2)).close();
  }

  @Test
  void cancellingWithdrawsAndTheNextGetsThePermit() {
    AdmissionControl<Integer> control = queued(1, 2).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    CompletableFuture<Decision> b = control.admitAsync(2);
    assertTrue(a.cancel(false));
    assertEquals(1, control.queued());
    first.close();
    ticket(b).close();
    assertEquals(0, control.inFlight());
    assertEquals(0, control.stats().rejectedTotal());
  }

  /**
   * Regression: completing a queued request's future (the caller's own timeout, as with {@code
   * orTimeout} or {@code completeOnTimeout}) left the request in the queue, taking a place until
   * the queue reached it, and the decision the caller made up was counted in the stats as the
   * control's.
   */
  @Test
  void completingAQueuedRequestsFutureWithdrawsItLikeCancelling() {
    AdmissionControl<Integer> control = queued(1, 3).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    CompletableFuture<Decision> b = control.admitAsync(2);
    CompletableFuture<Decision> c = control.admitAsync(3);
    assertTrue(a.complete(new Rejection(503, Duration.ZERO, Reason.QUEUE_TIMEOUT)));
    assertTrue(b.completeExceptionally(new IllegalStateException("gave up")));
    assertEquals(1, control.queued());
    first.close();
    ticket(c).close();
    assertEquals(0, control.stats().rejectedTotal(), "the caller's decisions are not counted");
    assertEquals(2, control.stats().admitted());
    assertEquals(0, control.inFlight());
  }

  @Test
  void aQueuedRequestsDecisionCannotBeDecidedTwice() {
    AdmissionControl<Integer> control = queued(1, 2).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    first.close();
    Ticket ta = ticket(a);
    assertFalse(a.complete(new Rejection(503, Duration.ZERO, Reason.QUEUE_TIMEOUT)));
    assertFalse(a.cancel(false));
    assertThrows(UnsupportedOperationException.class, () -> a.obtrudeValue(ta));
    assertThrows(UnsupportedOperationException.class, () -> a.obtrudeException(new Error()));
    assertThrows(UnsupportedOperationException.class, () -> a.completeAsync(() -> ta));
    ta.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void interruptingABlockedAdmitWithdrawsIt() throws Exception {
    AdmissionControl<Integer> control = queued(1, 2).build();
    Ticket first = assertInstanceOf(Ticket.class, control.admit(0));
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    Thread waiter =
        new Thread(
            () -> {
              try {
                outcome.set(new AssertionError("decided: " + control.admit(1)));
              } catch (Throwable t) {
                outcome.set(t);
              }
              done.countDown();
            });
    waiter.start();
    while (control.queued() == 0) {
      Thread.onSpinWait(); // the event: it has queued
    }
    waiter.interrupt();
    done.await();
    assertInstanceOf(InterruptedException.class, outcome.get());
    assertEquals(0, control.queued());
    first.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void closeRejectsTheQueuedAndTheNew() {
    AdmissionControl<Integer> control = queued(1, 2).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    control.close();
    assertEquals(Reason.CLOSED, rejected(a));
    assertEquals(Reason.CLOSED, rejected(control.admitAsync(2)));
    assertEquals(0, control.queued());
    first.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void aGivenSemaphoreThatClosesRejectsTheQueuedWithClosed() {
    Semaphore shared = Semaphore.create(1);
    AdmissionControl<Integer> control =
        AdmissionControl.<Integer>builder().semaphore(shared).queue(2, LONG).build();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    shared.close();
    assertEquals(Reason.CLOSED, rejected(a));
    first.close();
    assertEquals(1, shared.available());
  }

  @Test
  void theQueueAsksTheSemaphoreForOnePermitAtATime() {
    Semaphore shared = Semaphore.create(1);
    AdmissionControl<Integer> control =
        AdmissionControl.<Integer>builder().semaphore(shared).queue(50, LONG).build();
    Ticket first = ticket(control.admitAsync(0));
    List<CompletableFuture<Decision>> waiting = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      waiting.add(control.admitAsync(i));
    }
    assertEquals(1, shared.queueLength());
    for (CompletableFuture<Decision> f : waiting) {
      f.cancel(false);
    }
    assertEquals(0, shared.queueLength()); // the last withdrawal cancels the pump's request
    first.close();
    assertEquals(1, shared.available());
  }

  @Test
  void blockingAdmitWaitsForARelease() throws Exception {
    AdmissionControl<Integer> control = queued(1, 2).build();
    Ticket first = assertInstanceOf(Ticket.class, control.admit(0));
    CompletableFuture<Decision> second =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return control.admit(1);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    while (control.queued() == 0) {
      Thread.onSpinWait();
    }
    first.close();
    assertInstanceOf(Ticket.class, second.get()).close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void combinationsThatCannotWorkFailInBuild() {
    var e =
        assertThrows(
            IllegalStateException.class,
            () -> queued(1, 2).lifo().priority(p -> p, Duration.ofSeconds(1)).build());
    assertTrue(e.getMessage().contains("lifo() and priority(...) cannot be combined"));
    e =
        assertThrows(
            IllegalStateException.class,
            () ->
                AdmissionControl.<Integer>builder()
                    .partitionBy(p -> p, 1)
                    .queue(1, LONG)
                    .lifo()
                    .build());
    assertTrue(e.getMessage().contains("cannot be combined with partitionBy"));
    e =
        assertThrows(
            IllegalStateException.class,
            () ->
                AdmissionControl.<Integer>builder()
                    .partitionBy(p -> p, 1)
                    .semaphore(Semaphore.create(1))
                    .build());
    assertTrue(e.getMessage().contains("use limit(int) for a global limit"));
  }
}
