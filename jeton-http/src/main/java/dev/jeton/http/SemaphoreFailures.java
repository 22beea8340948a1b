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
   * count them all (rejected(UNAVAILABLE)). A permit that fails to go back when its ticket
   * closes (a remote release that never arrives: the server lets the lease expire) is reported
   * the same way, in reports of its own, and never thrown at the thread closing the ticket.
   *
   * Each kind of report takes two atomics and no lock: `unreported` counts, and the thread whose
   * CAS moves `nextReport` on writes the report, so two threads never report the same period.
   */

  /** At most one report in this many nanoseconds: 10 s. */
  static final long REPORT_NANOS = 10_000_000_000L;

  private final Supplier<System.Logger> logger; // looked up when there is something to log
  private final LongSupplier ticker;
  private final Reports rejections;
  private final Reports releases;

  /**
   * Reports through the logger that {@code logger} finds, on the first report: a control that never
   * fails never touches the logging backend (nor makes Lincheck copy its state).
   */
  SemaphoreFailures(Supplier<System.Logger> logger, LongSupplier ticker) {
    this.logger = logger;
    this.ticker = ticker;
    this.rejections = new Reports(" rejected UNAVAILABLE since the last report");
    this.releases = new Reports(" whose permit failed to go back since the last report");
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
    rejections.report(cause);
    return Reason.UNAVAILABLE;
  }

  /**
   * Logs, at most every 10 s, that a ticket's permit failed to go back with {@code failure}: a
   * remote release that did not arrive (the server lets the lease expire), or a semaphore's bug.
   * The ticket is closed all the same; the failure never reaches the thread that closed it.
   */
  void releaseFailed(Throwable failure) {
    releases.report(unwrap(failure));
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

  /** One kind of failure's reports: a count since the last one, and when the next is due. */
  private final class Reports {
    private final String since;
    private final AtomicLong unreported = new AtomicLong();
    private final AtomicLong nextReport = new AtomicLong(ticker.getAsLong());

    Reports(String since) {
      this.since = since;
    }

    void report(Throwable cause) {
      unreported.incrementAndGet();
      long now = ticker.getAsLong();
      long due = nextReport.get();
      if (now - due < 0 || !nextReport.compareAndSet(due, now + REPORT_NANOS)) {
        return; // reported lately, or being reported by another thread: counted for the next
      }
      long failures = unreported.getAndSet(0);
      logger
          .get()
          .log(
              Level.WARNING,
              "the admission semaphore failed: "
                  + failures
                  + (failures == 1 ? " request" : " requests")
                  + since
                  + "; the latest failure:",
              cause);
    }
  }
}
