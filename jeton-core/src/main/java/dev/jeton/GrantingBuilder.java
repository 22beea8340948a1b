package dev.jeton;

import dev.jeton.internal.LeakTracker;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The options of builders whose primitive hands out grants that must be given back ({@link
 * Semaphore.Builder}, {@link KeyedSemaphore.Builder}, {@link Mutex.Builder}, {@link
 * ReadWriteLock.Builder}): how it watches for grants that are never released, and what becomes of
 * their permits. Their javadoc shows these methods as its own.
 *
 * @param <B> the builder itself
 */
abstract class GrantingBuilder<B extends GrantingBuilder<B>> extends PrimitiveBuilder<B> {
  private @Nullable LeakDetection leakDetection;
  private boolean releaseLeaked;

  GrantingBuilder() {}

  /**
   * How closely grants are watched for leaks: a permit, lock or guard collected by the garbage
   * collector without having been released is reported (see {@link LeakDetection}). Without this
   * call, the system property {@code jeton.leakDetection} decides, and {@link
   * LeakDetection#SAMPLED} without it.
   */
  public B leakDetection(LeakDetection level) {
    this.leakDetection = Objects.requireNonNull(level, "level");
    return self();
  }

  /**
   * Whether the permits of a grant reported leaked are given back to the primitive (true), or stay
   * taken (false, the default). They stay taken by default because an unreachable grant is no proof
   * that the work it guarded is done: a thread may still run it after dropping its reference, and
   * giving its permits back would let one more in than the limit. Give them back where a leak is
   * known to mean the work ended (a request handler that forgot its {@code finally}).
   */
  public B releaseLeaked(boolean release) {
    this.releaseLeaked = release;
    return self();
  }

  /** The tracker of a primitive {@code described} so in reports, or null if it watches nothing. */
  @Nullable LeakTracker leakTracker(String described) {
    return LeakTracker.of(leakDetection, releaseLeaked, described);
  }
}
