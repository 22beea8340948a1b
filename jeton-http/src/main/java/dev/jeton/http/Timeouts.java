package dev.jeton.http;

import dev.jeton.internal.engine.Timer;
import java.util.concurrent.Future;

/** Fires the {@code maxWait} of queued requests; a test injects its own to fire them at will. */
@FunctionalInterface
interface Timeouts {
  /** Runs {@code expire} after {@code nanos}, unless the returned future is cancelled first. */
  Future<?> schedule(Runnable expire, long nanos);

  /**
   * The engine's one timer, shared with every deadline of the process: a cancelled timeout leaves
   * its queue at once, so a request decided early leaves nothing behind, and the thread starts only
   * if something is timed.
   */
  static Timeouts shared() {
    return Timer.shared()::schedule;
  }
}
