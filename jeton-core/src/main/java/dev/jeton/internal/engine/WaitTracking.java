package dev.jeton.internal.engine;

import org.jspecify.annotations.Nullable;

/**
 * The tracker of the asynchronous requests queued on a thread: whoever must be able to withdraw
 * them all at once (a task of a scope, while its body runs on the thread), installed here by its
 * owner. The engine hands every request it queues asynchronously to the thread's tracker, if any.
 *
 * <p>Why here: the engine knows none of its clients, and the check is on the path of every request
 * that waits, so it must stay one thread-local read. The thread-local is the engine's; the client
 * sets it around the code it runs ({@link #enter}, {@link #exit}).
 *
 * <p>The delivery loop takes the tracker off its thread while it completes futures ({@link
 * #suspend}, {@link #resume}): their callbacks are other code, run there only because the tracked
 * code granted or sent, and a request they queue is not the tracker's.
 */
public final class WaitTracking {
  /** What tracks the asynchronous requests queued on a thread. */
  public interface Tracker {
    /** Tracks {@code wait}, a request queued on this thread, until its outcome is delivered. */
    void track(WithdrawingFuture<?> wait);
  }

  private static final ThreadLocal<Tracker> CURRENT = new ThreadLocal<>();

  private WaitTracking() {}

  /** The tracker on this thread, or null. */
  public static @Nullable Tracker current() {
    return CURRENT.get();
  }

  /** Makes {@code tracker} this thread's; returns the one it replaces, for {@link #exit}. */
  public static @Nullable Tracker enter(Tracker tracker) {
    Tracker outer = CURRENT.get();
    CURRENT.set(tracker);
    return outer;
  }

  /** Puts back the tracker {@link #enter} replaced; none leaves nothing behind on the thread. */
  public static void exit(@Nullable Tracker outer) {
    if (outer == null) {
      CURRENT.remove(); // leaves nothing behind on a pooled thread
    } else {
      CURRENT.set(outer);
    }
  }

  /** Hands {@code wait} to this thread's tracker, if any: one thread-local read. */
  public static void track(WithdrawingFuture<?> wait) {
    Tracker tracker = CURRENT.get();
    if (tracker != null) {
      tracker.track(wait);
    }
  }

  /** Takes the tracker off this thread, returning it (or null) for {@link #resume}. */
  public static @Nullable Tracker suspend() {
    Tracker tracker = CURRENT.get();
    if (tracker != null) {
      CURRENT.remove();
    }
    return tracker;
  }

  /** Puts back the tracker {@link #suspend} took off this thread, if any. */
  public static void resume(@Nullable Tracker tracker) {
    if (tracker != null) {
      CURRENT.set(tracker);
    }
  }
}
