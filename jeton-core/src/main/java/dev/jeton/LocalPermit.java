package dev.jeton;

import dev.jeton.internal.ReleaseOnce;

/** A permit of a {@link FifoSemaphore}; it ends once, so {@link #release()} is idempotent. */
final class LocalPermit extends ReleaseOnce implements Permit {
  private final FifoSemaphore semaphore;
  private final int permits;

  LocalPermit(FifoSemaphore semaphore, int permits) {
    this.semaphore = semaphore;
    this.permits = permits;
  }

  @Override
  public int permits() {
    return permits;
  }

  @Override
  public void release() {
    if (end()) {
      semaphore.release(permits);
    }
  }

  @Override
  public String toString() {
    return "Permit[permits=" + permits + (isEnded() ? ", released]" : "]");
  }
}
