package dev.jeton.internal;

import java.time.Duration;

/**
 * Argument checks shared by every {@code Semaphore} implementation, so that bad input gets the
 * same message from each. Not API: exported only to Jeton's own modules.
 */
public final class Arguments {
  private Arguments() {}

  /** Checks a limit is 0 or more. */
  public static int checkLimit(int limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must be 0 or more, was " + limit);
    }
    return limit;
  }

  /** Checks a request's weight is from 1 to the limit. */
  public static void checkWeight(int permits, int limit) {
    if (permits < 1) {
      throw new IllegalArgumentException("permits must be 1 or more, was " + permits);
    }
    if (permits > limit) {
      throw new IllegalArgumentException(
          "permits must not exceed the limit " + limit + ", was " + permits);
    }
  }

  /** The timeout in nanoseconds, saturated at {@code Long.MAX_VALUE}; negative is refused. */
  public static long toNanos(Duration timeout) {
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, was " + timeout);
    }
    try {
      return timeout.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }
}
