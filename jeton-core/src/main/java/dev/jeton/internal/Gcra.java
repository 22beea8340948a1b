package dev.jeton.internal;

import java.math.BigInteger;
import java.time.Duration;

/**
 * The schedule of a rate limiter: the generic cell rate algorithm (GCRA), whose one value of state
 * is the theoretical arrival time ({@code tat}), the moment at which the bucket would be full again
 * had nothing more been admitted. Not thread-safe: its limiter guards it with its lock (a keyed
 * limiter, with the schedule's own monitor).
 *
 * <p>A rate of {@code permits} per {@code period} admits one unit of weight every emission interval
 * {@code T = period / permits}; a request of weight {@code w} may pass at {@code now} if {@code tat
 * - now <= (burst - w) T}, and passing moves {@code tat} to {@code max(tat, now) + w T}. Then over
 * any window of length {@code t} the weight admitted is at most {@code burst + t / T}: the bucket
 * holds at most {@code burst} at the window's start and fills at {@code 1 / T}.
 *
 * <p>Exact arithmetic. {@code T} is rarely a whole number of nanoseconds (3 per second is
 * 333,333,333 and a third), and rounding it down would admit more than the rate. So {@code T} is
 * kept as the reduced fraction {@code num / den} of nanoseconds, and {@code tat} as whole
 * nanoseconds plus {@code tatFraction / den}, with {@code 0 <= tatFraction < den}. Every product of
 * a weight and {@code num} fits a {@code long}: the constructor and {@link #setRate} refuse a rate
 * whose {@code burst * num} would not.
 *
 * <p>Invariant: after every call, {@code tat <= now + burst T} for the {@code now} it was given (an
 * admission only happens when it holds after it), so {@code (tat - now) * den} fits a long too. (A
 * schedule that admits at a moment ahead of the present, as the machine-wide limiter does for its
 * queue, keeps it for that moment: {@code (tat - now) * den} may then overflow, which {@link
 * #admissibleAt} allows for.)
 *
 * <p>Shared by the in-process limiters ({@code dev.jeton}) and the machine-wide one in {@code
 * jeton-host}, which keeps the state in a file ({@link #tatNanos}, {@link #tatFraction}, {@link
 * #restore}); public to Jeton's modules only (this package is not exported beyond them).
 */
public final class Gcra {
  /**
   * The rate and the burst, immutable, so that the schedules of many keys ({@link
   * PerKeyRateLimiter}) share one and each carries only its theoretical arrival time.
   */
  public static final class Rate {
    /** The most weight that may pass at once. */
    public final int burst;

    /** T's numerator, nanoseconds. */
    public final long num;

    /** T's denominator. */
    public final long den;

    /** The rate as given, for permits(). */
    public final long permits;

    /** The rate's period as given. */
    public final Duration period;

    /**
     * {@code permits} per {@code period} with {@code burst}.
     *
     * @throws IllegalArgumentException naming the bad value
     */
    public Rate(long permits, Duration period, int burst) {
      this.burst = checkBurst(burst);
      if (permits < 1) {
        throw new IllegalArgumentException(
            "rate must be 1 or more permits per period, was " + permits);
      }
      long periodNanos = periodNanos(period);
      long gcd = BigInteger.valueOf(permits).gcd(BigInteger.valueOf(periodNanos)).longValueExact();
      long n = periodNanos / gcd;
      if (Math.multiplyHigh(n, burst) != 0 || n * burst < 0) {
        throw new IllegalArgumentException(
            "a rate of "
                + permits
                + " per "
                + period
                + " with a burst of "
                + burst
                + " is too fine to count exactly: express it with fewer permits per period");
      }
      this.num = n;
      this.den = permits / gcd;
      this.permits = permits;
      this.period = period;
    }
  }

  private Rate rate;
  private long tatNanos;
  private long tatFraction; // in [0, rate.den)

