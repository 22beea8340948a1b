package dev.jeton.internal;

import java.time.Duration;

/**
 * Argument checks shared by every {@code Semaphore} implementation, so that bad input gets the same
 * message from each. Not API: exported only to Jeton's own modules.
 */
public final class Arguments {
  private Arguments() {}

  private static final java.util.regex.Pattern NAME =
      java.util.regex.Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}");

  /**
   * Checks the name of a shared semaphore (or a key prefix): 1 to 200 letters, digits, '.', '_' and
   * '-', not starting with '.' and without '..'. One rule for every backend, so that a name that
   * works on one machine works in Redis too: it is a file name there and part of a key here.
   *
   * @param what what the value is, for the message ("the name", "the key prefix")
   */
  public static String checkName(String what, String value) {
    if (!NAME.matcher(value).matches() || value.contains("..")) {
      throw new IllegalArgumentException(
          what
              + " must be 1 to 200 letters, digits, '.', '_' or '-', neither starting with '.'"
              + " nor containing '..', was '"
              + value.replaceAll("\\p{Cntrl}", "?")
              + "'");
    }
    return value;
  }

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

  /**
   * A duration as a person writes it: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, in the
   * largest unit that shows it exactly (not Java's {@code PT0.5S}).
   */
  public static String format(Duration duration) {
    if (duration.isNegative()) {
      return "-" + format(duration.negated());
    }
    long[] sizes = {3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L, 1L};
    String[] units = {"h", "m", "s", "ms", "us", "ns"};
    long seconds = duration.getSeconds();
    if (seconds > Long.MAX_VALUE / 1_000_000_000L - 1) {
      return seconds % 3600 == 0 && duration.getNano() == 0 ? seconds / 3600 + "h" : seconds + "s";
    }
    long nanos = duration.toNanos();
    if (nanos == 0) {
      return "0s";
    }
    for (int i = 0; i < sizes.length; i++) {
      if (nanos % sizes[i] == 0) {
        return nanos / sizes[i] + units[i];
      }
    }
    throw new AssertionError(duration);
  }
}
