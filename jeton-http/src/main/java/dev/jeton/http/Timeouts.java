package dev.jeton.http;

import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/** Fires the {@code maxWait} of queued requests. */
@FunctionalInterface
interface Timeouts {
  /** Runs {@code expire} after {@code nanos}, unless the returned future is cancelled first. */
  Future<?> schedule(Runnable expire, long nanos);

  /**
   * One daemon thread for every control in the process, made on first use. A cancelled timeout is
   * removed from its queue at once, so a request decided early leaves nothing behind. Jeton core's
   * own timer is not exported to this module; this one is as small.
   */
  static Timeouts shared() {
    return Shared::schedule;
  }

  /** Threads named {@code name} that do not keep the JVM alive: jeton-http's own. */
  static ThreadFactory daemonThreads(String name) {
    return task -> {
      Thread t = new Thread(task, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** The holder idiom: the thread starts only if some control queues. */
  final class Shared {
    static final ScheduledThreadPoolExecutor TIMER = make();

    private Shared() {}

    private static ScheduledThreadPoolExecutor make() {
      ScheduledThreadPoolExecutor timer =
          new ScheduledThreadPoolExecutor(1, daemonThreads("jeton-http-timeouts"));
      timer.setRemoveOnCancelPolicy(true);
      return timer;
    }

    static Future<?> schedule(Runnable expire, long nanos) {
      return TIMER.schedule(expire, nanos, TimeUnit.NANOSECONDS);
    }
  }
}
