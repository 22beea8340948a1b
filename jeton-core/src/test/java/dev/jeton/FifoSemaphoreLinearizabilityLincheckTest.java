package dev.jeton;

import dev.jeton.contract.HeldPermits;
import dev.jeton.contract.LincheckRun;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;

/**
 * Linearizability: every concurrent run of these operations has the results of some sequential run
 * of them. Each thread keeps the permits its {@code tryAcquire} obtained and gives them back one
 * per {@code release}, so no operation releases what it does not hold. Queued asynchronous requests
 * stay queued (and, once granted, keep their permits), so the queue is part of the state every
 * operation sees.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class FifoSemaphoreLinearizabilityLincheckTest {
  private static final int THREADS = 3;

  private final Semaphore semaphore = Semaphore.create(2);

  private final HeldPermits held = new HeldPermits(THREADS);

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

  @LincheckRun
  void modelCheck() {
    // 10,000 interleavings: about 30 s on JDK 17 or 25 on a 2-core machine. Ten scenarios of
    // 500 already catch a tryAcquire that barges past a queued request.
    new ModelCheckingOptions()
        .iterations(20)
        .invocationsPerIteration(500)
        .threads(THREADS)
        .actorsPerThread(3)
        .check(FifoSemaphoreLinearizabilityLincheckTest.class);
  }
}
