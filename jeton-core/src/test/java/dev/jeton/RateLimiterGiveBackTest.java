package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A grant that reaches no one gives its weight back only while that keeps the bound: if others were
 * admitted at a later instant since, the weight stays spent.
 */
class RateLimiterGiveBackTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  /** Runs the completions handed to it only when the test says so. */
  private static final class HeldCompletions implements Executor {
    final Queue<Runnable> held = new ArrayDeque<>();

    @Override
    public void execute(Runnable task) {
      held.add(task);
    }

    void runAll() {
      for (Runnable task; (task = held.poll()) != null; ) {
        task.run();
      }
    }
  }

  private final ManualTime time = new ManualTime();
  private final HeldCompletions completions = new HeldCompletions();
  private FifoRateLimiter limiter;

  @Test
  void aLateGiveBackAfterALaterAdmissionGivesNothing() {
    limiter = new FifoRateLimiter(null, 1, Duration.ofSeconds(1), 1, true, completions, time, time);
    assertTrue(limiter.tryAcquire()); // at 0
    CompletableFuture<Void> a = limiter.acquireAsync(1);
    time.advance(SECOND); // A is admitted at 1 s; its completion is held
    time.advance(4 * SECOND);
    assertTrue(limiter.tryAcquire()); // at 5 s
    a.cancel(false); // A's grant reaches no one, at 5 s
    completions.runAll();
    // giving A's weight back now would let a second request pass at 5 s with a burst of one
    assertFalse(limiter.tryAcquire());
  }

  @Test
  void aGiveBackWithNoLaterAdmissionIsKept() {
    limiter = new FifoRateLimiter(null, 1, Duration.ofSeconds(1), 1, true, completions, time, time);
    assertTrue(limiter.tryAcquire()); // at 0
    CompletableFuture<Void> a = limiter.acquireAsync(1);
    time.advance(SECOND); // A is admitted at 1 s; its completion is held
    a.cancel(false);
    completions.runAll();
    assertTrue(limiter.tryAcquire(), "A's weight came back: one passes at 1 s");
    assertFalse(limiter.tryAcquire());
  }
}
