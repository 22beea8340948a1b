package dev.jeton;

import dev.jeton.internal.ReleaseOnce;

/**
 * A lock of the {@link FifoReadWriteLock}: it holds {@code permits} of that lock's {@link
 * FifoSemaphore} (one for a read lock, all for the write lock), given back once. It ends when
 * unlocked or downgraded, whichever comes first.
 */
class LocalGuard extends ReleaseOnce implements Guard {
  private final FifoSemaphore semaphore;

  LocalGuard(FifoSemaphore semaphore, int permits) {
    super(permits);
    this.semaphore = semaphore;
  }

  @Override
  public final void unlock() {
    if (end()) {
      semaphore.release(held());
    }
  }

  @Override
  public final String toString() {
    String kind = held() == FifoReadWriteLock.WRITE ? "write lock" : "read lock";
    return "Guard[" + kind + (isEnded() ? ", unlocked]" : "]");
  }
}
