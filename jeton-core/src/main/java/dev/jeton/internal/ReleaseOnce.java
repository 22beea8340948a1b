package dev.jeton.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A held grant of some permits that ends once: the base of Jeton's permits, guards, leases and
 * admission tickets.
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
 *
 * <p>The flag also says whether the grant is watched for leaks ({@link LeakTracker#watch}): 0 is
 * held, 1 is ended, and a negative value is held and watched, the value naming the registry slot of
 * the grant's record ({@link LeakRegistry#forget}). So ending an unwatched grant is the one CAS
 * from 0, as it was before leak detection; only when that fails does {@link #end()} look further,
 * out of line. A field for the record instead cost every grant eight bytes and every release a load
 * and a branch, about 10% of an uncontended acquire and release (decision 107).
 *
 * <p>Two choices in the fields are measured, not style (decision 101): on JDK 17 they keep 1.5 ns
 * off the uncontended {@code acquire} + {@code release} of a semaphore (7.4 ns with them).
 *
 * <ul>
 *   <li>The count is declared before the flag. HotSpot lays out a superclass's fields first, and
 *       fields of one size in the order declared, so the count fills the four bytes after a 12-byte
 *       object header and the flag takes the next four. A CAS on the flag in that gap of a grant
 *       just allocated cost 1.2 ns more. {@code ReleaseOnceTest.countIsLaidOutBeforeTheFlag} keeps
 *       the order.
 *   <li>The count is not {@code final}. A final field written here makes C2 end this constructor
 *       with a release barrier, before the subclass's constructor stores its own fields, and those
 *       stores then take G1's write barriers: 0.3 to 0.5 ns more. Every grant still reaches another
 *       thread through a happens-before edge (a future's completion, a wait node's volatile
 *       status), which carries the count with it; a grant passed between threads through a data
 *       race is the race of the code that passes it, as for any object with state that is not
 *       final.
 * </ul>
 */
public abstract class ReleaseOnce {
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(ReleaseOnce.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static final int HELD = 0;
  private static final int ENDED = 1;

  /** How many permits the grant holds. Declared first, and not final: see the class comment. */
  private int held;

  /**
   * {@link #HELD}, {@link #ENDED}, or a negative slot code while held and watched. Goes to ENDED
   * only by a CAS in {@link #end()}; set to a slot code only by {@link #watchAt}, before the grant
   * is handed out, which carries it to the thread that ends the grant as it carries the count.
   */
  private volatile int state;

  /** A grant of {@code held} permits, held until it ends. */
  protected ReleaseOnce(int held) {
    this.held = held;
  }

  /** How many permits the grant holds (and still counts once it has ended). */
  protected final int held() {
    return held;
  }

  /**
   * Ends the grant: true for the one caller that ended it, which then gives back what the grant
   * holds; false for every later caller, from any thread.
   */
  protected final boolean end() {
    return STATE.compareAndSet(this, HELD, ENDED) || endWatched();
  }

  /**
   * The rest of {@link #end()}, for a grant that was not simply held: ended already, or watched,
   * whose record is then forgotten. A method of its own, so that the JIT leaves it out of line.
   */
  private boolean endWatched() {
    int current = state;
    while (current < 0) {
      if (STATE.compareAndSet(this, current, ENDED)) {
        LeakRegistry.instance().forget(current, this);
        return true;
      }
      current = state;
    }
    return false;
  }

  /** Whether the grant has ended, whichever way. */
  protected final boolean isEnded() {
    return state == ENDED;
  }

  /** Marks the grant watched, its record in the registry slot {@code code} (negative). */
  final void watchAt(int code) {
    STATE.set(this, code);
  }
}
