package dev.jeton.host;

import dev.jeton.internal.Gcra;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

/**
 * The stored schedule of a {@link HostRateLimiter}: the file {@code state}, holding the rate, the
 * burst, the theoretical arrival time ({@link Gcra}) and the boot it was written in. Made once by
 * the first opener, then only ever replaced whole (a new file renamed over it), under the queue's
 * {@code meta.lock}, so a reader sees the old schedule or the new one, never half of one.
 *
 * <p>The time is {@link System#nanoTime()}, which on Linux is {@code CLOCK_MONOTONIC}: one clock
 * for every process of the machine, never stepped by a change of the wall clock, but counted from
 * the boot. So the file names the boot ({@code /proc/sys/kernel/random/boot_id}), and a schedule
 * written in another boot means nothing now: it is read as a full bucket, at the stored rate.
 */
final class RateState {
  private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

  /** This boot, or "unknown" where the kernel does not say (a schedule is then always believed). */
  static final String BOOT = boot();

  private RateState() {}

  private static String boot() {
    try {
      return Files.readString(BOOT_ID).trim();
    } catch (IOException | RuntimeException notLinux) {
      return "unknown";
    }
  }

  /**
   * The text of the file for {@code gcra}, whose latest slot given out is {@code lastSlot} (a
   * faster rate needs it: see {@link #withRate}).
   */
  static String serialize(Gcra gcra, long lastSlot) {
    Properties p = new Properties();
    p.setProperty("permits", Long.toString(gcra.permits()));
    p.setProperty("periodNanos", Long.toString(gcra.period().toNanos()));
    p.setProperty("burst", Integer.toString(gcra.burst()));
    p.setProperty("boot", BOOT);
    p.setProperty("tatNanos", Long.toString(gcra.tatNanos()));
    p.setProperty("tatFraction", Long.toString(gcra.tatFraction()));
    p.setProperty("lastSlot", Long.toString(lastSlot));
    return Holder.store(p);
  }

  /**
   * The latest slot given out that {@code text} records; {@code now} if none, or another boot's.
   */
  static long lastSlot(String text, long now) {
    try {
      Properties p = new Properties();
      p.load(new StringReader(text));
      String last = p.getProperty("lastSlot");
      boolean thisBoot = BOOT.equals(p.getProperty("boot")) || BOOT.equals("unknown");
      return last != null && thisBoot ? Long.parseLong(last.trim()) : now;
    } catch (IOException | NumberFormatException damaged) {
      return now; // parse() says what is wrong with it
    }
  }

  /**
   * The schedule {@code text} holds, at {@code now}.
   *
   * @throws IOException naming {@code file} and the fix, if it is not a schedule
   */
  static Gcra parse(String text, long now, Path file, String name) throws IOException {
    try {
      Properties p = new Properties();
      p.load(new StringReader(text));
      long permits = Long.parseLong(required(p, "permits"));
      Duration period = Duration.ofNanos(Long.parseLong(required(p, "periodNanos")));
      int burst = Integer.parseInt(required(p, "burst"));
      if (!BOOT.equals(p.getProperty("boot")) && !BOOT.equals("unknown")) {
        return new Gcra(permits, period, burst, now); // another boot's clock: a full bucket
      }
      return Gcra.restore(
          permits,
          period,
          burst,
          Long.parseLong(required(p, "tatNanos")),
          Long.parseLong(required(p, "tatFraction")));
    } catch (IOException | IllegalArgumentException e) {
      throw new IOException(
          "the state file "
              + file
              + " of rate limiter '"
              + name
              + "' is damaged ("
              + e.getMessage()
              + "): remove it while no one uses the limiter, and open it again with its rate",
          e);
    }
  }

  private static String required(Properties p, String key) {
    String value = p.getProperty(key);
    if (value == null) {
      throw new IllegalArgumentException("no " + key);
    }
    return value.trim();
  }

  /** {@code permits} per {@code period} for a message: "10 per 1m". */
  static String format(long permits, Duration period) {
    return permits + " per " + dev.jeton.internal.Arguments.format(period);
  }

