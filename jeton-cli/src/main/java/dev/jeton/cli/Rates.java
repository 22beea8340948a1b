package dev.jeton.cli;

import dev.jeton.internal.Arguments;
import dev.jeton.internal.Gcra;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses rates written as a count of starts per period: {@code 10/1m}, {@code 5/30s}, {@code
 * 100/1h}, {@code 1/500ms} (the period as {@link Durations} writes one).
 */
final class Rates {
  private static final Pattern FORM = Pattern.compile("(\\d{1,12})/(.+)");

  /** The most starts per period: beyond, a count is more likely a typing slip than a rate. */
  static final long MAX_PERMITS = 1_000_000_000L;

  private Rates() {}

  /**
   * A rate: {@code permits} per {@code period}.
   *
   * @param permits how many may start per period, 1 or more
   * @param period the period, positive
   */
  record Rate(long permits, Duration period) {
    @Override
    public String toString() {
      return permits + "/" + Arguments.format(period);
    }
  }

  /** The converter picocli calls: a bad rate is a bad value of the option given. */
  static final class Converter implements ITypeConverter<Rate> {
    @Override
    public Rate convert(String text) {
      try {
        return parse(text);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /**
   * Parses {@code text}.
   *
   * @throws IllegalArgumentException naming {@code text}, if it is not a rate, or an absurd one
   */
  static Rate parse(String text) {
    String bad = "--rate '" + text + "' ";
    Matcher m = FORM.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          bad + "is not a rate: write starts per period, like 10/1m, 5/30s, 100/1h or 1/500ms");
    }
    long permits = Long.parseLong(m.group(1));
    if (permits < 1 || permits > MAX_PERMITS) {
      throw new IllegalArgumentException(
          bad + "must allow from 1 to " + MAX_PERMITS + " starts per period, not " + permits);
    }
    Duration period;
    try {
      period = Durations.parse(m.group(2));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(bad + "has a bad period: " + e.getMessage(), e);
    }
    if (period.isZero()) {
      throw new IllegalArgumentException(bad + "has a period of zero: it must be positive");
    }
    try {
      new Gcra(permits, period, (int) Math.min(permits, Integer.MAX_VALUE), 0);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(bad + "cannot be counted: " + e.getMessage(), e);
    }
    return new Rate(permits, period);
  }
}
