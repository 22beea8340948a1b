package dev.jeton.bench;

import dev.jeton.Fairness;
import dev.jeton.LeakDetection;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * One permit at a time, from one of the semaphores compared: the adapter that lets each benchmark
 * be written once. Every acquisition returns a <em>handle</em> that is passed back to {@link
 * #release}: Jeton's {@link dev.jeton.Permit}, or {@link #HELD} for libraries whose release needs
 * nothing.
 *
 * <p>An operation a library does not have throws {@link UnsupportedOperationException}; the
 * benchmarks leave such a library out of their {@code @Param} lists instead of faking it.
 *
 * <p>In one JMH fork only one implementation is ever loaded, so calls through this interface are
 * monomorphic and inlined: the adapter adds no dispatch cost. Never run these benchmarks with
 * {@code -f 0}.
 */
interface Limiter {
  /**
   * {@code dev.jeton.Semaphore} ({@code Semaphore.create(limit)}): strict FIFO, the default, and
   * leak detection at its default, {@code SAMPLED}.
   */
  String JETON = "jeton";

  /** {@link #JETON} with leak detection {@code OFF}: what sampling costs is the difference. */
  String JETON_LEAKS_OFF = "jeton-leaks-off";

  /** {@link #JETON} with leak detection {@code PARANOID}: every permit watched. */
  String JETON_LEAKS_PARANOID = "jeton-leaks-paranoid";

  /** A {@code dev.jeton.Semaphore} built with {@code Fairness.boundedBarging()}. */
  String JETON_BARGING = "jeton-barging";

  /** {@code java.util.concurrent.Semaphore(limit, true)}. */
  String JUC_FAIR = "juc-fair";

  /** {@code java.util.concurrent.Semaphore(limit, false)}. */
  String JUC_UNFAIR = "juc-unfair";

  /** {@code kotlinx.coroutines.sync.Semaphore(limit, 0)}. */
  String KOTLINX = "kotlinx";

  /** {@code com.ibm.asyncutil.locks.FairAsyncSemaphore(limit)}. */
  String IBM = "ibm";

  /**
   * An {@link java.util.concurrent.atomic.AtomicLong} counter: the least a counting semaphore
   * costs.
   */
  String CAS_FLOOR = "cas-floor";

  /** The handle of a library whose release needs no handle. */
  Object HELD = Held.HELD;

  /**
   * Makes the limiter named {@code impl} (one of the constants above) with {@code limit} permits.
   */
  static Limiter create(String impl, int limit) {
    return switch (impl) {
      case JETON -> new JetonLimiter(limit, Fairness.strictFifo());
      case JETON_LEAKS_OFF -> new JetonLimiter(limit, Fairness.strictFifo(), LeakDetection.OFF);
      case JETON_LEAKS_PARANOID ->
          new JetonLimiter(limit, Fairness.strictFifo(), LeakDetection.PARANOID);
      case JETON_BARGING -> new JetonLimiter(limit, Fairness.boundedBarging());
      case JUC_FAIR -> new JucLimiter(limit, true);
      case JUC_UNFAIR -> new JucLimiter(limit, false);
      case KOTLINX -> new KotlinxLimiter(limit);
      case IBM -> new IbmLimiter(limit);
      case CAS_FLOOR -> new CasFloorLimiter(limit);
      default -> throw new IllegalArgumentException("unknown implementation: " + impl);
    };
  }

  /** Acquires one permit, blocking the thread while it waits. */
  Object acquire() throws InterruptedException;

  /**
   * Acquires one permit that is known to be free, through the library's regular acquire entry point
   * (not {@code tryAcquire}), and fails if it would have had to wait. The default is {@link
   * #acquire()}; asynchronous libraries use their asynchronous acquire, which completes at once.
   */
  default Object acquireUncontended() throws InterruptedException {
    return acquire();
  }

  /** Acquires one permit if it is free now; returns null if not. */
  @Nullable Object tryAcquire();

  /**
   * Requests one permit without blocking; the stage completes with the handle once the permit is
   * held (at once if it is free).
   */
  CompletionStage<?> acquireAsync();

  /** Gives back the permit of {@code handle}, a value returned by one of the acquire methods. */
  void release(@Nullable Object handle);

  /** The permits free now; for sanity checks after a run. */
  int available();

  /** The library's own semaphore object, for memory measurement. */
  Object unwrap();

  /** The type of {@link #HELD}. */
  enum Held {
    HELD
  }
}
