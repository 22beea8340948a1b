package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The controller, model-checked: whatever the interleaving of samples beginning and ending (two
 * threads racing to end one sample, windows closing while others begin), every sample ends once,
 * the in-flight count is exact, and the semaphore holds the controller's limit, within bounds.
 *
 * <p>Windows of one sample at a limit of 1 to 3, so that nearly every ending closes a window and
 * the close races with everything else. The clock ticks on each read: deterministic per
 * interleaving, as model checking needs.
 */
public class AdaptiveLimitLincheckTest {
  @LincheckRun
  void everySampleEndsOnce_andTheLimitStaysConsistent() {
    TestThreads.checkSettles(Samples.class);
  }

  /** Each thread keeps the samples it began and has not ended; one sample is shared by all. */
  public static class Samples {
    private final AtomicLong ticks = new AtomicLong();
    private final Semaphore semaphore = Semaphore.create(1);
    private final AdaptiveLimit control =
        AdaptiveLimit.builder()
            .initialLimit(1)
            .minLimit(1)
            .maxLimit(3)
            .windowSamples(1)
            .build(semaphore, () -> ticks.addAndGet(1_000));
    private final AdaptiveLimit.Sample shared = control.begin();
    private final ArrayDeque<AdaptiveLimit.Sample>[] kept = TestThreads.Held.slots();
    private volatile boolean sharedEnded;

    @Operation
    public void beginAndSucceed() {
      control.begin().success();
    }

    @Operation
    public void beginAndDrop() {
      control.begin().dropped();
    }

    @Operation
    public void begin(@Param(gen = ThreadIdGen.class) int thread) {
      kept[thread].push(control.begin());
    }

    @Operation
    public void succeedKept(@Param(gen = ThreadIdGen.class) int thread) {
      AdaptiveLimit.Sample sample = kept[thread].poll();
      if (sample != null) {
        sample.success();
      }
    }

    @Operation
    public void endSharedBySuccess() {
      shared.success();
      sharedEnded = true;
    }

    @Operation
    public void endSharedByIgnore() {
      shared.ignore();
      sharedEnded = true;
    }

    @Validate
    public void theCountsAreExact() {
      int open = sharedEnded ? 0 : 1;
      for (ArrayDeque<AdaptiveLimit.Sample> samples : kept) {
        open += samples.size();
      }
      int limit = control.limit();
      if (control.inFlight() != open || semaphore.limit() != limit || limit < 1 || limit > 3) {
        throw new IllegalStateException(
            "in flight "
                + control.inFlight()
                + ", open "
                + open
                + ", limits "
                + limit
                + " and "
                + semaphore.limit());
      }
    }
  }
}
