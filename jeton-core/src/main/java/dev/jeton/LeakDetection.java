package dev.jeton;

/**
 * How closely a primitive watches for grants that are never given back: a {@link Permit} or a
 * {@link Guard} (of an in-process primitive, or of a machine-wide semaphore), a Redis lease, or an
 * admission ticket, that becomes unreachable without being released, its permits gone for as long
 * as the process runs (a Redis lease is renewed for that long, and the limit of the whole fleet
 * shrinks).
 *
 * <p>A grant that is watched and is collected by the garbage collector without having been released
 * is reported once, through {@link System.Logger} (logger {@code dev.jeton.leak}, level {@code
 * WARNING}, so it reaches SLF4J, Log4j or {@code java.util.logging} as the application set them
 * up): which primitive, how many permits, how long they were held, and, for a sampled grant, the
 * stack of the call that acquired it. It is counted in the primitive's statistics. A leak is found
 * only when the collector runs, so a report can come long after the grant was dropped.
 *
 * <p>The level is set per primitive on its builder; a builder that sets none takes the system
 * property {@code jeton.leakDetection} ({@code off}, {@code sampled} or {@code paranoid}, in any
 * case, read when the primitive is built), and {@link #SAMPLED} without it. A property of any other
 * value fails the build with an {@code IllegalArgumentException} that names the three: a typo would
 * otherwise turn detection off, or on, unseen.
 *
 * <p>What happens to a leaked grant's permits is the builder's choice too: by default they stay
 * taken, because a grant that is unreachable is no proof that the work it guarded is done (the work
 * may still run on a thread that dropped the reference); a builder can ask for them to be given
 * back once reported (a Redis lease is then released: its renewals stop and Redis frees it).
 *
 * <p>Beside a round trip to Redis, watching a lease costs nothing worth sparing, so a Redis
 * semaphore watches one step more at each level: at {@link #SAMPLED} every lease, with the stack of
 * one in 1,024; at {@link #PARANOID} every lease with its stack.
 */
public enum LeakDetection {
  /** No grant is watched, and nothing is reported. Costs nothing. */
  OFF,

  /**
   * The default: one acquisition in 1,024 is watched, with the stack of the call that made it. A
   * grant leaked on every call is found within about a thousand leaks; one leaked once may never
   * be. Costs a countdown per acquisition, and about a microsecond (the stack) per watched one:
   * about 1 ns, 6%, on an uncontended semaphore's acquire and release (17.5 ns against 16.5 on a
   * machine where a CAS costs 5), 13% where nothing but that acquire and release runs in a loop.
   */
  SAMPLED,

  /**
   * Every acquisition is watched, so every leak is reported; one in 1,024 also records the stack of
   * the call that made it, as {@link #SAMPLED} does. Costs a small record per grant (about 80 bytes
   * while it is held), made at acquisition and dropped at release: about two and a half times
   * {@link #OFF} on an uncontended semaphore's acquire and release (40 ns against 16.5), for
   * finding a leak that sampling misses.
   */
  PARANOID
}
