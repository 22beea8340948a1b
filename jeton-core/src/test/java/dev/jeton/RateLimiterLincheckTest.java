package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The rate limiter's accounting under every interleaving Lincheck explores: tries, requests kept
 * until they pass, and requests cancelled (possibly as they pass) on a clock that never moves, so
 * that exactly the burst can pass. At the end, with the kept requests withdrawn, the weight the
 * callers saw pass plus the weight that can still pass must be the burst: a grant lost to a cancel
 * and never given back, or given back twice, or a request stranded behind a head that could pass,
 * breaks it.
 */
public class RateLimiterLincheckTest {

  @LincheckRun
  void givingUpAsRequestsPass_neverLosesNorDuplicatesWeight() {
    TestThreads.checkSettles(Operations.class, 500);
  }

  /** The operations, on a limiter of burst 3 whose clock stands still. */
  @Param(name = "weight", gen = IntGen.class, conf = "1:2")
  public static class Operations {
    private static final int BURST = 3;

    private final FifoRateLimiter limiter =
        new ManualTime().limiter(1, Duration.ofSeconds(1), BURST);
    private final AtomicInteger passed = new AtomicInteger();
    private final Queue<CompletableFuture<Void>> kept = new ConcurrentLinkedQueue<>();

    @Operation
    public void tryAcquire(@Param(name = "weight") int weight) {
      if (limiter.tryAcquire(weight)) {
        passed.addAndGet(weight);
      }
    }

    @Operation
    public void acquireThenCancel(@Param(name = "weight") int weight) {
      CompletableFuture<Void> f = limiter.acquireAsync(weight);
      if (!f.cancel(false)) {
        passed.addAndGet(weight); // it passed before the cancel
      }
    }

    @Operation
    public void acquireAndKeep(@Param(name = "weight") int weight) {
      CompletableFuture<Void> f = limiter.acquireAsync(weight);
      CompletableFuture<Void> unused = f.thenRun(() -> passed.addAndGet(weight));
      kept.add(f);
    }

    /** Withdraws the oldest kept request: the ones behind it may pass, racing their cancels. */
    @Operation
    public void cancelOldestKept() {
      CompletableFuture<Void> f = kept.poll();
      if (f != null) {
        f.cancel(false);
      }
    }

    @Validate
    public void theBurstIsAccountedFor() {
      kept.forEach(f -> f.cancel(false)); // the ones still waiting leave
      if (limiter.queueLength() != 0) {
        throw new IllegalStateException("stranded: " + limiter);
      }
      int free = BURST - passed.get();
      if (free < 0 || free > 0 && !limiter.tryAcquire(free) || limiter.tryAcquire(1)) {
        throw new IllegalStateException(
            passed.get() + " seen to pass of a burst of " + BURST + ": " + limiter);
      }
    }
  }
}
