package dev.jeton;

/**
 * Thrown, or used to fail a future, when a {@link Barrier}'s generation is broken: its action
 * threw, or {@link Barrier#breakBarrier(Throwable)} was called. Every party of that generation gets
 * the same exception; its {@link #getCause()} is what the action threw or what {@code breakBarrier}
 * was given.
 */
public final class BarrierBrokenException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The generation that was broken. */
  private final long generation;

  /** Creates the exception for {@code generation}, with a message that says why. */
  public BarrierBrokenException(String message, Throwable cause, long generation) {
    super(message, cause);
    this.generation = generation;
  }

  /** The number of the generation that was broken. */
  public long generation() {
    return generation;
  }
}
