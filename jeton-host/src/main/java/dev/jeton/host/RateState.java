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
   * {@code gcra} at a new rate, from {@code now}, after the slot {@code lastSlot}.
   *
   * <p>A slower rate is {@link Gcra#setRate}'s: what is owed drains at the new rate, which keeps
   * the new bound over every window from the change on (the slots given out already are part of
   * what is owed). A debt too large to count in nanoseconds at the new rate is put about 73 years
   * ahead.
   *
   * <p>A faster rate must not give newcomers slots among the ones given already, which were spaced
   * at the old rate: every admission so far conforms to the new rate's schedule too (a slower
   * sequence conforms to a faster schedule of the same burst), whose theoretical arrival time is
   * then at most {@code lastSlot + burst T} for the new {@code T}, and at most the old one. So the
   * new time is the earlier of the two, rounded up to the new rate's fractions.
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
    Gcra fresh = new Gcra(permits, period, gcra.burst(), lastSlot); // checks the rate
    long newDen = fresh.denominator();
    // lastSlot + burst T, as whole nanoseconds and a fraction over newDen
    BigInteger[] burstT =
        BigInteger.valueOf(gcra.burst())
            .multiply(BigInteger.valueOf(period.toNanos()))
            .multiply(BigInteger.valueOf(newDen))
            .divideAndRemainder(BigInteger.valueOf(permits));
    // in units of 1/newDen: exact, since T = period / permits = num / newDen
    BigInteger capUnits =
        BigInteger.valueOf(lastSlot).multiply(BigInteger.valueOf(newDen)).add(burstT[0]);
    // the old time in units of 1/newDen, rounded up
    BigInteger[] oldFraction =
        BigInteger.valueOf(gcra.tatFraction())
            .multiply(BigInteger.valueOf(newDen))
            .divideAndRemainder(BigInteger.valueOf(gcra.denominator()));
    BigInteger oldUnits =
        BigInteger.valueOf(gcra.tatNanos())
            .multiply(BigInteger.valueOf(newDen))
            .add(oldFraction[0])
            .add(oldFraction[1].signum() > 0 ? BigInteger.ONE : BigInteger.ZERO);
    BigInteger[] tat = capUnits.min(oldUnits).divideAndRemainder(BigInteger.valueOf(newDen));
    long whole = tat[0].longValueExact();
    long fraction = tat[1].longValueExact();
    if (fraction < 0) {
      whole--;
      fraction += newDen;
    }
    return Gcra.restore(permits, period, gcra.burst(), whole, fraction);
  }
}
