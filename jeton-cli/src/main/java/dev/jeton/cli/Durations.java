package dev.jeton.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parses durations written as a whole number and a unit: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}. */
final class Durations implements ITypeConverter<Duration> {
  private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

  @Override
  public Duration convert(String text) {
    return parse(text);
  }

  static Duration parse(String text) {
    Matcher m = FORM.matcher(text.trim());
    if (!m.matches()) {
      throw new TypeConversionException(
          "'" + text + "' is not a duration: write a number and a unit, like 500ms, 30s, 5m or 1h");
    }
    long amount = Long.parseLong(m.group(1));
    switch (m.group(2)) {
      case "ms":
        return Duration.ofMillis(amount);
      case "s":
        return Duration.ofSeconds(amount);
      case "m":
        return Duration.ofMinutes(amount);
      default:
        return Duration.ofHours(amount);
    }
  }
}
