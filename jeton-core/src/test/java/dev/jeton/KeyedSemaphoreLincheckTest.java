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
 * Linearizability of the keys of a {@link KeyedSemaphore} without a global limit, over two keys:
 * every concurrent run has the results of some sequential one, however entries are made, retired,
 * removed and made again meanwhile. Each thread keeps the permits its {@code tryAcquire} obtained
 * and gives them back one per {@code release}; queued asynchronous requests stay queued, and keep
 * their key's entry in use.
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class KeyedSemaphoreLincheckTest {
  private static final int THREADS = 3;

  private final KeyedSemaphore<Integer> keyed = KeyedSemaphore.create(2);

  private final HeldPermits held = new HeldPermits(THREADS);

  @Operation
  public boolean tryAcquire(
      @Param(gen = ThreadIdGen.class) int thread,
      @Param(name = "key") int key,
      @Param(name = "permits") int permits) {
    return held.keep(thread, keyed.forKey(key).tryAcquire(permits));
  }

  @Operation
  public int release(@Param(gen = ThreadIdGen.class) int thread) {
    return held.releaseOne(thread);
  }

  @Operation
  public void acquireAsync(@Param(name = "key") int key, @Param(name = "permits") int permits) {
    CompletableFuture<Permit> unused = keyed.forKey(key).acquireAsync(permits);
  }

  @Operation
  public void setLimit(
      @Param(name = "key") int key, @Param(gen = IntGen.class, conf = "1:3") int limit) {
    keyed.forKey(key).setLimit(limit);
  }

  @Operation
  public int available(@Param(name = "key") int key) {
    return keyed.forKey(key).available();
  }

  @Operation
  public int queueLength(@Param(name = "key") int key) {
    return keyed.forKey(key).queueLength();
  }

  @LincheckRun
  void modelCheck() {
    // Small counts: model checking through ConcurrentHashMap is slow (20-45 s even at these).
    new ModelCheckingOptions()
        .iterations(10)
        .invocationsPerIteration(300)
        .threads(THREADS)
        .actorsPerThread(2)
        .check(KeyedSemaphoreLincheckTest.class);
  }
}
