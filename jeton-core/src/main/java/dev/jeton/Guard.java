package dev.jeton;

/**
 * A held lock: of a {@link Mutex}, or the read or write lock of a {@link ReadWriteLock}, held until
 * it is unlocked.
 *
 * <p>Unlocking is idempotent: the first call to {@link #unlock()} or {@link #close()} lets the lock
 * go, and every later call does nothing, so a double unlock can never free a lock that someone else
 * has taken since. Any thread may unlock a guard, not only the one that locked: a critical section
 * may span asynchronous steps that run on other threads.
 *
 * <pre>{@code
 * try (Guard guard = mutex.lock()) {
 *   updateTheSharedState();
 * }
 * }</pre>
 */
public interface Guard extends AutoCloseable {

  /**
   * Lets the lock go, at most once. Waiters that can now have it are granted, in arrival order.
   * Calls after the first do nothing.
   */
  void unlock();

  /** Same as {@link #unlock()}, so that a guard works with try-with-resources. */
  @Override
  default void close() {
    unlock();
  }
}
