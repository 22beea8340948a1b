package dev.jeton.http;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * A rejected request: the HTTP status to answer with (503 or 429), how long the client should wait
 * before retrying, and why.
 *
 * <p>An adapter answers with {@code status}, a {@code Retry-After: }{@link #retryAfterSeconds()}
 * header, the {@link #headers()}, {@code Content-Type: text/plain} and a short body naming the
 * reason ({@link #message()}).
 *
 * @param status the HTTP status, from 400 to 599
 * @param retryAfter the estimated time until the request would be admitted; see {@link
 *     AdmissionControl} for the rule
 * @param reason why the request was rejected
 * @param headers more response headers, by name: a rejection by the rate limit has {@code
 *     RateLimit-Policy} and {@code RateLimit}; others have none
 */
public record Rejection(int status, Duration retryAfter, Reason reason, Map<String, String> headers)
    implements Decision {

  /**
   * Checks the fields, and copies {@code headers}.
   *
   * @throws IllegalArgumentException if {@code status} is not from 400 to 599 or {@code retryAfter}
   *     is negative
   */
  public Rejection {
    headers = Map.copyOf(headers);
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("status must be from 400 to 599, was " + status);
    }
    Objects.requireNonNull(retryAfter, "retryAfter");
    Objects.requireNonNull(reason, "reason");
    if (retryAfter.isNegative()) {
      throw new IllegalArgumentException("retryAfter must not be negative, was " + retryAfter);
    }
  }

  /**
   * A rejection with no more headers.
   *
   * @throws IllegalArgumentException if {@code status} is not from 400 to 599 or {@code retryAfter}
   *     is negative
   */
  public Rejection(int status, Duration retryAfter, Reason reason) {
    this(status, retryAfter, reason, Map.of());
  }

  /**
   * The value of the {@code Retry-After} header: {@link #retryAfter()} in whole seconds, rounded
   * up, and at least 1.
   */
  public long retryAfterSeconds() {
    return retryAfterSeconds(retryAfter);
  }

  /** The value of a {@code Retry-After} header for {@code d}: see {@link #retryAfterSeconds()}. */
  static long retryAfterSeconds(Duration d) {
    return Math.max(1, secondsUp(d));
  }

  /** {@code d} in whole seconds, rounded up. */
  static long secondsUp(Duration d) {
    long seconds = d.getSeconds();
    if (d.getNano() > 0 && seconds < Long.MAX_VALUE) { // a cap of FOREVER must not wrap
      seconds++;
    }
    return seconds;
  }

  /**
   * A short text for the response body, naming the reason: {@code "server busy (LIMIT_REACHED);
   * retry after 2 s"} and a line end.
   */
  public String message() {
    String what =
        switch (reason) {
          case LIMIT_REACHED -> "server busy";
          case QUEUE_FULL -> "server busy, queue full";
          case QUEUE_TIMEOUT -> "server busy, waited too long in the queue";
          case CLOSED -> "server shutting down";
          case UNAVAILABLE -> "server unavailable";
          case RATE_LIMITED -> "too many requests";
        };
    return what + " (" + reason + "); retry after " + retryAfterSeconds() + " s\n";
  }
}
