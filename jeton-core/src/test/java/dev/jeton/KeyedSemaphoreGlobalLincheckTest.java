package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * Two keys (limit 2 each) under a global limit of 3, with requests that are granted and released at
 * once, cancelled (possibly while being granted, in either stage), or tried: in every interleaving
 * the model checker tries, no key and not the global limit is ever exceeded, and at the end every
 * permit is back, no one is queued, and every entry has been removed.
 *
 * <p>With a global limit a failing {@code tryAcquire} briefly holds its key's permits, so the keys
 * are not linearizable against each other's {@code tryAcquire} (see {@link KeyedSemaphore}); this
 * test checks what does hold: the limits, and that nothing leaks or strands.
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class KeyedSemaphoreGlobalLincheckTest {
  private static final int PER_KEY = 2;
  private static final int GLOBAL = 3;

  private final KeyedSemaphore<Integer> keyed =
      KeyedSemaphore.builder().limitPerKey(PER_KEY).globalLimit(GLOBAL).build();
  private final AtomicIntegerArray inUse = new AtomicIntegerArray(3); // key 0, key 1, global
  private volatile boolean exceeded;

  /** Counts a grant in, checks the limits, and gives it back. */
  private void use(int key, Permit permit) {
    int n = permit.permits();
    if (inUse.addAndGet(key, n) > PER_KEY || inUse.addAndGet(2, n) > GLOBAL) {
      exceeded = true;
    }
    inUse.addAndGet(key, -n);
    inUse.addAndGet(2, -n);
    permit.release();
  }

  @Operation
  public void tryAndRelease(@Param(name = "key") int key, @Param(name = "permits") int permits) {
    keyed.forKey(key).tryAcquire(permits).ifPresent(p -> use(key, p));
  }

  @Operation
  public void acquireThenCancel(
      @Param(name = "key") int key, @Param(name = "permits") int permits) {
    CompletableFuture<Permit> future = keyed.forKey(key).acquireAsync(permits);
    if (!future.cancel(false)) {
      use(key, future.join()); // granted before the cancel: ours to give back
    }
  }

  @Operation
  public void acquireAndReleaseWhenGranted(
      @Param(name = "key") int key, @Param(name = "permits") int permits) {
    CompletableFuture<Void> unused =
        keyed.forKey(key).acquireAsync(permits).thenAccept(p -> use(key, p));
  }

  @Validate
  public void everythingIsBack() {
    if (exceeded) {
      throw new IllegalStateException("a limit was exceeded");
    }
    for (int key = 0; key < 2; key++) {
      Semaphore s = keyed.forKey(key);
      if (s.available() != PER_KEY || s.queueLength() != 0) {
        throw new IllegalStateException("key " + key + " leaked or stranded: " + s);
      }
    }
    if (keyed.globalAvailable().getAsInt() != GLOBAL || keyed.keyCount() != 0) {
      throw new IllegalStateException("global permits or entries left: " + keyed);
    }
  }

  @LincheckRun
  void modelCheck() {
    // Small counts: model checking through ConcurrentHashMap is slow (20-45 s even at these).
    new ModelCheckingOptions()
        .iterations(10)
        .invocationsPerIteration(200)
        .threads(3)
        .actorsPerThread(2)
        .check(KeyedSemaphoreGlobalLincheckTest.class);
  }
}
