package dev.jeton.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A held grant that ends once: the base of Jeton's permits, guards, leases and admission tickets.
 *
 * <p>Every way a grant can end (released, unlocked, downgraded, lost, closed) starts with {@link
 * #end()}, and only the caller it answers true gives back what the grant holds:
 *
 * <pre>{@code
 * public void release() {
 *   if (end()) {
 *     semaphore.release(permits);
 *   }
 * }
 * }</pre>
 *
 * <p>A later call finds the grant ended and does nothing, or throws where the grant's contract says
 * so (a write lock downgraded twice). The flag is one {@code int} of the grant itself, set by one
 * CAS: no extra object per grant.
 */
public abstract class ReleaseOnce {
  private static final VarHandle ENDED;

  static {
    try {
      ENDED = MethodHandles.lookup().findVarHandle(ReleaseOnce.class, "ended", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** 0 while held, 1 once ended; set only by the CAS in {@link #end()}. */
  private volatile int ended;

  /** For subclasses. */
  protected ReleaseOnce() {}

  /**
   * Ends the grant: true for the one caller that ended it, which then gives back what the grant
   * holds; false for every later caller, from any thread.
   */
  protected final boolean end() {
    return ENDED.compareAndSet(this, 0, 1);
  }

  /** Whether the grant has ended, whichever way. */
  protected final boolean isEnded() {
    return ended != 0;
  }
}
