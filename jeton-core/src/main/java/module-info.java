/**
 * Jeton core: the in-process {@link dev.jeton.Semaphore} and the primitives built on it.
 *
 * <p>Only {@code dev.jeton} is exported; implementations are package-private.
 */
module dev.jeton.core {
  requires static transitive org.jspecify;

  exports dev.jeton;
}
