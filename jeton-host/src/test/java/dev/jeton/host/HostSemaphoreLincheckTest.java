package dev.jeton.host;

import dev.jeton.Semaphore;
import dev.jeton.contract.HeldPermits;
import dev.jeton.contract.LincheckRun;
import dev.jeton.contract.TemporaryTrees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * Lincheck, in stress mode (real threads; model checking cannot follow file locks into the kernel):
 * concurrent tryAcquire, release and queueLength on one machine-wide semaphore must give the
 * results of some sequential order. Each thread releases only what it holds. {@code available()} is
 * left out on purpose: a request gathering slots one by one is visible to it half-way (documented
 * on the method).
 *
 * <p>The scenarios take turns on a few names, so each opens a new handle on a semaphore that
 * earlier handles used and closed, and must find it free: a closed handle leaves nothing behind.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class HostSemaphoreLincheckTest {
  private static final int THREADS = 3;
  private static final Path ROOT = createRoot();

  /** The names the scenarios take in turn: each finds what the ones before it left. */
  private static final int NAMES = 4;

  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final HostSemaphore semaphore;

  private final HeldPermits held = new HeldPermits(THREADS);

  public HostSemaphoreLincheckTest() throws IOException {
    semaphore =
        HostSemaphore.builder("s" + INSTANCES.incrementAndGet() % NAMES)
            .directory(ROOT)
            .limit(2)
            .open();
  }

  private static Path createRoot() {
    try {
      return TemporaryTrees.createInMemory("jeton-lincheck");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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
  public int queueLength() {
    return semaphore.queueLength();
  }

  /**
   * Runs after each scenario: gives back what the threads still hold, closes the handle, and checks
   * that it left nothing behind (no permit held, no place in the queue), since a later scenario
   * opens a new handle on the same semaphore and must find it free.
   */
  @Validate
  public void releaseEverything() throws IOException {
    held.releaseAll();
    semaphore.close();
    HostSemaphore.Status status = semaphore.status();
    Map<String, String> places = LockFiles.uninterrupted(semaphore.queue::live);
    if (status.held() != 0 || !places.isEmpty()) {
      throw new IllegalStateException("the scenario left " + status + ", places " + places);
    }
  }

  /**
   * The sequential specification: the same operations on the in-process semaphore. Lincheck checks
   * each result against many sequential runs; on real handles those would make files and hold locks
   * (file descriptors) that nothing gives back, since only the concurrent runs are validated.
   */
  public static final class Spec {
    private final Semaphore model = Semaphore.create(2);
    private final HeldPermits held = new HeldPermits(THREADS);

    public boolean tryAcquire(int thread, int permits) {
      return held.keep(thread, model.tryAcquire(permits));
    }

    public int release(int thread) {
      return held.releaseOne(thread);
    }

    public int queueLength() {
      return model.queueLength();
    }
  }

  @LincheckRun
  void stress() {
    new StressOptions()
        .iterations(20)
        .invocationsPerIteration(100)
        .threads(THREADS)
        .actorsPerThread(3)
        .sequentialSpecification(Spec.class)
        .check(HostSemaphoreLincheckTest.class);
  }
}
