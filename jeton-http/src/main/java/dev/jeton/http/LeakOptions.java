package dev.jeton.http;

import dev.jeton.LeakDetection;
import dev.jeton.Semaphore;
import dev.jeton.internal.LeakTracker;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The leak-detection options of {@link AdmissionControl.Builder}: how closely its tickets are
 * watched, and what becomes of the permit of one dropped unclosed. Its javadoc shows these methods
 * as the builder's own.
 *
 * @param <B> the builder itself
 */
abstract class LeakOptions<B extends LeakOptions<B>> {
  private @Nullable LeakDetection leakDetection;
  private boolean releaseLeaked;

  LeakOptions() {}

  /**
   * How closely tickets are watched for leaks: a ticket collected by the garbage collector without
   * having been closed (a handler that lost it) is reported (see {@link LeakDetection}). Without
   * this call, the system property {@code jeton.leakDetection} decides, and {@link
   * LeakDetection#SAMPLED} without it. The control's own semaphore is then not watched as well, so
   * that one leak makes one report; a semaphore given to the builder keeps its own level.
   */
  public B leakDetection(LeakDetection level) {
    this.leakDetection = Objects.requireNonNull(level, "level");
    return self();
  }

  /**
   * Whether a ticket reported leaked gives its permit back, as {@link Ticket#abandon()} would
   * (true), or keeps it (false, the default): an unreachable ticket is no proof that the request's
   * work is done, and giving its permit back would admit one more than the limit.
   */
  public B releaseLeaked(boolean release) {
    this.releaseLeaked = release;
    return self();
  }

  /** The tracker of the control's tickets, or null if it watches none. */
  @Nullable LeakTracker ticketTracker() {
    return LeakTracker.of(leakDetection, releaseLeaked, "admission control");
  }

  /** The control's own semaphore: not watched, as its tickets are (one leak, one report). */
  static Semaphore ownSemaphore(int limit) {
    return Semaphore.builder().limit(limit).leakDetection(LeakDetection.OFF).build();
  }

  @SuppressWarnings("unchecked") // B is the builder itself
  final B self() {
    return (B) this;
  }
}
