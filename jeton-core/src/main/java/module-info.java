/**
 * Jeton core: the in-process {@link dev.jeton.Semaphore} and the primitives built on it.
 *
 * <p>Only {@code dev.jeton} is exported as API; implementations are package-private. {@code
 * dev.jeton.internal} (helpers) and {@code dev.jeton.internal.engine} (the wait queue, pump and
 * timer under every primitive) are exported only to Jeton's own modules.
 */
module dev.jeton.core {
  // Nullness annotations only: a user needs them neither to compile nor to run (decision 36).
  requires static org.jspecify;
  // @GuardedBy only, checked when compiling (decision 91).
  requires static com.google.errorprone.annotations;

  exports dev.jeton;
  exports dev.jeton.internal to
      dev.jeton.host,
      dev.jeton.redis,
      dev.jeton.http;
  exports dev.jeton.internal.engine to
      dev.jeton.host,
      dev.jeton.redis,
      dev.jeton.http;
}
