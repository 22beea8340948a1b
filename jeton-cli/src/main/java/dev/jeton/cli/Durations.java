package dev.jeton.cli;

import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses durations written as a whole number and a unit: {@code 500ms}, {@code 30s}, {@code 5m},
 * {@code 1h}.
 */
final class Durations {
  private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

  private Durations() {}

  /** The converter picocli calls: a bad duration is a bad value of the option given. */
  static final class Converter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String text) {
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
   * @throws IllegalArgumentException if it is not a duration, or too long
   */
  static Duration parse(String text) {
    Matcher m = FORM.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration: write a number and a unit, like 500ms, 30s, 5m or 1h");
    }
    long amount = Long.parseLong(m.group(1));
    Duration duration;
    switch (m.group(2)) {
      case "ms":
        duration = Duration.ofMillis(amount);
        break;
      case "s":
        duration = Duration.ofSeconds(amount);
        break;
      case "m":
        duration = Duration.ofMinutes(amount);
        break;
      default:
        duration = Duration.ofHours(amount);
    }
    if (duration.compareTo(MAX) > 0) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is too long: a duration may be at most "
              + Arguments.format(MAX)
              + " (about 290 years)");
    }
    return duration;
  }

  /** The longest duration: what fits in a long count of nanoseconds, in whole hours. */
  static final Duration MAX = Duration.ofHours(Long.MAX_VALUE / 3_600_000_000_000L);
}
