package dev.jeton.http;

import static dev.jeton.http.Decided.rejected;
import static dev.jeton.http.Decided.ticket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A semaphore that may block (any not of Jeton's core), asked through its try with a bound, step by
 * step: the test holds each try's answer until it runs it, and fires each timer itself, so "the
 * semaphore does not answer" is a call the test has not answered yet (issue 29).
 */
class SilentSemaphoreTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(1);
  private static final long TIMEOUT_NANOS = TIMEOUT.toNanos();
  private static final Duration LONG = Duration.ofMinutes(10);

  private final FailingSemaphore semaphore = new FailingSemaphore(1);
  private final List<Runnable> calls = new ArrayList<>(); // made, not yet answered
  private final List<Armed> armed = new ArrayList<>();

  /** A timer the control armed, fired by the test. */
  private record Armed(Runnable task, long nanos, CompletableFuture<Void> handle) {}

  private AdmissionControl.Builder<Integer> builder() {
    semaphore.answerTriesOn(calls::add);
    return AdmissionControl.<Integer>builder()
        .semaphore(semaphore)
        .semaphoreTimeout(TIMEOUT)
        .rejectionStatus(429)
        .timeouts(
            (task, nanos) -> {
              Armed a = new Armed(task, nanos, new CompletableFuture<>());
              armed.add(a);
              return a.handle;
            });
  }

  /** Answers the oldest call not answered yet. */
  private void answerCall() {
    assertFalse(calls.isEmpty(), "no call to answer");
    calls.remove(0).run();
  }

  /** Fires every timer of {@code nanos} armed and not cancelled so far, in the order armed. */
  private void fire(long nanos) {
    List<Armed> due = new ArrayList<>();
    for (Armed a : armed) {
      if (a.nanos == nanos && !a.handle.isDone()) {
        due.add(a);
      }
    }
    for (Armed a : due) {
      a.handle.complete(null);
      a.task.run();
    }
  }

  private static void assertUnavailable(Rejection r) {
    assertEquals(Reason.UNAVAILABLE, r.reason());
    assertEquals(503, r.status(), "the semaphore's fault, not the client's: never 429");
  }

  private static Rejection rejection(CompletableFuture<Decision> f) {
    assertTrue(f.isDone(), "not decided yet");
    return assertInstanceOf(Rejection.class, f.join());
  }

  @Test
  void bestEffort_unavailableOnceTheCallIsUnanswered_thenAtOnceWithoutACall_untilItAnswers() {
    AdmissionControl<Integer> control = builder().build();
    CompletableFuture<Decision> first = control.admitAsync(1);
    assertFalse(first.isDone(), "decided by the semaphore's answer, on another thread");
    assertEquals(1, calls.size());
    fire(TIMEOUT_NANOS);
    assertUnavailable(rejection(first));

    assertUnavailable(rejection(control.admitAsync(2))); // at once
    assertEquals(1, calls.size(), "no call more to a semaphore that does not answer");

    answerCall(); // late: its permit goes back, and no call is overdue any more
    assertEquals(1, semaphore.available());
    CompletableFuture<Decision> third = control.admitAsync(3);
    answerCall();
    ticket(third).close();
    assertEquals(2, control.stats().rejected(Reason.UNAVAILABLE));
    assertEquals(1, control.stats().admitted());
  }

  @Test
  void bestEffort_aPermitThatComesAfterTheTimeoutGoesBack() {
    AdmissionControl<Integer> control = builder().build();
    CompletableFuture<Decision> decision = control.admitAsync(1);
    semaphore.duringTryAcquire(() -> fire(TIMEOUT_NANOS)); // the answer is on its way, and late
    answerCall();
    assertUnavailable(rejection(decision));
    assertEquals(1, semaphore.available(), "the permit the late answer brought went back");
    assertEquals(0, control.inFlight());
    semaphore.duringTryAcquire(() -> {});
    CompletableFuture<Decision> next = control.admitAsync(2);
    answerCall();
    ticket(next).close(); // the late answer ended the silence
  }

  @Test
  void bestEffort_aDecisionWithdrawnBeforeTheAnswerGivesItsPermitBack() {
    AdmissionControl<Integer> control = builder().build();
    CompletableFuture<Decision> withdrawn = control.admitAsync(1);
    assertTrue(withdrawn.cancel(false));
    answerCall();
    assertEquals(1, semaphore.available(), "the permit came back");
    assertEquals(0, control.inFlight());
    assertEquals(0, control.stats().admitted());
  }

  @Test
  void bestEffort_aDecisionTakenByTheAnswerCannotBeWithdrawn() throws Exception {
    AdmissionControl<Integer> control = builder().build();
    CompletableFuture<Decision> decision = control.admitAsync(1);
    answerCall();
    assertFalse(decision.cancel(false), "decided: the ticket is the caller's to close");
    Ticket t = assertInstanceOf(Ticket.class, decision.get(1, TimeUnit.SECONDS));
    assertEquals(1, control.inFlight());
    t.close();
    assertEquals(1, semaphore.available());
  }

  @Test
  void bestEffort_aFailingSemaphoreIsUnavailable() {
    AdmissionControl<Integer> control = builder().build();
    semaphore.failWith(new FailingSemaphore.Unreachable("connection refused"));
    CompletableFuture<Decision> decision = control.admitAsync(1);
    answerCall();
    assertUnavailable(rejection(decision));
    assertEquals(1, control.stats().rejected(Reason.UNAVAILABLE));
  }

  @Test
  void queued_aRequestThatFindsNoPumpIsAskedForAtOnce() {
    AdmissionControl<Integer> control = builder().queue(4, LONG).build();
    CompletableFuture<Decision> decision = control.admitAsync(1);
    assertEquals(1, control.queued(), "queued while its call is on its way");
    answerCall();
    ticket(decision).close();
    assertEquals(1, semaphore.available());
    assertEquals(0, control.stats().rejectedTotal());
  }

  /** A holder of the only permit, and one request queued behind it on the pump. */
  private Ticket holdTheOnlyPermit(AdmissionControl<Integer> control) {
    CompletableFuture<Decision> holder = control.admitAsync(0);
    answerCall();
    return ticket(holder);
  }

  @Test
  void queued_whileThePumpWaits_aCheckFindsTheSemaphoreFailingAndRejectsEachWaiter() {
    AdmissionControl<Integer> control = builder().queue(4, LONG).build();
    Ticket holder = holdTheOnlyPermit(control);
    CompletableFuture<Decision> a = control.admitAsync(1);
    answerCall(); // empty: the pump waits on the semaphore for a's permit
    CompletableFuture<Decision> b = control.admitAsync(2); // behind the pump: no call of its own
    assertTrue(calls.isEmpty());
    assertEquals(2, control.queued());

    // The pump's acquire never fails (a remote client may retry it until its server is back):
    // only the check the queue makes while it waits finds out.
    semaphore.failWith(new FailingSemaphore.Unreachable("connection refused"));
    fire(TIMEOUT_NANOS);
    answerCall();
    assertEquals(Reason.UNAVAILABLE, rejected(a));
    assertFalse(b.isDone());
    answerCall(); // the next check, at once, while someone waits
    assertEquals(Reason.UNAVAILABLE, rejected(b));
    assertTrue(calls.isEmpty(), "nobody waits: no check more");
    assertEquals(0, control.queued());

    semaphore.failWith(null);
    holder.close();
    CompletableFuture<Decision> c = control.admitAsync(3);
    answerCall();
    ticket(c).close();
    assertEquals(2, control.stats().rejected(Reason.UNAVAILABLE));
  }

  @Test
  void queued_aWaiterThatTimesOutWhileTheSemaphoreIsSilentIsUnavailable_newcomersAtOnce() {
    AdmissionControl<Integer> control = builder().queue(4, LONG).build();
    Ticket holder = holdTheOnlyPermit(control);
    CompletableFuture<Decision> a = control.admitAsync(1);
    answerCall();
    fire(TIMEOUT_NANOS); // the pump has waited a period: a check is made
    assertEquals(1, calls.size());
    fire(TIMEOUT_NANOS); // and goes unanswered
    assertFalse(a.isDone(), "it may still be served within its wait");
    assertUnavailable(rejection(control.admitAsync(2)));

    fire(LONG.toNanos());
    assertUnavailable(rejection(a));
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));

    answerCall(); // it is over at last: requests queue again
    CompletableFuture<Decision> b = control.admitAsync(3);
    assertFalse(b.isDone());
    holder.close();
    answerCall();
    ticket(b).close();
  }

  @Test
  void queued_aWaiterThatTimesOutUnderAnAnsweringSemaphoreIsAQueueTimeout() {
    AdmissionControl<Integer> control = builder().queue(4, LONG).build();
    Ticket holder = holdTheOnlyPermit(control);
    CompletableFuture<Decision> a = control.admitAsync(1);
    answerCall();
    fire(TIMEOUT_NANOS);
    answerCall(); // the check: still full
    fire(LONG.toNanos());
    assertEquals(Reason.QUEUE_TIMEOUT, rejected(a));
    holder.close();
  }

  @Test
  void queued_aCallThatDoesNotAnswerLeavesItsRequestToThePump() {
    AdmissionControl<Integer> control = builder().queue(4, LONG).build();
    CompletableFuture<Decision> a = control.admitAsync(1);
    fire(TIMEOUT_NANOS); // its call goes unanswered: the pump asks, and gets the free permit
    ticket(a).close();
    answerCall(); // late: the permit it brings goes back
    assertEquals(1, semaphore.available());
  }

  @Test
  void theQueuedCallTimeoutIsAtMostHalfOfMaxWait() {
    AdmissionControl<Integer> control = builder().queue(4, Duration.ofMillis(200)).build();
    var unused = control.admitAsync(1);
    assertTrue(
        armed.stream().anyMatch(a -> a.nanos == Duration.ofMillis(100).toNanos()),
        "a call is unanswered after half of maxWait, before the request times out");
  }

  @Test
  void closeStopsTheCalls() {
    AdmissionControl<Integer> control = builder().build();
    CompletableFuture<Decision> decision = control.admitAsync(1);
    control.close();
    answerCall();
    assertEquals(Reason.CLOSED, rejection(decision).reason());
    assertEquals(1, semaphore.available(), "the permit it brought went back");
  }
}
