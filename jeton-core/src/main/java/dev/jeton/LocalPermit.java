package dev.jeton;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** A permit of a {@link FifoSemaphore}; its release flag makes {@link #release()} idempotent. */
final class LocalPermit implements Permit {
  private static final VarHandle RELEASED;

  static {
    try {
      RELEASED = MethodHandles.lookup().findVarHandle(LocalPermit.class, "released", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final FifoSemaphore semaphore;
  private final int permits;
  private volatile int released;

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
    if (RELEASED.compareAndSet(this, 0, 1)) {
      semaphore.release(permits);
    }
  }

  @Override
  public String toString() {
    return "Permit[permits=" + permits + (released != 0 ? ", released]" : "]");
  }
}
