package dev.jeton;

import dev.jeton.internal.ReleaseOnce;

/** A permit of a {@link FifoSemaphore}; it ends once, so {@link #release()} is idempotent. */
final class LocalPermit extends ReleaseOnce implements Permit {
  private final FifoSemaphore semaphore;

  LocalPermit(FifoSemaphore semaphore, int permits) {
    super(permits);
    this.semaphore = semaphore;
  }

  @Override
  public int permits() {
    return held();
  }

  @Override
  public void release() {
    if (end()) {
      semaphore.release(held());
    }
  }

  @Override
  public String toString() {
    return "Permit[permits=" + held() + (isEnded() ? ", released]" : "]");
  }
}
