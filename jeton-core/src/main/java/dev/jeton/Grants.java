package dev.jeton;

/**
 * What one kind of request of a {@link FifoSemaphore} gets for its permits: the semaphore's {@link
 * Permit}s, a read-write lock's read {@link Guard}s or its {@link ReadWriteLock.WriteGuard}s.
 * Typed, so that the public methods return what it makes without a cast ({@link
 * FifoSemaphore.Granting}).
 *
 * @param <T> the grant
 */
@FunctionalInterface
interface Grants<T> {
  /** The grant of {@code permits}, which gives them back to {@code from} once. */
  T grant(FifoSemaphore from, int permits);
}
