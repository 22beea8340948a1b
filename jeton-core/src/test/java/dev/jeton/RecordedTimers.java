package dev.jeton;

import dev.jeton.internal.engine.Deadlines;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;

/**
 * Timers for timed asynchronous requests, for tests: recorded, never run, so a test can count those
 * that were not cancelled. {@code onStart} runs as each is started, before it is returned.
 */
final class RecordedTimers implements Deadlines {
  private final Queue<CompletableFuture<Void>> timers = new ConcurrentLinkedQueue<>();
  private final Runnable onStart;

  RecordedTimers() {
    this(() -> {});
  }

  RecordedTimers(Runnable onStart) {
    this.onStart = onStart;
  }

  /** A semaphore whose timed asynchronous requests use these timers. */
  FifoSemaphore semaphore(int limit) {
    return new FifoSemaphore(null, limit, Fairness.strictFifo(), null, false, this, null);
  }

  @Override
  public Future<?> schedule(Runnable onTimeout, long nanos) {
    CompletableFuture<Void> timer = new CompletableFuture<>();
    timers.add(timer);
    onStart.run();
    return timer;
  }

  int started() {
    return timers.size();
  }

  /** The timers started and not cancelled. */
  long running() {
    return timers.stream().filter(t -> !t.isCancelled()).count();
  }
}
