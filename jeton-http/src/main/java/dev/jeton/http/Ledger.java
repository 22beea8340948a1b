package dev.jeton.http;

import dev.jeton.AdaptiveLimit;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.internal.LeakTracker;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The books of an {@link AdmissionControl}: the tickets in flight, the count of every decision and
 * of how tickets ended, the answer a rejection gets (its status and Retry-After), and the log of
 * the semaphore's failures. The control, its queue and its partitions decide; they record here.
 */
final class Ledger {
  /*
   * A ticket gives its permit back through finished(), exactly once (the Ticket ends once), which
   * first lowers `inFlight` and records the time the permit was held for the Retry-After
   * estimate, and only then releases the permit, so that inFlight never shows more tickets than
   * permits are held.
   *
   * Invariant L1: inFlight = tickets admitted with a permit and not yet finished (exempt ones
   * hold nothing and are not counted).
   */

  private final @Nullable AdaptiveLimit adaptive;
  private final int rejectionStatus;
  private final long maxRetryAfterSeconds;
  private final DrainEstimate drain = new DrainEstimate(System::nanoTime);
  private final Counters counters = new Counters();
  private final SemaphoreFailures failures =
      new SemaphoreFailures(
          () -> System.getLogger(AdmissionControl.class.getName()), System::nanoTime);
  private final AtomicInteger inFlight = new AtomicInteger();
  private final @Nullable LeakTracker leaks; // null: tickets are not watched for leaks

  Ledger(
      @Nullable AdaptiveLimit adaptive,
      int rejectionStatus,
      long maxRetryAfterSeconds,
      @Nullable LeakTracker leaks) {
    this.adaptive = adaptive;
    this.leaks = leaks;
    this.rejectionStatus = rejectionStatus;
    this.maxRetryAfterSeconds = maxRetryAfterSeconds;
  }

  /** A ticket for {@code permit}, counted in flight but not yet as admitted: see count. */
  Ticket ticket(Permit permit) {
    inFlight.incrementAndGet();
    AdaptiveLimit a = adaptive;
    return Ticket.admitted(permit, this, a != null ? a.begin() : null, leaks);
  }

  /**
   * Asks {@code s} for a permit now: a ticket if it has one, counted; else a rejection for {@code
   * ifNone}, counted, or null if {@code ifNone} is null (the caller will queue). A semaphore that
   * throws (closed, its limit set to 0, out of reach) rejects for the reason its failure gives.
   * {@code busy} is read for a rejection's Retry-After only.
   */
  @Nullable Decision tryAdmit(Semaphore s, @Nullable Reason ifNone, IntSupplier busy) {
    Optional<Permit> permit;
    try {
      permit = s.tryAcquire(1);
    } catch (RuntimeException failed) {
      return reject(reasonFor(failed), 0, busy.getAsInt());
    }
    if (permit.isPresent()) {
      return admitted(permit.get());
    }
    return ifNone == null ? null : reject(ifNone, 0, busy.getAsInt());
  }

  /** A ticket for {@code permit}, counted as admitted. */
  Ticket admitted(Permit permit) {
    Ticket ticket = ticket(permit);
    counters.admitted();
    return ticket;
  }

  /** A rejection, counted. */
  Rejection reject(Reason reason, int ahead, int busy) {
    counters.rejected(reason);
    return rejection(reason, ahead, busy);
  }

  /** A rejection of a queued request, with {@code ahead} still queued, not yet counted. */
  Rejection rejection(Reason reason, int ahead) {
    return rejection(reason, ahead, inFlight.get());
  }

  /** A rejection with {@code ahead} queued while {@code busy} permits are held, not counted. */
  Rejection rejection(Reason reason, int ahead, int busy) {
    long seconds = drain.retryAfterSeconds(busy, ahead, maxRetryAfterSeconds);
    int status = reason == Reason.UNAVAILABLE ? 503 : rejectionStatus; // not the client's excess
    return new Rejection(status, Duration.ofSeconds(seconds), reason);
  }

  /**
   * A rejection by the rate limit, counted: always 429 (the client's own excess), with the wait the
   * limiter computed, uncapped (a client sent back sooner would only be refused again).
   */
  Rejection rateLimited(Duration retryAfter, Map<String, String> headers) {
    counters.rejected(Reason.RATE_LIMITED);
    return new Rejection(429, retryAfter, Reason.RATE_LIMITED, headers);
  }

  /** Counts a decision made apart from its making (by the queue or the partitions). */
  void count(Decision decision) {
    if (decision instanceof Rejection r) {
      counters.rejected(r.reason());
    } else {
      counters.admitted();
    }
  }

  /**
   * The reason to reject a request whose acquire failed with {@code failure} (thrown, or the
   * failure of its future); an unavailable semaphore is logged. See {@link SemaphoreFailures}.
   */
  Reason reasonFor(Throwable failure) {
    return failures.reasonFor(failure);
  }

  /** An exempt request passed. */
  void exempted() {
    counters.exempted();
  }

  /** A request left a queue after waiting {@code nanos}. */
  void dequeued(long nanos) {
    counters.dequeued(nanos);
  }

  /** Releases a permit that no ticket holds; a failure is logged, never thrown. */
  void giveBack(Permit permit) {
    try {
      permit.release();
    } catch (RuntimeException e) {
      failures.releaseFailed(e);
    }
  }

  /** Called once per ticket that holds a permit, by the first of its close methods. */
  void finished(Permit permit, long heldNanos, Ticket.Outcome outcome) {
    inFlight.decrementAndGet();
    drain.completed(heldNanos);
    counters.ended(outcome);
    giveBack(permit); // a failure is not the problem of the ticket's closer, a response finishing
  }

  /** The failures' log, for the calls to a semaphore that may block. */
  SemaphoreFailures failures() {
    return failures;
  }

  int inFlight() {
    return inFlight.get();
  }

  AdmissionStats stats() {
    return counters.snapshot();
  }
}
