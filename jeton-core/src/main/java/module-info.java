/**
 * Jeton core: the in-process {@link dev.jeton.Semaphore} and the primitives built on it.
 *
 * <p>Only {@code dev.jeton} is exported as API; implementations are package-private, and
 * {@code dev.jeton.internal} is exported only to Jeton's own modules.
 */
module dev.jeton.core {
  requires static org.jspecify; // annotations only: not needed to compile against this module, nor to run it

  exports dev.jeton;
  exports dev.jeton.internal to
      dev.jeton.host,
      dev.jeton.redis;
}
