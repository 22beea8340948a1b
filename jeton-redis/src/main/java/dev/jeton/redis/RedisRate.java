package dev.jeton.redis;

import dev.jeton.RateLimiter;
import java.math.BigInteger;
import java.time.Duration;

/**
 * A rate limiter's rate and burst as {@code rate.lua} keeps them: the rate as given ({@code
 * permits} per {@code periodNanos}) and the same rate as an exact emission interval of {@code q +
 * r/d} microseconds, reduced, with the bounds under which Lua's doubles stay exact.
 */
record RedisRate(long permits, long periodNanos, long q, long r, long d, int burst) {
  /** The largest {@code d}: a weight times {@code r} must stay below 2^53. */
  static final long MAX_DENOMINATOR = 1L << 21;

  /** The longest burst, in microseconds: 2^50, 35 years, far below 2^53 beside today's time. */
  static final long MAX_BURST_MICROS = 1L << 50;

  /**
   * The rate of {@code permits} per {@code period} with {@code burst}.
   *
   * @throws IllegalArgumentException if the in-process limiter would refuse the values, or the rate
   *     cannot be counted exactly in Redis
   */
  static RedisRate of(long permits, Duration period, int burst) {
    // the in-process builder's checks and messages: one set of rules for every limiter
    RateLimiter.builder().rate(permits, period).burst(burst);
    BigInteger num = BigInteger.valueOf(period.toNanos());
    BigInteger den = BigInteger.valueOf(permits).multiply(BigInteger.valueOf(1000));
    BigInteger gcd = num.gcd(den);
    num = num.divide(gcd);
    den = den.divide(gcd);
    if (den.compareTo(BigInteger.valueOf(MAX_DENOMINATOR)) > 0) {
      throw new IllegalArgumentException(
          "a rate of "
              + permits
              + " per "
              + period
              + " is too fine to count exactly in Redis (one permit every "
              + num
              + "/"
              + den
              + " µs): express it with fewer permits per period, or a rounder period");
    }
    BigInteger[] qr = num.divideAndRemainder(den);
    BigInteger burstMicros = num.multiply(BigInteger.valueOf(burst)).divide(den);
    if (burstMicros.compareTo(BigInteger.valueOf(MAX_BURST_MICROS)) > 0) {
      throw new IllegalArgumentException(
          "a burst of "
              + burst
              + " at "
              + permits
              + " per "
              + period
              + " takes more than 35 years to refill: choose a smaller burst or a faster rate");
    }
    return new RedisRate(
        permits,
        period.toNanos(),
        qr[0].longValueExact(),
        qr[1].longValueExact(),
        den.longValueExact(),
        burst);
  }

  /** This rate with another permits per period, the burst unchanged. */
  RedisRate withRate(long newPermits, Duration newPeriod) {
    return of(newPermits, newPeriod, burst);
  }

  Duration period() {
    return Duration.ofNanos(periodNanos);
  }

  /** {@code 'permits periodNs q r d'}: the rate as {@code rate.lua}'s set-rate takes it. */
  String rateArgument() {
    return permits + " " + periodNanos + " " + q + " " + r + " " + d;
  }

  /** {@code 'permits periodNs q r d burst'}: what {@code rate.lua} creates a limiter with. */
  String createArgument() {
    return rateArgument() + " " + burst;
  }

  /** Whether {@code other} admits at the same rate, however it was written. */
  boolean sameRate(RedisRate other) {
    return q == other.q && r == other.r && d == other.d;
  }

  @Override
  public String toString() {
    return permits + " per " + period() + " with a burst of " + burst;
  }
}
