package dev.jeton.internal.engine;

import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs tasks after a delay, on one daemon thread: the engine's timer, which every module uses for
 * its deadlines (a queued request's timeout, a scope's deadline, an admission's wait).
 *
 * <p>A cancelled task leaves the queue at once (remove-on-cancel), so a request decided long before
 * its deadline leaves nothing behind, however far off that deadline was. The thread starts with the
 * first task scheduled, so a process that never times anything out has none.
 *
 * <p>{@link #shared()} is the one instance for every deadline of the process. A module whose tasks
 * must never wait behind a user's code makes its own ({@link #Timer(String)}): the tasks of the
 * shared timer complete futures, which run the user's callbacks on this thread unless the primitive
 * was given an executor, and a slow callback delays every task behind it.
 */
public final class Timer implements Deadlines {
  private static final Timer SHARED = new Timer("jeton-timer");

  private final ScheduledThreadPoolExecutor executor;

  /** A timer with a thread of its own, named {@code threadName}. */
  public Timer(String threadName) {
    executor =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, threadName);
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
  }

  /** The timer of every deadline in the process. */
  public static Timer shared() {
    return SHARED;
  }

  /**
   * Runs {@code task} once after {@code delayNanos} (at once if not positive), unless the returned
   * future is cancelled first.
   */
  @Override
  public Future<?> schedule(Runnable task, long delayNanos) {
    return executor.schedule(task, Math.max(0L, delayNanos), TimeUnit.NANOSECONDS);
  }

  /** Runs {@code task} every {@code periodNanos}, the first time after one period. */
  public ScheduledFuture<?> every(Runnable task, long periodNanos) {
    return executor.scheduleWithFixedDelay(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * How many tasks wait to run. A cancelled task leaves at once, so none of them is cancelled:
   * tests see through it that a deadline decided early left nothing behind.
   */
  public int queued() {
    return executor.getQueue().size();
  }
}
