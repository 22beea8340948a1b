package dev.jeton;

import dev.jeton.contract.HeldPermits;
import dev.jeton.contract.LincheckRun;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;

/**
 * Linearizability, in both modes: every concurrent run of these operations has the results of some
 * sequential run of them. Each thread keeps the permits its {@code tryAcquire} obtained and gives
 * them back one per {@code release}, so no operation releases what it does not hold. Queued
 * asynchronous requests stay queued (and, once granted, keep their permits), so the queue is part
 * of the state every operation sees.
 *
 * <p>The sequential runs are of the same class, so each mode is its own specification. The
 * asynchronous requests are handed their permits in both modes (they have no thread to wake), and a
 * {@code tryAcquire} never takes permits past a queued request that they do not cover, so both
 * modes must show strict FIFO here; barging shows with blocking requests, which {@link
 * FifoSemaphoreCancellationLincheckTest} runs.
 */
public class FifoSemaphoreLinearizabilityLincheckTest {

  @LincheckRun
  void strictFifo_linearizable() {
    check(Strict.class);
  }

  @LincheckRun
  void boundedBarging_linearizable() {
    check(Barging.class);
  }

  /**
   * 5,000 interleavings a mode: about 15 s each on a 2-core machine. Ten scenarios of 500 already
   * catch a tryAcquire that barges past a queued request.
   */
  private static void check(Class<?> test) {
    TestThreads.checkLinearizable(test, 500);
  }

  /** A strict FIFO semaphore, the default. */
  public static class Strict extends Operations {
    public Strict() {
      super(Fairness.strictFifo());
    }
  }

  /** A semaphore with bounded barging. */
  public static class Barging extends Operations {
    public Barging() {
      super(Fairness.boundedBarging());
    }
  }

  /** The operations, on a semaphore of two permits. */
  @Param(name = "permits", gen = IntGen.class, conf = "1:2")
  public abstract static class Operations {
    private final Semaphore semaphore;

    private final HeldPermits held = new HeldPermits(TestThreads.LINCHECK_THREADS);

    Operations(Fairness fairness) {
      this.semaphore = Semaphore.builder().limit(2).fairness(fairness).build();
    }

    @Operation
    public boolean tryAcquire(
        @Param(gen = ThreadIdGen.class) int thread, @Param(name = "permits") int permits) {
      return held.keep(thread, semaphore.tryAcquire(permits));
    }

    @Operation
    public int release(@Param(gen = ThreadIdGen.class) int thread) {
      return held.releaseOne(thread);
    }

    @Operation
    public void acquireAsync(@Param(name = "permits") int permits) {
      CompletableFuture<Permit> unused = semaphore.acquireAsync(permits);
    }

    @Operation
    public void setLimit(@Param(gen = IntGen.class, conf = "1:3") int limit) {
      semaphore.setLimit(limit);
    }

    @Operation
    public int available() {
      return semaphore.available();
    }

    @Operation
    public int queueLength() {
      return semaphore.queueLength();
    }
  }
}
