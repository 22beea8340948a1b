package dev.jeton.redis;

import java.time.Duration;
import java.time.Instant;

/**
 * Why a {@link RedisSemaphore} could not grant a request that would not wait: the semaphore is in
 * quarantine, recreated after Redis lost its state (a restart without persistence, a flush, an
 * eviction), and grants nothing until every lease of the lost state has run out, one lease time
 * after it was recreated.
 *
 * <p>{@link RedisSemaphore#tryAcquire(int)} throws it; a zero-timeout {@code acquire} or {@code
 * acquireAsync} fails with a {@link java.util.concurrent.TimeoutException} whose cause it is, as
 * does a request whose timeout runs out while the semaphore is in quarantine.
 */
public final class SemaphoreQuarantinedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final Instant until;
  private final Duration remaining;

  /**
   * Creates the exception for the semaphore {@code name}, in quarantine until {@code until}.
   *
   * @param name the semaphore's name
   * @param until when the quarantine ends, by the Redis server's clock
   * @param remaining how long the quarantine had to run when Redis said so
   */
  public SemaphoreQuarantinedException(String name, Instant until, Duration remaining) {
    super(
        "semaphore '"
            + name
            + "' is in quarantine until "
            + until
            + " (Redis's clock, "
            + remaining.toMillis()
            + " ms from its answer): Redis lost the semaphore's state,"
            + " and nothing is granted until every lease of the lost state has run out");
    this.until = until;
    this.remaining = remaining;
  }

  /** {@return when the quarantine ends, by the Redis server's clock} */
  public Instant until() {
    return until;
  }

  /** {@return how long the quarantine had to run when Redis said so} */
  public Duration remaining() {
    return remaining;
  }
}
