package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The timers of timed asynchronous requests never outlive them: whether a request is granted,
 * cancelled or withdrawn before, while or after its timer is stored, once every request has
 * completed every timer is cancelled. The timers are recorded, never run (an hour each).
 */
public class FifoSemaphoreTimerLincheckTest {
  private final RecordedTimers timers = new RecordedTimers();

  private final FifoSemaphore semaphore = timers.semaphore(1);

  @Operation
  public void holdAndRelease() {
    semaphore.tryAcquire(1).ifPresent(Permit::release);
  }

  @Operation
  public void acquireTimedAndReleaseWhenGranted() {
    CompletableFuture<Void> unused =
        semaphore.acquireAsync(1, Duration.ofHours(1)).thenAccept(Permit::release);
  }

  @Operation
  public void acquireTimedThenCancel() {
    CompletableFuture<Permit> future = semaphore.acquireAsync(1, Duration.ofHours(1));
    if (!future.cancel(false)) {
      future.join().release(); // granted before the cancel: ours to give back
    }
  }

  @Validate
  public void everyTimerIsCancelled() {
    if (semaphore.available() != 1 || semaphore.queueLength() != 0) {
      throw new IllegalStateException("leaked or stranded: " + semaphore);
    }
    long running = timers.running();
    if (running != 0) {
      throw new IllegalStateException(running + " timers outlive their requests");
    }
  }

  @LincheckRun
  void modelCheck() {
    // Ten scenarios of 500 interleavings: 44 s on a loaded 2-core machine.
    new ModelCheckingOptions()
        .iterations(10)
        .invocationsPerIteration(500)
        .threads(3)
        .actorsPerThread(2)
        .check(FifoSemaphoreTimerLincheckTest.class);
  }
}
