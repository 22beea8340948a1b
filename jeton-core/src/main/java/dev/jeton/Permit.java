package dev.jeton;

/**
 * A grant of permits from a {@link Semaphore}, held until it is released.
 *
 * <p>Release is idempotent: the first call to {@link #release()} or {@link #close()} gives the
 * permits back, and every later call does nothing, so a double release can never inflate the
 * semaphore's count. A permit may be released by any thread, not only the one that acquired it.
 *
 * <pre>{@code
 * try (Permit permit = semaphore.acquire(2)) {
 *   callTheDatabase();
 * }
 * }</pre>
 */
public interface Permit extends AutoCloseable {

  /** The number of permits this grant holds (its weight). */
  int permits();

  /**
   * Gives the permits back to the semaphore, at most once. Waiters that now fit are granted, in
   * arrival order. Calls after the first do nothing.
   */
  void release();

  /** Same as {@link #release()}, so that a permit works with try-with-resources. */
  @Override
  default void close() {
    release();
  }
}
