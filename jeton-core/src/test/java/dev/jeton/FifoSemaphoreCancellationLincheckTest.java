package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * Cancellation never leaks or strands, in both modes: requests that block, requests that are
 * cancelled, possibly while being granted, and requests released as soon as they are granted,
 * always leave the semaphore with every permit free and no one queued. The blocking requests are
 * the ones that barge, wake and take their permits themselves in the barging mode.
 */
public class FifoSemaphoreCancellationLincheckTest {

  @LincheckRun
  void strictFifo_givingUp_neverLeaksOrStrands() {
    check(Strict.class);
  }

  @LincheckRun
  void boundedBarging_givingUp_neverLeaksOrStrands() {
    check(Barging.class);
  }

  @LincheckRun
  void unboundedBarging_givingUp_neverLeaksOrStrands() {
    check(NeverStarving.class);
  }

  /**
   * 5,000 interleavings a mode: about 15 s each on a 2-core machine. Ten scenarios of 500 already
   * catch a grant that races with a cancel and is never given back (WaitQueue.giveBack).
   */
  private static void check(Class<?> test) {
    TestThreads.checkSettles(test, 500);
  }

  /** A strict FIFO semaphore. */
  public static class Strict extends Operations {
    public Strict() {
      super(Fairness.strictFifo());
    }
  }

  /**
   * A barging semaphore whose bound is one nanosecond, so that a head that looks once turns the
   * queue to handoffs: barging and the way out of it in a few steps.
   */
  public static class Barging extends Operations {
    public Barging() {
      super(Fairness.boundedBarging(Duration.ofNanos(1)));
    }
  }

  /**
   * A barging semaphore whose bound no run reaches: every release that covers a blocking head wakes
   * it, and every woken head takes its permits or parks again, without handoffs.
   */
  public static class NeverStarving extends Operations {
    public NeverStarving() {
      super(Fairness.boundedBarging(Duration.ofHours(1)));
    }
  }

  /** The operations, on a semaphore of two permits. */
  @Param(name = "permits", gen = IntGen.class, conf = "1:2")
  public abstract static class Operations {
    private final Semaphore semaphore;

    Operations(Fairness fairness) {
      this.semaphore = Semaphore.builder().limit(2).fairness(fairness).build();
    }

    @Operation
    public void holdAndRelease(@Param(name = "permits") int permits) {
      semaphore.tryAcquire(permits).ifPresent(Permit::release);
    }

    @Operation
    public void acquireAndRelease(@Param(name = "permits") int permits)
        throws InterruptedException {
      semaphore.acquire(permits).release();
    }

    @Operation
    public void acquireThenCancel(@Param(name = "permits") int permits) {
      CompletableFuture<Permit> future = semaphore.acquireAsync(permits);
      if (!future.cancel(false)) {
        future.join().release(); // granted before the cancel: ours to give back
      }
    }

    @Operation
    public void acquireAndReleaseWhenGranted(@Param(name = "permits") int permits) {
      CompletableFuture<Void> unused = semaphore.acquireAsync(permits).thenAccept(Permit::release);
    }

    @Validate
    public void everyPermitIsBack() {
      if (semaphore.available() != 2 || semaphore.queueLength() != 0) {
        throw new IllegalStateException("leaked or stranded: " + semaphore);
      }
    }
  }
}