  /** A full bucket at {@code now}: {@code burst} may pass at once. */
  public Gcra(long permits, Duration period, int burst, long now) {
    this(new Rate(permits, period, burst), now);
  }

  /** A full bucket at {@code now}, on {@code rate}, which it may share with other schedules. */
  public Gcra(Rate rate, long now) {
    this.rate = rate;
    this.tatNanos = now;
  }

  private Gcra(Gcra other) {
    this.rate = other.rate;
    this.tatNanos = other.tatNanos;
    this.tatFraction = other.tatFraction;
  }

  /** A copy, to project the queue's admissions without changing this schedule. */
  public Gcra copy() {
    return new Gcra(this);
  }

  /** {@return {@code burst}} @throws IllegalArgumentException if it is below 1 */
  public static int checkBurst(int burst) {
    if (burst < 1) {
      throw new IllegalArgumentException("burst must be 1 or more, was " + burst);
    }
    return burst;
  }

  private static long periodNanos(Duration period) {
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("the period must be positive, was " + period);
    }
    try {
      return period.toNanos();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("the period is too long: " + period, e);
    }
  }

  /** {@return the most weight that may pass at once} */
  public int burst() {
    return rate.burst;
  }

  /** {@return the rate's permits per {@link #period()}, as given} */
  public long permits() {
    return rate.permits;
  }

  /** {@return the rate's period, as given} */
  public Duration period() {
    return rate.period;
  }

  /**
   * The earliest time, at or after {@code now}, at which a request of {@code weight} may pass if
   * nothing else is admitted meanwhile: {@code now} itself if it may pass now.
   */
  public long admissibleAt(long now, int weight) {
    Rate r = rate;
    long slack = (r.burst - weight) * r.num; // how far tat may run ahead of the moment of passing
    long ahead = tatNanos - now; // tat - now = ahead + tatFraction / den
    if (ahead < 0 || multiplyFits(ahead, r.den) && ahead * r.den + tatFraction <= slack) {
      return now;
    }
    // the least t with (tatNanos - t) * den + tatFraction <= slack
    return tatNanos - Math.floorDiv(slack - tatFraction, r.den);
  }

  private static boolean multiplyFits(long a, long b) {
    return Math.multiplyHigh(a, b) == 0 && a * b >= 0;
  }

  /**
   * Whether the bucket is full at {@code now} ({@code tat <= now}): such a schedule admits exactly
   * what a new one made at {@code now} would, now and later, so it may be dropped and made again.
   */
  public boolean fullAt(long now) {
    long ahead = tatNanos - now;
    return ahead < 0 || ahead == 0 && tatFraction == 0;
  }

  /** The theoretical arrival time, rounded up to whole nanoseconds: when the bucket is full. */
  public long fullAtNanos() {
    return tatFraction == 0 ? tatNanos : tatNanos + 1;
  }

  /**
   * The weight that may pass at {@code now}, from 0 to the burst: {@code floor(burst - (tat - now)
   * / T)}.
   */
  public int available(long now) {
    Rate r = rate;
    long ahead = tatNanos - now;
    if (ahead < 0) {
      return r.burst;
    }
    // (tat - now) / T = (ahead * den + tatFraction) / num, with ahead * den within burst * num
    long owed = ahead * r.den + tatFraction;
    return (int) Math.max(0, r.burst - Math.floorDiv(owed + r.num - 1, r.num));
  }

  /** Admits {@code weight} at {@code now}; only after {@link #admissibleAt} said {@code now}. */
  public void admit(long now, int weight) {
    if (tatNanos - now < 0) {
      tatNanos = now;
      tatFraction = 0;
    }
    long sum = tatFraction + weight * rate.num;
    tatNanos += sum / rate.den;
    tatFraction = sum % rate.den;
  }

  /**
   * Takes back the admission of {@code weight}, made earlier, whose grant reached no one (its
   * request gave up as it was granted): the bucket gets that weight back, as if it had not passed.
   * Whatever others were admitted since stays admitted.
   */
  public void giveBack(int weight) {
    long sum = tatFraction - weight * rate.num;
    tatNanos += Math.floorDiv(sum, rate.den);
    tatFraction = Math.floorMod(sum, rate.den);
  }

  /**
   * Whether the theoretical arrival time is exactly {@code nanos} and {@code fraction}: whether
   * nothing was admitted or given back since it was.
   */
  public boolean isAt(long nanos, long fraction) {
    return tatNanos == nanos && tatFraction == fraction;
  }

  /**
   * Marks this schedule dropped from a keyed limiter's table, for good: a thread that found it
   * there before it was dropped must look the key up again. The fraction, otherwise in {@code [0,
   * den)}, says so, at no cost in memory.
   */
  public void retire() {
    tatFraction = -1;
  }

  /** Whether {@link #retire()} was called. */
  public boolean retired() {
    return tatFraction < 0;
  }

  /** {@return the whole nanoseconds of the theoretical arrival time} */
  public long tatNanos() {
    return tatNanos;
  }

  /** {@return the rest of the theoretical arrival time, in units of {@link #denominator()}} */
  public long tatFraction() {
    return tatFraction;
  }

  /**
   * Changes the rate at {@code now}, keeping what the bucket holds: the weight still to drain,
   * {@code (tat - now) / T}, drains at the new rate. Refuses a bad rate, changing nothing.
   */
  public void setRate(long newPermits, Duration newPeriod, long now) {
    Rate old = rate;
    Rate r = new Rate(newPermits, newPeriod, old.burst);
    rate = r;
    if (tatNanos - now <= 0) {
      return; // the bucket is full: nothing to drain
    }
    // owed = ((tatNanos - now) * oldDen + tatFraction) / oldNum emission intervals, at the new
    // T = num / den: tat - now = owed * num / den. Rounded up, so the change admits nothing extra.
    BigInteger owedTimesOldNum =
        BigInteger.valueOf(tatNanos - now)
            .multiply(BigInteger.valueOf(old.den))
            .add(BigInteger.valueOf(tatFraction));
    BigInteger[] nanos =
        owedTimesOldNum
            .multiply(BigInteger.valueOf(r.num))
            .divideAndRemainder(BigInteger.valueOf(old.num).multiply(BigInteger.valueOf(r.den)));
    // tat - now = nanos[0] + nanos[1] / (oldNum * den) = nanos[0] + (nanos[1] / oldNum) / den:
    // kept in units of 1 / den, rounded up
    BigInteger fraction =
        nanos[1].add(BigInteger.valueOf(old.num - 1)).divide(BigInteger.valueOf(old.num));
    long whole = nanos[0].longValueExact();
    long frac = fraction.longValueExact();
    if (frac == r.den) {
      whole++;
      frac = 0;
    }
    tatNanos = now + whole;
    tatFraction = frac;
  }

  /** {@return the denominator of the emission interval, and of {@link #tatFraction()}} */
  public long denominator() {
    return rate.den;
  }

  /**
   * A schedule of {@code permits} per {@code period} and {@code burst} whose theoretical arrival
   * time is {@code tatNanos + tatFraction / denominator()}: one saved with {@link #tatNanos()} and
   * {@link #tatFraction()}.
   *
   * @throws IllegalArgumentException if the rate or burst is bad, or {@code tatFraction} is not in
   *     {@code [0, denominator())}
   */
  public static Gcra restore(
      long permits, Duration period, int burst, long tatNanos, long tatFraction) {
    Gcra gcra = new Gcra(permits, period, burst, tatNanos);
    if (tatFraction < 0 || tatFraction >= gcra.rate.den) {
      throw new IllegalArgumentException(
          "the fraction " + tatFraction + " is not in [0, " + gcra.rate.den + ")");
    }
    gcra.tatFraction = tatFraction;
    return gcra;
  }

  @Override
  public String toString() {
    return rate.permits + " per " + rate.period + ", burst " + rate.burst;
  }
}
