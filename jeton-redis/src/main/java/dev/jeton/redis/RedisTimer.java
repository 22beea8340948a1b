package dev.jeton.redis;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one timer thread every Redis handle of the process shares: request timeouts, lease watches,
 * polls and renewals. Its tasks only send commands or complete our own state, never user code, so
 * one daemon thread serves them all; a cancelled task leaves its queue at once.
 */
final class RedisTimer {
  private static final ScheduledThreadPoolExecutor TIMER = newTimer();

  private RedisTimer() {}

  /** Runs {@code task} once after {@code delayNanos} (at once if not positive). */
  static ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    return TIMER.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
  }

  /** Runs {@code task} every {@code periodNanos}, the first time after one period. */
  static ScheduledFuture<?> every(Runnable task, long periodNanos) {
    return TIMER.scheduleWithFixedDelay(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
  }

  private static ScheduledThreadPoolExecutor newTimer() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread t = new Thread(task, "jeton-redis-timer");
              t.setDaemon(true);
              return t;
            });
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }
}