  /** Whether {@code a} per {@code aPeriod} is faster than {@code b} per {@code bPeriod}. */
  static boolean faster(long a, Duration aPeriod, long b, Duration bPeriod) {
    return BigInteger.valueOf(a)
            .multiply(BigInteger.valueOf(bPeriod.toNanos()))
            .compareTo(BigInteger.valueOf(b).multiply(BigInteger.valueOf(aPeriod.toNanos())))
        > 0;
  }

  /** How far ahead a schedule too slow to count in nanoseconds is put: about 73 years. */
  private static final long NEVER_NANOS = Long.MAX_VALUE / 4;

  /**
   * {@code gcra} at a new rate, from {@code now}, the latest slot given out being {@code lastSlot}.
   *
   * <p>A slower rate is {@link Gcra#setRate}'s: what is owed drains at the new rate (the slots
   * given out already are part of what is owed). A debt too large to count in nanoseconds at the
   * new rate is put about 73 years ahead.
   *
   * <p>A faster rate must keep every admission so far and every one to come conforming to the new
   * rate's schedule: its theoretical arrival time must be at least what that schedule would have,
   * run over the admissions so far. Two values are at least that: {@code lastSlot + burst T} (the
   * schedule's invariant after its last admission, T the new interval), and, while no slot lies
   * ahead, the old time rescaled (what is owed, drained faster). With slots ahead, the old time
   * itself is (a sequence that conforms to a slower schedule conforms to a faster one of the same
   * burst, which never runs ahead of it), not rescaled; and newcomers must not get slots before the
   * ones given out (first come, first served), so it is at least {@code lastSlot + (burst - 1) T}.
   */
  static Gcra withRate(Gcra gcra, long permits, Duration period, long lastSlot, long now) {
    if (!faster(permits, period, gcra.permits(), gcra.period())) {
      Gcra slower = gcra.copy();
      try {
        slower.setRate(permits, period, now);
        return slower;
      } catch (ArithmeticException beyondCounting) {
        return new Gcra(permits, period, gcra.burst(), now + NEVER_NANOS);
      }
    }
    BigInteger den = BigInteger.valueOf(new Gcra(permits, period, gcra.burst(), now).denominator());
    // T in units of 1/den: period / permits = num / den, exactly
    BigInteger interval =
        BigInteger.valueOf(period.toNanos()).multiply(den).divide(BigInteger.valueOf(permits));
    BigInteger last = BigInteger.valueOf(lastSlot).multiply(den);
    BigInteger burst = BigInteger.valueOf(gcra.burst());
    BigInteger tat = last.add(burst.multiply(interval));
    if (lastSlot - now > 0) {
      tat =
          tat.min(units(gcra, den))
              .max(last.add(burst.subtract(BigInteger.ONE).multiply(interval)));
    } else {
      Gcra rescaled = gcra.copy();
      rescaled.setRate(permits, period, now); // faster: what is owed only shrinks
      tat = tat.min(units(rescaled, den));
    }
    BigInteger[] split = tat.divideAndRemainder(den);
    long whole = split[0].longValueExact();
    long fraction = split[1].longValueExact();
    if (fraction < 0) {
      whole--;
      fraction += den.longValueExact();
    }
    return Gcra.restore(permits, period, gcra.burst(), whole, fraction);
  }

  /** The theoretical arrival time of {@code gcra} in units of {@code 1/den}, rounded up. */
  private static BigInteger units(Gcra gcra, BigInteger den) {
    BigInteger[] fraction =
        BigInteger.valueOf(gcra.tatFraction())
            .multiply(den)
            .divideAndRemainder(BigInteger.valueOf(gcra.denominator()));
    return BigInteger.valueOf(gcra.tatNanos())
        .multiply(den)
        .add(fraction[0])
        .add(fraction[1].signum() > 0 ? BigInteger.ONE : BigInteger.ZERO);
  }
}
