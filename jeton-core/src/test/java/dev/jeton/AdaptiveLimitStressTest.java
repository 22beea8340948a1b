package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The controller under real threads: many threads beginning and ending samples at once (every
 * ending, and two threads racing to end one sample), and the verification, real client
 * threads against a simulated server whose capacity changes during the run.
 *
 * <p>Runs are bounded by counts of samples and windows, never by time.
 */
class AdaptiveLimitStressTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  @Test
  void manyThreads_beginningAndEndingAtOnce_nothingLeaks() throws Exception {
    Semaphore semaphore = Semaphore.create(1);
    AdaptiveLimit control =
        AdaptiveLimit.builder()
            .initialLimit(8)
            .minLimit(2)
            .maxLimit(64)
            .windowSamples(4)
            .build(semaphore);
    Queue<AdaptiveLimit.Sample> shared = new ConcurrentLinkedQueue<>();
    AtomicInteger interrupted = new AtomicInteger();
    StressWorkers.platformWorkers(
        8, 20_000, random -> oneSample(control, shared, random), interrupted, control);
    shared.forEach(AdaptiveLimit.Sample::success); // whatever no racer ended yet
    assertEquals(0, control.inFlight(), "every sample ended once");
    assertTrue(control.windows() > 100, "windows closed: " + control.windows());
    assertEquals(control.limit(), semaphore.limit());
    assertTrue(control.limit() >= 2 && control.limit() <= 64, "within bounds: " + control);
  }

  /** One sample, ended in one of five ways; some are shared so that two threads end them. */
  private static void oneSample(
      AdaptiveLimit control, Queue<AdaptiveLimit.Sample> shared, SplittableRandom random) {
    AdaptiveLimit.Sample sample = control.begin();
    if (random.nextInt(4) == 0) {
      Thread.onSpinWait(); // some work, so that in-flight counts overlap
    }
    switch (random.nextInt(6)) {
      case 0, 1 -> sample.success();
      case 2 -> sample.dropped();
      case 3 -> sample.ignore();
      case 4 -> {
        sample.success();
        sample.dropped(); // does nothing: already ended
      }
      default -> {
        shared.add(sample); // another thread may end it too: one of them wins
        AdaptiveLimit.Sample other = shared.poll();
        if (other != null) {
          other.success();
          other.ignore();
        }
      }
    }
  }

  private static final long BASE = 4_000_000; // 4 ms of simulated no-load latency
  private static final int CLIENTS = 100;

  /** The server of the issue: latency flat up to {@code capacity} in flight, then queueing. */
  private static final class Server {
    final AtomicInteger inFlight = new AtomicInteger();
    volatile int capacity = 32;

    void serve() {
      int n = inFlight.incrementAndGet();
      long latency = (long) (BASE * Math.max(1.0, (double) n / capacity));
      long deadline = System.nanoTime() + latency;
      for (long left = latency; left > 0; left = deadline - System.nanoTime()) {
        LockSupport.parkNanos(left);
      }
      inFlight.decrementAndGet();
    }
  }

  @Test
  void clientThreads_againstAServerWhoseCapacityChanges_theLimitFollowsIt() throws Exception {
    Semaphore semaphore = Semaphore.create(1);
    AdaptiveLimit control = AdaptiveLimit.builder().initialLimit(4).build(semaphore);
    Server server = new Server();
    for (int i = 0; i < CLIENTS; i++) {
      threads.start(
          () -> {
            while (true) {
              try (Permit p = semaphore.acquire(1)) {
                AdaptiveLimit.Sample sample = control.begin();
                server.serve();
                sample.success();
              }
            }
          });
    }
    StringBuilder seen = new StringBuilder();
    for (int capacity : new int[] {32, 8, 32}) {
      server.capacity = capacity;
      awaitWindows(control, 30); // settling
      List<Integer> limits = limitsOver(control, 40);
      seen.append(capacity).append(": ").append(limits).append('\n');
      // The median in the band, and most readings: one stall of the machine (a pause of tens of
      // milliseconds on a loaded machine) is latency too, and the limit rightly dips for it.
      int low = capacity / 2;
      int high = 2 * capacity;
      long inBand = limits.stream().filter(l -> l >= low && l <= high).count();
      Collections.sort(limits);
      int median = limits.get(limits.size() / 2);
      assertTrue(
          median >= low && median <= high && inBand * 4 >= limits.size() * 3,
          "capacity "
              + capacity
              + ": median "
              + median
              + " and "
              + inBand
              + " of "
              + limits.size()
              + " readings within ["
              + low
              + ", "
              + high
              + "]\n"
              + seen);
    }
  }

  private static void awaitWindows(AdaptiveLimit control, int count) {
    long target = control.windows() + count;
    awaitTrue(() -> control.windows() >= target, count + " windows");
  }

  /** The limit after each of the next {@code count} windows that a poll sees close. */
  private static List<Integer> limitsOver(AdaptiveLimit control, int count) {
    List<Integer> limits = new ArrayList<>();
    long last = control.windows();
    long end = last + count;
    long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(TestThreads.GUARD_SECONDS);
    while (last < end) {
      assertTrue(System.nanoTime() - guard < 0, "timed out waiting for " + count + " windows");
      long now = control.windows();
      if (now != last) {
        limits.add(control.limit());
        last = now;
      } else {
        LockSupport.parkNanos(100_000); // leaves the cores to the clients
      }
    }
    return limits;
  }
}
