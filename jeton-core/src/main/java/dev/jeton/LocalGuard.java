package dev.jeton;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A lock of the {@link FifoReadWriteLock}: it holds {@code permits} of that lock's {@link
 * FifoSemaphore} (one for a read lock, all for the write lock), given back once.
 */
class LocalGuard implements Guard {
  private static final VarHandle UNLOCKED;

  static {
    try {
      UNLOCKED = MethodHandles.lookup().findVarHandle(LocalGuard.class, "unlocked", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final FifoSemaphore semaphore;
  private final int permits;

  /** 1 once unlocked or downgraded; set by CAS (UNLOCKED), so the permits go back once. */
  private volatile int unlocked;

  LocalGuard(FifoSemaphore semaphore, int permits) {
    this.semaphore = semaphore;
    this.permits = permits;
  }

  @Override
  public final void unlock() {
    if (claim()) {
      semaphore.release(permits);
    }
  }

  /**
   * Marks the guard unlocked without giving anything back; true for the one caller that did. The
   * caller then gives back the permits itself.
   */
  final boolean claim() {
    return UNLOCKED.compareAndSet(this, 0, 1);
  }

  @Override
  public final String toString() {
    String kind = permits == FifoReadWriteLock.WRITE ? "write lock" : "read lock";
    return "Guard[" + kind + (unlocked != 0 ? ", unlocked]" : "]");
  }
}
