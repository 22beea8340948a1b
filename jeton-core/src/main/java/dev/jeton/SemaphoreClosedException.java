package dev.jeton;

/**
 * Thrown, or used to fail a future, when a request is made to a semaphore that is closed, or when a
 * queued request is failed because the semaphore was closed while it waited.
 */
public final class SemaphoreClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message that names the semaphore. */
  public SemaphoreClosedException(String message) {
    super(message);
  }
}
