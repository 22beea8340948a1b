package dev.jeton.http;

import dev.jeton.KeyedRateLimiter;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The options of {@link AdmissionControl.Builder} on rejecting: the status and {@code Retry-After}
 * of rejections, and a rate limit per key, applied before the concurrency limit, with its {@code
 * RateLimit} headers. Its javadoc shows these methods as the builder's own.
 *
 * @param <R> the request
 * @param <B> the builder itself
 */
abstract class RejectionOptions<R, B extends RejectionOptions<R, B>> extends LeakOptions<B> {
  // Read by AdmissionControl, in this package.
  int rejectionStatus = 503;
  long maxRetryAfterSeconds = 30;

  private @Nullable RateCheck<R, ?> rateLimit;
  private @Nullable ToIntFunction<? super R> rateWeight;
  private @Nullable String policyName;
  private boolean headersOnAdmitted;

  RejectionOptions() {}

  /**
   * The status of rejections: 503 Service Unavailable (the default) or 429 Too Many Requests.
   *
   * @throws IllegalArgumentException for any other status
   */
  public B rejectionStatus(int status) {
    if (status != 503 && status != 429) {
      throw new IllegalArgumentException("rejectionStatus must be 503 or 429, was " + status);
    }
    this.rejectionStatus = status;
    return self();
  }

  /**
   * The cap of the Retry-After estimate (default 30 s), rounded up to whole seconds.
   *
   * @throws IllegalArgumentException if {@code max} is below 1 second
   */
  public B maxRetryAfter(Duration max) {
    Objects.requireNonNull(max, "max");
    if (max.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("maxRetryAfter must be at least 1 s, was " + max);
    }
    this.maxRetryAfterSeconds = Rejection.retryAfterSeconds(max);
    return self();
  }

  /**
   * A rate limit per key, {@code key} a function of the request (the client address, an API token,
   * the route; never {@code null}), checked before the concurrency limit: a request over its key's
   * rate is rejected at once with {@link Reason#RATE_LIMITED}, status 429 (whatever {@code
   * rejectionStatus} says), a {@code Retry-After} of the time until it would pass (rounded up to
   * whole seconds, at least 1, not capped by {@code maxRetryAfter}), and the {@code
   * RateLimit-Policy} and {@code RateLimit} headers (IETF draft-ietf-httpapi-ratelimit-headers). A
   * request must pass both limits; one that passes this one and is then refused by the concurrency
   * limit, or withdrawn, gets its weight back, unless another request of its key passed since (see
   * {@link KeyedRateLimiter#giveBack}). Exempt requests are not counted. The limiter may be shared
   * with other controls; its {@code maxKeys} bounds the memory that client keys can take.
   */
  public <K> B rateLimit(Function<? super R, ? extends K> key, KeyedRateLimiter<K> limiter) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(limiter, "limiter");
    this.rateLimit = new RateCheck<>(key, limiter);
    return self();
  }

  /**
   * As {@link #rateLimit(Function, KeyedRateLimiter)}, with a limiter of {@code permits} per {@code
   * period} per key, a burst of {@code permits} and at most {@value
   * KeyedRateLimiter.Builder#DEFAULT_MAX_KEYS} keys.
   *
   * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive
   */
  public B rateLimit(Function<? super R, ?> key, long permits, Duration period) {
    return rateLimit(key, KeyedRateLimiter.builder().rate(permits, period).build());
  }

  /**
   * The weight of each request in the rate limit (default 1): an expensive route may count more. A
   * weight below 1 or above the limiter's burst fails the request's admission with an {@link
   * IllegalArgumentException} naming it.
   */
  public B rateWeight(ToIntFunction<? super R> weight) {
    this.rateWeight = Objects.requireNonNull(weight, "weight");
    return self();
  }

  /**
   * The name of the policy in the {@code RateLimit-Policy} and {@code RateLimit} headers (default
   * {@code "default"}), and whether admitted responses carry them too (default false: only
   * rejections do); see {@link AdmissionControl#rateLimitHeaders}.
   *
   * @throws IllegalArgumentException if {@code policyName} is empty or not printable ASCII
   */
  public B rateLimitHeaders(String policyName, boolean onAdmitted) {
    this.policyName = RateCheck.checkPolicyName(policyName);
    this.headersOnAdmitted = onAdmitted;
    return self();
  }

  /**
   * The rate check with its options, or null if there is none.
   *
   * @throws IllegalStateException if an option of the rate limit was set without one
   */
  @Nullable RateCheck<R, ?> rateCheck() {
    RateCheck<R, ?> r = rateLimit;
    if (r == null) {
      if (rateWeight != null || policyName != null) {
        throw new IllegalStateException(
            (rateWeight != null ? "rateWeight(...)" : "rateLimitHeaders(...)")
                + " configures a rate limit: set rateLimit(key, ...) too");
      }
      return null;
    }
    String name = policyName;
    return r.with(rateWeight, name != null ? name : "default", headersOnAdmitted);
  }
}
