/**
 * Jeton core: the in-process {@link dev.jeton.Semaphore} and the primitives built on it.
 *
 * <p>Only {@code dev.jeton} is exported as API; implementations are package-private, and {@code
 * dev.jeton.internal} is exported only to Jeton's own modules.
 */
module dev.jeton.core {
  // Nullness annotations only: a user needs them neither to compile nor to run (decision 36).
  requires static org.jspecify;

  exports dev.jeton;
  exports dev.jeton.internal to
      dev.jeton.host,
      dev.jeton.redis;
}
