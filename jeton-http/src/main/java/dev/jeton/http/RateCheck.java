package dev.jeton.http;

import dev.jeton.KeyedRateLimiter;
import java.math.BigInteger;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The rate limit per key in front of an {@link AdmissionControl}'s concurrency limit, and the
 * headers that describe it, in the structured-field form of draft-ietf-httpapi-ratelimit-headers
 * (decision 110 says which revisions):
 *
 * <pre>
 * RateLimit-Policy: "default";q=100;w=60
 * RateLimit: "default";r=42;t=17
 * </pre>
 *
 * <p>{@code q} per {@code w} seconds is the rate: {@code w} is the period rounded up to whole
 * seconds (the draft has no fractions), {@code q} the permits in that window, rounded down. {@code
 * r} is the weight the key could pass at once now (its burst after a pause). {@code t} is, on a
 * rejection, the {@code Retry-After} (the draft asks both to name the same moment), else the
 * seconds until the key's quota is whole again, rounded up.
 *
 * <p>A request must pass the rate limit, then the concurrency limit; a request the concurrency
 * limit refuses (or that is withdrawn) gets its weight back ({@link KeyedRateLimiter#giveBack}),
 * when that keeps the bound: the client is not charged for the server's overload.
 */
final class RateCheck<R, K> {
  private final Function<? super R, ? extends K> key;
  private final KeyedRateLimiter<K> limiter;
  private final @Nullable ToIntFunction<? super R> weight; // null: 1
  private final String policyName; // a structured-field string, quoted
  private final String policy; // the RateLimit-Policy value
  private final boolean onAdmitted;

  RateCheck(Function<? super R, ? extends K> key, KeyedRateLimiter<K> limiter) {
    this(key, limiter, null, "default", false);
  }

  private RateCheck(
      Function<? super R, ? extends K> key,
      KeyedRateLimiter<K> limiter,
      @Nullable ToIntFunction<? super R> weight,
      String policyName,
      boolean onAdmitted) {
    this.key = key;
    this.limiter = limiter;
    this.weight = weight;
    this.policyName = "\"" + policyName.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    this.onAdmitted = onAdmitted;
    long w = Math.max(1, Rejection.secondsUp(limiter.period()));
    BigInteger q =
        BigInteger.valueOf(limiter.permits())
            .multiply(BigInteger.valueOf(w).multiply(BigInteger.valueOf(1_000_000_000L)))
            .divide(BigInteger.valueOf(limiter.period().toNanos()));
    this.policy = this.policyName + ";q=" + q + ";w=" + w;
  }

  /** This check with the builder's other options. */
  RateCheck<R, K> with(
      @Nullable ToIntFunction<? super R> weight, String policyName, boolean onAdmitted) {
    return new RateCheck<>(key, limiter, weight, policyName, onAdmitted);
  }

  /**
   * Checks a policy name: a structured-field string holds printable ASCII only.
   *
   * @throws IllegalArgumentException naming it otherwise
   */
  static String checkPolicyName(String name) {
    Objects.requireNonNull(name, "policyName");
    if (name.isEmpty() || !name.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
      throw new IllegalArgumentException(
          "policyName must be printable ASCII, not empty, was \"" + name + "\"");
    }
    return name;
  }

  /**
   * Passes {@code request} through the rate limit, then {@code next} (the concurrency limit), or
   * rejects it with {@link Reason#RATE_LIMITED}.
   */
  CompletableFuture<Decision> admit(
      R request, Ledger ledger, Function<R, CompletableFuture<Decision>> next) {
    K k = Objects.requireNonNull(key.apply(request), "the rateLimit key function returned null");
    KeyedRateLimiter.Attempt attempt = limiter.attempt(k, weightOf(request));
    if (!attempt.passed()) {
      long seconds = Rejection.retryAfterSeconds(attempt.retryAfter());
      return CompletableFuture.completedFuture(
          ledger.rateLimited(attempt.retryAfter(), headers(attempt, seconds)));
    }
    CompletableFuture<Decision> decision = next.apply(request);
    var unused = // a rejection or a withdrawal: the request was not served, charge nothing
        decision.whenComplete(
            (d, withdrawn) -> {
              if (!(d instanceof Ticket)) {
                limiter.giveBack(attempt);
              }
            });
    return decision;
  }

  /** The headers of an admitted response to {@code request}: its key's quota now. */
  Map<String, String> admittedHeaders(R request) {
    if (!onAdmitted) {
      return Map.of();
    }
    K k = Objects.requireNonNull(key.apply(request), "the rateLimit key function returned null");
    KeyedRateLimiter.Attempt now = limiter.peek(k, weightOf(request));
    return headers(now, Rejection.secondsUp(now.untilFull()));
  }

  private Map<String, String> headers(KeyedRateLimiter.Attempt attempt, long resetSeconds) {
    return Map.of(
        "RateLimit-Policy",
        policy,
        "RateLimit",
        policyName + ";r=" + attempt.available() + ";t=" + resetSeconds);
  }

  private int weightOf(R request) {
    ToIntFunction<? super R> w = weight;
    return w == null ? 1 : w.applyAsInt(request);
  }

  @Override
  public String toString() {
    return "rate limit " + policy + " per key, " + limiter;
  }
}
