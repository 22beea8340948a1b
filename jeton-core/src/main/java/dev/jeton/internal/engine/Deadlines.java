package dev.jeton.internal.engine;

import java.util.concurrent.Future;

/**
 * Where a primitive's deadlines go: the engine's {@link Timer} (every primitive's, unless a test
 * gives its own that records them, or fires them at will).
 */
@FunctionalInterface
public interface Deadlines {
  /**
   * Runs {@code task} once after {@code delayNanos} (at once if not positive), unless the returned
   * future is cancelled first.
   */
  Future<?> schedule(Runnable task, long delayNanos);
}
