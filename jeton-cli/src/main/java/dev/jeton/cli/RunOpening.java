package dev.jeton.cli;

import dev.jeton.RateLimiter;
import dev.jeton.Semaphore;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * What {@code jeton run} checks and opens before it waits: its options together (each bad one fails
 * with exit 2 and a message naming it), the semaphore and the rate limiter. Nothing is created for
 * a request that could never be granted.
 */
final class RunOpening {
  private RunOpening() {}

  /** Checks what the options say together; each fails with exit 2 and a message naming it. */
  static void checkOptions(RunCommand run) {
    if (run.weight < 1) {
      throw new IllegalArgumentException("--weight must be 1 or more, was " + run.weight);
    }
    Integer l = run.limit;
    if (l != null && l < 1) {
      throw new IllegalArgumentException("--permits must be 1 or more, was " + l);
    }
    if (l != null && run.weight > l) {
      throw new IllegalArgumentException("--weight " + run.weight + " is more than --permits " + l);
    }
    if (run.busyExitCode < 0 || run.busyExitCode > 255) {
      throw new IllegalArgumentException(
          "-E must be an exit code from 0 to 255, was " + run.busyExitCode);
    }
    checkRateOptions(run);
    if (!run.jeton.usesRedis() && (run.lease != null || run.onLost != null)) {
      throw new IllegalArgumentException(
          (run.lease != null ? "--lease" : "--on-lost")
              + " needs --redis (or JETON_REDIS_URL): only a Redis permit is a lease that can"
              + " run out; this machine's permits last as long as the command runs");
    }
  }

  private static void checkRateOptions(RunCommand run) {
    Rates.Rate r = run.rate;
    Integer b = run.burst;
    if (b != null && r == null) {
      throw new IllegalArgumentException("--burst needs --rate");
    }
    if (b != null && b < 1) {
      throw new IllegalArgumentException("--burst must be 1 or more, was " + b);
    }
    if (r != null && run.weight > (b != null ? b : Math.min(r.permits(), Integer.MAX_VALUE))) {
      throw new IllegalArgumentException(
          "--weight "
              + run.weight
              + " is more than the burst "
              + (b != null ? b : r.permits())
              + " of --rate "
              + r
              + ": give --burst "
              + run.weight
              + " or more");
    }
  }

  /** Whether the command needs permits of a semaphore: without --rate, or with --permits. */
  static boolean usesSemaphore(RunCommand run) {
    return run.rate == null || run.limit != null;
  }

  /**
   * Opens the semaphore, creating it only if the request fits the limit it would get, so that a bad
   * --weight changes nothing.
   */
  static Semaphore open(RunCommand run, Backend backend) throws IOException {
    String what = String.join(" ", run.command);
    if (run.limit != null || run.weight == 1) {
      return checkFits(run, backend.open(run.name, run.limit, 1, what));
    }
    try {
      return checkFits(run, backend.open(run.name, null, 0, what));
    } catch (IllegalArgumentException e) {
      if (String.valueOf(e.getMessage()).startsWith("there is no semaphore")) {
        throw new IllegalArgumentException(
            e.getMessage()
                + "; to create it for --weight "
                + run.weight
                + ", give --permits "
                + run.weight
                + " or more");
      }
      throw e;
    }
  }

  private static Semaphore checkFits(RunCommand run, Semaphore semaphore) {
    int stored = semaphore.limit();
    if (run.weight > stored) {
      throw new IllegalArgumentException(
          "--weight "
              + run.weight
              + " is more than the limit "
              + stored
              + " of semaphore '"
              + run.name
              + "'");
    }
    return semaphore;
  }

  static @Nullable RateLimiter openRate(RunCommand run, Backend backend) throws IOException {
    Rates.Rate r = run.rate;
    if (r == null) {
      return null;
    }
    Integer b = run.burst;
    RateLimiter limiter =
        backend.openRate(run.name, r, b != null ? b : 0, String.join(" ", run.command));
    if (run.weight > limiter.burst()) {
      throw new IllegalArgumentException(
          "--weight "
              + run.weight
              + " is more than the burst "
              + limiter.burst()
              + " of '"
              + run.name
              + "'");
    }
    return limiter;
  }
}
