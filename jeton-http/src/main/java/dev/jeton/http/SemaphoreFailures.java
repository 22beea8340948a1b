package dev.jeton.http;

import dev.jeton.SemaphoreClosedException;
import java.lang.System.Logger.Level;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What a failure of the semaphore means for the request it was for, and the log of those that
 * reject a request with {@link Reason#UNAVAILABLE}.
 */
final class SemaphoreFailures {
  /*
   * A semaphore fails when it is closed (CLOSED), when its limit was lowered below the one permit
   * a request asks for (LIMIT_REACHED), or, for a remote one, when its server is out of reach:
   * anything else, UNAVAILABLE. The failure may come wrapped, in the CompletionException of a
   * future built as a stage of another, or in an ExecutionException: the cause decides.
   *
   * An UNAVAILABLE failure is logged, since it is the only trace of why the server turned its
   * clients away, but at most once every REPORT_NANOS: a semaphore out of reach fails for every
   * request, and a log line per request would bury the log. A report carries the latest failure,
   * with its stack trace, and how many failures there were since the previous report; the stats
   * count them all (rejected(UNAVAILABLE)). Two atomics and no lock: `unreported` counts, and the
   * thread whose CAS moves `nextReport` on writes the report, so two threads never report the
   * same period.
   */

  /** At most one report in this many nanoseconds: 10 s. */
  static final long REPORT_NANOS = 10_000_000_000L;

  private final Supplier<System.Logger> logger; // looked up when there is something to log
  private final LongSupplier ticker;
  private final AtomicLong unreported = new AtomicLong();
  private final AtomicLong nextReport;

  /**
   * Reports through the logger that {@code logger} finds, on the first report: a control that never
   * fails never touches the logging backend (nor makes Lincheck copy its state).
   */
  SemaphoreFailures(Supplier<System.Logger> logger, LongSupplier ticker) {
    this.logger = logger;
    this.ticker = ticker;
    this.nextReport = new AtomicLong(ticker.getAsLong());
  }

  /** The reason to reject the request whose acquire failed with {@code failure}. */
  Reason reasonFor(Throwable failure) {
    Throwable cause = unwrap(failure);
    if (cause instanceof SemaphoreClosedException) {
      return Reason.CLOSED;
    }
    if (cause instanceof IllegalArgumentException) {
      return Reason.LIMIT_REACHED; // its limit was lowered below 1: no request fits
    }
    report(cause);
    return Reason.UNAVAILABLE;
  }

  /** The cause of {@code failure}, out of any CompletionException or ExecutionException. */
  static Throwable unwrap(Throwable failure) {
    Throwable f = failure;
    while ((f instanceof CompletionException || f instanceof ExecutionException)
        && f.getCause() != null) {
      f = f.getCause();
    }
    return f;
  }

  private void report(Throwable cause) {
    unreported.incrementAndGet();
    long now = ticker.getAsLong();
    long due = nextReport.get();
    if (now - due < 0 || !nextReport.compareAndSet(due, now + REPORT_NANOS)) {
      return; // reported lately, or being reported by another thread: counted for the next
    }
    long failures = unreported.getAndSet(0);
    logger.get().log(
        Level.WARNING,
        "the admission semaphore failed: "
            + failures
            + (failures == 1 ? " request" : " requests")
            + " rejected UNAVAILABLE since the last report; the latest failure:",
        cause);
  }
}
