package dev.jeton.http;

import dev.jeton.KeyedRateLimiter;
import java.util.function.Function;

/** Why a request was rejected. */
public enum Reason {
  /** Best-effort mode: every permit was taken when the request came. */
  LIMIT_REACHED,
  /** Queued mode: the queue was full (or, in LIFO mode, the request was pushed out of it). */
  QUEUE_FULL,
  /** Queued mode: the request waited {@code maxWait} without being admitted. */
  QUEUE_TIMEOUT,
  /** The {@link AdmissionControl} was closed. */
  CLOSED,
  /**
   * The limiter's semaphore failed (a remote semaphore out of reach): answered 503 whatever the
   * configured rejection status, since the client sent nothing wrong. The failure is logged; see
   * {@link AdmissionControl}.
   */
  UNAVAILABLE,
  /**
   * The request's key was over its rate limit ({@link AdmissionControl.Builder#rateLimit(Function,
   * KeyedRateLimiter)}): answered 429 whatever the configured rejection status, with a {@code
   * Retry-After} saying when it would pass and the {@code RateLimit-Policy} and {@code RateLimit}
   * headers.
   */
  RATE_LIMITED
}
