package dev.jeton;

import dev.jeton.contract.HeldPermits;
import dev.jeton.contract.LincheckRun;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * {@link KeyedSemaphore#close()} racing with every operation on two keys: the run is linearizable,
 * and once the keyed semaphore is closed and every permit is back, no entry is left (not one kept
 * for a changed limit, a closed key or an {@code awaitIdle}, and not one whose last use ended as
 * {@code close()} went through the map).
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class KeyedSemaphoreCloseLincheckTest {
  private static final int THREADS = 3;

  private final KeyedSemaphore<Integer> keyed = KeyedSemaphore.create(2);
  private final HeldPermits held = new HeldPermits(THREADS);
  private final Queue<CompletableFuture<Permit>> asyncRequests = new ConcurrentLinkedQueue<>();
  private volatile boolean closed;

  @Operation
  public boolean tryAcquire(
      @Param(gen = ThreadIdGen.class) int thread,
      @Param(name = "key") int key,
      @Param(name = "permits") int permits) {
    try {
      return held.keep(thread, keyed.forKey(key).tryAcquire(permits));
    } catch (SemaphoreClosedException refused) {
      return false;
    }
  }

  @Operation
  public int release(@Param(gen = ThreadIdGen.class) int thread) {
    return held.releaseOne(thread);
  }

  @Operation
  public void acquireAsync(@Param(name = "key") int key, @Param(name = "permits") int permits) {
    asyncRequests.add(keyed.forKey(key).acquireAsync(permits));
  }

  @Operation
  public void setLimit(
      @Param(name = "key") int key, @Param(gen = IntGen.class, conf = "1:3") int limit) {
    keyed.forKey(key).setLimit(limit);
  }

  @Operation
  public void closeKey(@Param(name = "key") int key) {
    keyed.forKey(key).close();
  }

  @Operation
  public boolean awaitIdle(@Param(name = "key") int key) {
    return keyed.forKey(key).awaitIdle().isDone();
  }

  @Operation
  public int available(@Param(name = "key") int key) {
    return keyed.forKey(key).available();
  }

  @Operation
  public void close() {
    keyed.close();
    closed = true;
  }

  @Validate
  public void closedKeepsNoEntry() {
    if (!closed) {
      return; // entries are kept by design while open: queued requests, changed limits
    }
    held.releaseAll();
    for (CompletableFuture<Permit> request : asyncRequests) {
      if (!request.isCompletedExceptionally()) {
        request.join().release(); // after close() no request is still queued
      }
    }
    if (keyed.keyCount() != 0) {
      throw new IllegalStateException("closed, every permit back, but entries left: " + keyed);
    }
  }

  @LincheckRun
  void modelCheck() {
    new ModelCheckingOptions()
        .iterations(10)
        .invocationsPerIteration(300)
        .threads(THREADS)
        .actorsPerThread(2)
        .check(KeyedSemaphoreCloseLincheckTest.class);
  }
}
