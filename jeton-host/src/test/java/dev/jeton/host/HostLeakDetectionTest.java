package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.contract.LeakLog;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leak detection for machine-wide permits: a permit dropped unreleased is reported through {@code
 * System.Logger} (read here through {@code java.util.logging}, its default back end); its places
 * stay taken unless the builder asks for them back.
 */
class HostLeakDetectionTest {
  @TempDir Path directory;

  private final List<LeakLog.Logged> reports = new CopyOnWriteArrayList<>();
  private Runnable stopListening = () -> {};

  @BeforeEach
  void listen() {
    stopListening = LeakLog.listen("dev.jeton.leak", "host semaphore 'hl-", reports::add);
  }

  @AfterEach
  void stopListening() {
    stopListening.run();
  }

  private HostSemaphore open(String name, int limit, LeakDetection level) throws IOException {
    return open(name, limit, level, false);
  }

  private HostSemaphore open(String name, int limit, LeakDetection level, boolean releaseLeaked)
      throws IOException {
    return HostSemaphore.builder(name)
        .directory(directory)
        .limit(limit)
        .leakDetection(level)
        .releaseLeaked(releaseLeaked)
        .open();
  }

  /** By default a leaked permit is reported and its places stay taken, as in-process. */
  @Test
  void aDroppedPermit_isReported_andStaysTakenByDefault() throws Exception {
    HostSemaphore semaphore = open("hl-kept", 2, LeakDetection.PARANOID);
    takeAndDrop(semaphore, 2);

    LeakLog.collectUntil(() -> !reports.isEmpty());
    LeakLog.assertKeptReport(
        reports.get(0),
        "Jeton: a permit of host semaphore 'hl-kept' was never released: 2 permits held for ");
    assertTrue(open("hl-kept", 2, LeakDetection.OFF).tryAcquire(1).isEmpty(), "still taken");
    assertEquals(1, reports.size(), "reported once: " + reports);
  }

  /** With releaseLeaked, the report is followed by a release: another handle takes the places. */
  @Test
  void releaseLeaked_givesThePlacesBack() throws Exception {
    HostSemaphore semaphore = open("hl-given-back", 2, LeakDetection.PARANOID, true);
    takeAndDrop(semaphore, 2);

    HostSemaphore other = open("hl-given-back", 2, LeakDetection.OFF);
    // the report is logged first, then the give-back runs: wait for the places themselves
    LeakLog.collectUntil(
        () -> {
          Optional<Permit> both = other.tryAcquire(2);
          both.ifPresent(Permit::release);
          return both.isPresent();
        });
    assertTrue(reports.get(0).message().contains("Its permits are given back now."));
  }

  @Test
  void releasedPermits_areNeverReported() throws Exception {
    HostSemaphore semaphore = open("hl-released", 1, LeakDetection.PARANOID);
    for (int i = 0; i < 50; i++) {
      semaphore.tryAcquire(1).orElseThrow().release();
    }
    HostSemaphore control = open("hl-control", 1, LeakDetection.PARANOID);
    takeAndDrop(control, 1);

    LeakLog.collectUntil(() -> !reports.isEmpty());
    LeakLog.collectOnce(); // a report of a released permit would come with or before the control's
    assertEquals(1, reports.size(), "only the dropped one: " + reports);
    assertTrue(reports.get(0).message().contains("'hl-control'"));
  }

  /** Takes {@code permits} and drops them, in a frame of its own so nothing keeps them. */
  private static void takeAndDrop(HostSemaphore semaphore, int permits) {
    assertNotNull(semaphore.tryAcquire(permits).orElseThrow());
  }
}
