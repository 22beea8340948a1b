package dev.jeton.http;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import dev.jeton.internal.engine.Deadlines;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Asks a semaphore that may be remote whether it has a permit, through its asynchronous API, so
 * that no one waits longer than a bound for the answer; and says whether the semaphore answers.
 */
final class SemaphoreCalls {
  /*
   * Why: a remote semaphore's tryAcquire blocks its caller for a round trip, and for as long as
   * its client lets it when the server does not answer (a RedisSemaphore on a frozen Redis: its
   * 10 s command timeout). Made on a request's thread, it held every request that long; made on
   * a pool of threads, a healthy but distant server (57 ms away) left calls waiting for a thread,
   * and that wait was counted as the server's silence. So a call is the semaphore's own
   * asynchronous try, acquireAsync(1, Duration.ZERO): the Semaphore contract says it does not
   * block, and that a zero timeout grants at once if it can (every backend's contract test
   * checks it); a remote one decides on the server's first answer. No thread waits on it, so
   * any number may be in flight, and its clock starts when it is made: the only wait it measures
   * is the semaphore's. Its future fails with `unanswered` once `timeoutNanos` pass without an
   * answer: whoever waits on it decides then, and a permit that the call brings later is
   * released. Jeton core's semaphores are in-process (their tryAcquire takes a lock and returns),
   * so they are called directly, without this class.
   *
   * What the try's future says: a permit; a TimeoutException without a cause: no permit was free
   * (empty); a TimeoutException with a cause: the semaphore could not say, and the cause is why
   * (a Redis out of reach, a semaphore in quarantine): a failure, as is any other exception.
   *
   * Each call's future is completed once (C1), by the first of: its answer (a permit or empty),
   * its failure, or its timer with `unanswered`. A call's `state` records which came first, so
   * that `overdue` counts exactly the calls whose timer came first and that have not returned yet
   * (C2): while it is above zero the semaphore does not answer, and the control refuses new
   * requests at once rather than add a request to wait on a call that will not be answered
   * either. `latestFailure` is the failure of the latest call to return, or null if it was
   * answered: what the control reports when it rejects for the semaphore's sake.
   *
   * Invariants:
   *   C1. A call's future is completed exactly once, and not by the caller (it is never handed
   *       out to be completed or cancelled: callers only chain on it).
   *   C2. overdue = calls in state OVERDUE (timed out, not returned).
   *   C3. A permit returned by a call whose future already failed is released, never lost.
   */

  private static final int RUNNING = 0; // made, not returned, not timed out
  private static final int ANSWERED = 1; // returned first
  private static final int OVERDUE = 2; // its timer came first, and it has not returned
  private static final int LATE = 3; // returned after its timer

  private final Semaphore semaphore;
  private final long timeoutNanos;
  private final Deadlines timeouts;
  private final SemaphoreFailures failures;
  private final TimeoutException unanswered;
  private final AtomicInteger overdue = new AtomicInteger();
  private volatile @Nullable Throwable latestFailure;
  private volatile long lastReturnedNanos = System.nanoTime() - Long.MAX_VALUE / 2; // long ago
  private volatile @Nullable Call latest;
  private volatile boolean closed;

  SemaphoreCalls(
      Semaphore semaphore, long timeoutNanos, Deadlines timeouts, SemaphoreFailures failures) {
    this.semaphore = semaphore;
    this.timeoutNanos = timeoutNanos;
    this.timeouts = timeouts;
    this.failures = failures;
    this.unanswered = new Unanswered(Duration.ofNanos(timeoutNanos));
  }

  /**
   * Whether {@code semaphore} needs this class: any but Jeton core's own, which are in-process and
   * answer at once.
   */
  static boolean mayBlock(Semaphore semaphore) {
    return !semaphore.getClass().getPackageName().equals(Semaphore.class.getPackageName());
  }

