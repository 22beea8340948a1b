package dev.jeton.cli;

import dev.jeton.RateLimiter;
import dev.jeton.internal.Arguments;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * {@code jeton run --rate}: waits for a slot of the rate limiter, at once with {@code --no-wait},
 * within what is left of {@code --timeout} (the permits, if any, were waited for first), or for as
 * long as it takes, cancelled by a signal as a wait for permits is.
 */
final class RateWait {
  private RateWait() {}

  /** Whether {@code run} got its slot; false if busy, timed out or signalled (said on stderr). */
  static boolean pass(
      RunCommand run, Backend backend, RateLimiter limiter, PrintWriter err, long startNanos)
      throws Exception {
    RunCommand.Waiting w = run.waiting;
    String what = "rate limiter '" + run.name + "'";
    if (w != null && w.noWait) {
      if (limiter.tryAcquire(run.weight)) {
        return true;
      }
      if (!run.quiet) {
        err.println(
            "jeton: "
                + what
                + " has no free slot now (--no-wait); the next in "
                + forHuman(limiter.timeToAdmit(run.weight)));
      }
      return false;
    }
    Duration timeout = w != null ? w.timeout : null;
    CompletableFuture<Void> future =
        timeout == null
            ? limiter.acquireAsync(run.weight)
            : limiter.acquireAsync(run.weight, left(timeout, startNanos));
    return run.await(
        future,
        err,
        (progress, waited) ->
            progress.show(
                run.name, () -> backend.rateStatus(limiter).waiters(), run.weight, waited),
        () ->
            "jeton: "
                + what
                + " has no slot within --timeout "
                + Arguments.format(java.util.Objects.requireNonNull(timeout))
                + " (its queue and its rate "
                + run.rate
                + ")");
  }

  /** What is left of {@code timeout}, counted from {@code startNanos}; never negative. */
  private static Duration left(Duration timeout, long startNanos) {
    Duration left = timeout.minusNanos(System.nanoTime() - startNanos);
    return left.isNegative() ? Duration.ZERO : left;
  }

  /**
   * A wait as a person reads it, rounded up: {@code 250ms} below a second, else as status shows
   * durations ({@code 6s}, {@code 59m 58s}, {@code 2h 03m 07s}).
   */
  static String forHuman(Duration wait) {
    long millis = wait.plusNanos(999_999).toMillis();
    if (millis < 1000) {
      return millis + "ms";
    }
    return StatusCommand.forHuman((millis + 999) / 1000);
  }
}
