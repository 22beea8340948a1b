package dev.jeton.http;

import static dev.jeton.http.Decided.rejected;
import static dev.jeton.http.Decided.ticket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Permit;
import dev.jeton.SemaphoreClosedException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * A semaphore that fails, as a remote one does when its server is out of reach (regression tests:
 * in best-effort mode the failure escaped {@code admit}, so the filters answered 500; in queued
 * mode one failed acquire rejected the whole queue as LIMIT_REACHED; a {@code
 * SemaphoreClosedException} wrapped in a {@code CompletionException} or {@code ExecutionException}
 * was taken for LIMIT_REACHED).
 */
class SemaphoreFailureTest {
  private static final Duration LONG = Duration.ofMinutes(10);

  private final FailingSemaphore semaphore = new FailingSemaphore(1);

  /** A semaphore not of Jeton's core (so asked through its try), which answers at once. */
  private AdmissionControl.Builder<Integer> builder() {
    return AdmissionControl.<Integer>builder().semaphore(semaphore);
  }

  private AdmissionControl<Integer> queued() {
    return builder().queue(4, LONG).timeouts((expire, nanos) -> new CompletableFuture<>()).build();
  }

  @Test
  void bestEffortRejectsWithUnavailableWhenTheSemaphoreThrows() throws InterruptedException {
    AdmissionControl<Integer> control = builder().rejectionStatus(429).build();
    semaphore.failWith(new FailingSemaphore.Unreachable("connection refused"));
    Rejection r = assertInstanceOf(Rejection.class, control.admit(1));
    assertEquals(Reason.UNAVAILABLE, r.reason());
    assertEquals(503, r.status(), "the client sent nothing wrong: 503, never 429");
    assertTrue(r.retryAfterSeconds() >= 1);
    assertTrue(r.message().contains("UNAVAILABLE"), r.message());
    assertEquals(1, control.stats().rejected(Reason.UNAVAILABLE));
    semaphore.failWith(null); // back
    assertInstanceOf(Ticket.class, control.admit(2)).close();
    assertEquals(0, control.inFlight());
  }

  /** Regression: a release that threw reached whoever closed the ticket (a filter, a pump). */
  @Test
  void aPermitThatFailsToGoBackNeverThrowsAtTheTicketsCloser() throws InterruptedException {
    AdmissionControl<Integer> control = builder().build();
    semaphore.failReleasesWith(new FailingSemaphore.Unreachable("connection reset"));
    Ticket ticket = assertInstanceOf(Ticket.class, control.admit(1));
    ticket.close(); // must not throw
    assertEquals(0, control.inFlight(), "the ticket is closed all the same");
    assertEquals(1, control.stats().ticketsClosed());
    ticket.close();
    assertEquals(0, control.inFlight());
  }

  @Test
  void aWrappedClosedIsClosedInBestEffortMode() throws InterruptedException {
    AdmissionControl<Integer> control = builder().build();
    semaphore.failWith(new CompletionException(new SemaphoreClosedException("closed")));
    assertEquals(Reason.CLOSED, assertInstanceOf(Rejection.class, control.admit(1)).reason());
  }

  @Test
  void aFailedAcquireRejectsOnlyTheRequestItWasForAndTheQueueGoesOn() {
    AdmissionControl<Integer> control = queued();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Permit> call = semaphore.holdNextAcquire();
    CompletableFuture<Decision> a = control.admitAsync(1);
    CompletableFuture<Decision> b = control.admitAsync(2);
    CompletableFuture<Decision> c = control.admitAsync(3);
    call.completeExceptionally(new FailingSemaphore.Unreachable("no reply in time"));
    assertEquals(Reason.UNAVAILABLE, rejected(a));
    assertFalse(b.isDone() || c.isDone());
    assertEquals(2, control.queued());
    first.close();
    ticket(b).close();
    ticket(c).close();
    assertEquals(0, control.inFlight());
    assertEquals(1, control.stats().rejected(Reason.UNAVAILABLE));
    assertEquals(1, control.stats().rejectedTotal());
  }

  @Test
  void aQueueWhoseSemaphoreFailsAtEveryCallRejectsEachWithUnavailable() {
    AdmissionControl<Integer> control = queued();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Permit> call = semaphore.holdNextAcquire();
    CompletableFuture<Decision> a = control.admitAsync(1);
    CompletableFuture<Decision> b = control.admitAsync(2);
    semaphore.failWith(new FailingSemaphore.Unreachable("connection refused"));
    call.completeExceptionally(new FailingSemaphore.Unreachable("connection reset"));
    assertEquals(Reason.UNAVAILABLE, rejected(a));
    assertEquals(Reason.UNAVAILABLE, rejected(b));
    assertEquals(Reason.UNAVAILABLE, rejected(control.admitAsync(3)));
    assertEquals(0, control.queued());
    semaphore.failWith(null);
    first.close();
    ticket(control.admitAsync(4)).close();
    assertEquals(3, control.stats().rejected(Reason.UNAVAILABLE));
  }

  @Test
  void aClosedSemaphoreSeenThroughStagesRejectsTheQueueWithClosed() {
    semaphore.asStages();
    AdmissionControl<Integer> control = queued();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Decision> a = control.admitAsync(1);
    CompletableFuture<Decision> b = control.admitAsync(2);
    semaphore.close(); // the pump's stage fails with CompletionException(SemaphoreClosedException)
    assertEquals(Reason.CLOSED, rejected(a));
    assertEquals(Reason.CLOSED, rejected(b));
    first.close();
  }

  @Test
  void aClosedWrappedInAnExecutionExceptionIsClosed() {
    AdmissionControl<Integer> control = queued();
    Ticket first = ticket(control.admitAsync(0));
    CompletableFuture<Permit> call = semaphore.holdNextAcquire();
    CompletableFuture<Decision> a = control.admitAsync(1);
    call.completeExceptionally(new ExecutionException(new SemaphoreClosedException("closed")));
    assertEquals(Reason.CLOSED, rejected(a));
    first.close();
  }
}