  /**
   * Asks for one permit, without queuing: the future completes with the permit or empty, fails with
   * the semaphore's failure, or fails with {@link #unanswered()} once the timeout passes. Only
   * chain on it: completing or cancelling it would lose the permit it may bring.
   */
  CompletableFuture<Optional<Permit>> tryAcquire() {
    Call call = new Call();
    if (closed) {
      call.failed(new SemaphoreClosedException("the admission control is closed"));
      return call;
    }
    call.timer = timeouts.schedule(call::timedOut, timeoutNanos);
    latest = call;
    CompletableFuture<Permit> trying;
    try {
      trying = semaphore.acquireAsync(1, Duration.ZERO);
    } catch (RuntimeException e) { // closed, its limit lowered to 0: an answer too
      call.failed(e);
      return call;
    } catch (Error e) { // returned all the same: an unreturned call would stay overdue
      call.failed(e);
      throw e;
    }
    var unused = trying.whenComplete(call::returned);
    return call;
  }

  /** The latest call made, if it has not returned yet (answered, failed or timed out). */
  @Nullable CompletableFuture<Optional<Permit>> inFlight() {
    Call call = latest;
    return call != null && !call.isDone() ? call : null;
  }

  /** Whether a call returned, answered or failed, within the timeout before now. */
  boolean returnedLately() {
    return System.nanoTime() - lastReturnedNanos < timeoutNanos;
  }

  /** How long a call may go unanswered. */
  long timeoutNanos() {
    return timeoutNanos;
  }

  /** Whether a call has gone unanswered for longer than the timeout, and still is. */
  boolean notAnswering() {
    return overdue.get() > 0;
  }

  /**
   * Why the semaphore cannot be relied on now, or null if it answers: {@link #unanswered()} while a
   * call is overdue, else the failure of the latest call to return, if it failed.
   */
  @Nullable Throwable trouble() {
    return notAnswering() ? unanswered : latestFailure;
  }

  /** The failure of a call that the semaphore did not answer in time. */
  TimeoutException unanswered() {
    return unanswered;
  }

  /** No call is made from now on; those in progress end as they will. */
  void close() {
    closed = true;
  }

  /** One call, and the future of its outcome. */
  private final class Call extends CompletableFuture<Optional<Permit>> {
    private final AtomicInteger state = new AtomicInteger(RUNNING);
    private volatile @Nullable Future<?> timer;

    /** The semaphore's answer to the try: see the Overview for what it says. */
    void returned(@Nullable Permit permit, @Nullable Throwable failure) {
      Throwable cause = failure == null ? null : SemaphoreFailures.unwrap(failure);
      if (cause instanceof TimeoutException && cause.getCause() != null) {
        failed(cause.getCause()); // it could not say: why is the failure
        return;
      }
      if (cause != null && !(cause instanceof TimeoutException)) {
        failed(cause);
        return;
      }
      latestFailure = null;
      returned();
      Optional<Permit> answer = Optional.ofNullable(permit);
      if (!complete(answer)) {
        answer.ifPresent(this::giveBack); // too late: its requester was answered without it
      }
    }

    void failed(Throwable failure) {
      latestFailure = failure;
      returned();
      completeExceptionally(failure);
    }

    void timedOut() {
      if (state.compareAndSet(RUNNING, OVERDUE)) {
        overdue.incrementAndGet();
        completeExceptionally(unanswered);
      }
    }

    private void returned() {
      lastReturnedNanos = System.nanoTime();
      if (state.compareAndSet(RUNNING, ANSWERED)) {
        Future<?> t = timer;
        if (t != null) {
          t.cancel(false);
        }
      } else if (state.compareAndSet(OVERDUE, LATE)) {
        overdue.decrementAndGet();
      }
    }

    private void giveBack(Permit permit) {
      try {
        permit.release();
      } catch (RuntimeException e) {
        failures.releaseFailed(e);
      }
    }
  }

  /** The semaphore did not answer in time; shared, without a stack: it says all there is. */
  private static final class Unanswered extends TimeoutException {
    private static final long serialVersionUID = 1L;

    Unanswered(Duration timeout) {
      super("the semaphore did not answer within " + timeout.toMillis() + " ms");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
