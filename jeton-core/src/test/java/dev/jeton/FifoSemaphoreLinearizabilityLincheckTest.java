package dev.jeton;

import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Linearizability: every concurrent run of these operations has the results of some sequential
 * run of them. Each thread keeps the permits its {@code tryAcquire} obtained and gives them back
 * one per {@code release}, so no operation releases what it does not hold. Queued asynchronous
 * requests stay queued (and, once granted, keep their permits), so the queue is part of the
 * state every operation sees.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class FifoSemaphoreLinearizabilityLincheckTest {
  private static final int THREADS = 3;

  private final Semaphore semaphore = Semaphore.create(2);

  /** The permits each thread holds; a slot is touched only by its own thread's operations. */
  @SuppressWarnings("unchecked")
  private final ArrayDeque<Permit>[] held = new ArrayDeque[THREADS + 1];

  {
    for (int i = 0; i < held.length; i++) {
      held[i] = new ArrayDeque<>();
    }
  }

  @Operation
  public boolean tryAcquire(
      @Param(gen = ThreadIdGen.class) int thread, @Param(name = "permits") int permits) {
    Optional<Permit> permit = semaphore.tryAcquire(permits);
    permit.ifPresent(held[thread]::push);
    return permit.isPresent();
  }

  @Operation
  public int release(@Param(gen = ThreadIdGen.class) int thread) {
    Permit permit = held[thread].poll();
    if (permit == null) {
      return 0;
    }
    permit.release();
    return permit.permits();
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

  @Test
  void modelCheck() {
    new ModelCheckingOptions()
        .iterations(30)
        .invocationsPerIteration(1_000)
        .threads(THREADS)
        .actorsPerThread(3)
        .check(FifoSemaphoreLinearizabilityLincheckTest.class);
  }
}
