package dev.jeton.host;

import dev.jeton.RateLimiter;
import dev.jeton.contract.LincheckRun;
import dev.jeton.contract.TemporaryTrees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;

/**
 * Lincheck, in stress mode (real threads; model checking cannot follow file locks into the kernel):
 * concurrent tryAcquire and queueLength on one machine-wide rate limiter, through two handles, must
 * give the results of some sequential order of the in-process limiter with the same rate and burst.
 * The rate is one an hour, so that the schedule moves by admissions only while a scenario runs;
 * each scenario has a limiter of its own (a used bucket stays used).
 */
@Param(name = "weight", gen = IntGen.class, conf = "1:2")
public class HostRateLimiterLincheckTest {
  private static final Path ROOT = createRoot();
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private static final int BURST = 3;

  private final HostRateLimiter one;
  private final HostRateLimiter two;

  public HostRateLimiterLincheckTest() throws IOException {
    String name = "r" + INSTANCES.incrementAndGet();
    one =
        HostRateLimiter.builder(name)
            .directory(ROOT)
            .rate(1, Duration.ofHours(1))
            .burst(BURST)
            .open();
    two = HostRateLimiter.builder(name).directory(ROOT).open();
  }

  private static Path createRoot() {
    try {
      return TemporaryTrees.createInMemory("jeton-rate-lincheck");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Operation
  public boolean tryAcquireOne(@Param(name = "weight") int weight) {
    return one.tryAcquire(weight);
  }

  @Operation
  public boolean tryAcquireTwo(@Param(name = "weight") int weight) {
    return two.tryAcquire(weight);
  }

  @Operation
  public int queueLength() {
    return one.queueLength();
  }

  /** The sequential specification: the same operations on the in-process limiter. */
  public static final class Spec {
    private final RateLimiter model =
        RateLimiter.builder().rate(1, Duration.ofHours(1)).burst(BURST).build();

    public boolean tryAcquireOne(int weight) {
      return model.tryAcquire(weight);
    }

    public boolean tryAcquireTwo(int weight) {
      return model.tryAcquire(weight);
    }

    public int queueLength() {
      return model.queueLength();
    }
  }

  @LincheckRun
  void stress() {
    new StressOptions()
        .iterations(20)
        .invocationsPerIteration(50)
        .threads(3)
        .actorsPerThread(3)
        .sequentialSpecification(Spec.class)
        .check(HostRateLimiterLincheckTest.class);
  }
}
