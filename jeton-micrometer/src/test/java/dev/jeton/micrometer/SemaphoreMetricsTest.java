package dev.jeton.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class SemaphoreMetricsTest {
  private final MeterRegistry registry = new SimpleMeterRegistry();

  private double gauge(String name) {
    return registry.get(name).tag("name", "db").gauge().value();
  }

  private double requests(String outcome) {
    return registry
        .get("jeton.semaphore.requests")
        .tags("name", "db", "outcome", outcome)
        .functionCounter()
        .count();
  }

  /** The README's example, as written there. */
  @Test
  void readmeExample() {
    Semaphore db = Semaphore.builder().name("db").limit(10).statistics(true).build();
    new SemaphoreMetrics(db, "db", Tag.of("service", "payments")).bindTo(registry);
    assertEquals(
        10,
        registry
            .get("jeton.semaphore.limit")
            .tags("name", "db", "service", "payments")
            .gauge()
            .value());
  }

  @Test
  void gaugesFollowTheSemaphore() throws Exception {
    Semaphore db = Semaphore.builder().name("db").limit(3).statistics(true).build();
    new SemaphoreMetrics(db, "db").bindTo(registry);
    assertEquals(3, gauge("jeton.semaphore.limit"));
    assertEquals(3, gauge("jeton.semaphore.available"));
    assertEquals(0, gauge("jeton.semaphore.queued"));

    Permit two = db.acquire(2);
    CompletableFuture<Permit> queued = db.acquireAsync(2);
    assertEquals(1, gauge("jeton.semaphore.available"));
    assertEquals(1, gauge("jeton.semaphore.queued"));
    db.setLimit(5);
    assertEquals(5, gauge("jeton.semaphore.limit"));
    queued.join().release();
    two.release();
    assertEquals(5, gauge("jeton.semaphore.available"));
    assertEquals(0, gauge("jeton.semaphore.queued"));
    assertEquals(1, gauge("jeton.semaphore.queued.peak"));
  }

  @Test
  void countersCountEveryOutcome() throws Exception {
    Semaphore db = Semaphore.builder().name("db").limit(1).statistics(true).build();
    SemaphoreMetrics metrics = new SemaphoreMetrics(db, "db");
    metrics.bindTo(registry);
    assertTrue(metrics.bindsStatistics());

    Permit held = db.acquire(1);
    assertTrue(db.tryAcquire(1).isEmpty()); // rejected
    assertThrows(TimeoutException.class, () -> db.acquire(1, Duration.ofMillis(1))); // timeout
    CompletableFuture<Permit> cancelled = db.acquireAsync(1);
    cancelled.cancel(false);
    CompletableFuture<Permit> waiting = db.acquireAsync(1);
    held.release();
    waiting.join().release();

    assertEquals(2, requests("acquired"));
    assertEquals(1, requests("rejected"));
    assertEquals(1, requests("timeout"));
    assertEquals(1, requests("cancelled"));
    assertEquals(2, registry.get("jeton.semaphore.releases").functionCounter().count());
    FunctionTimer wait = registry.get("jeton.semaphore.wait").functionTimer();
    assertEquals(2, wait.count());
    assertTrue(wait.totalTime(TimeUnit.NANOSECONDS) > 0, "the queued request waited");
    double max = registry.get("jeton.semaphore.wait.max").timeGauge().value(TimeUnit.NANOSECONDS);
    assertTrue(max > 0 && max <= wait.totalTime(TimeUnit.NANOSECONDS), "max " + max);
  }

  /** A permit dropped without release, reported by leak detection, counts as leaked. */
  @Test
  void aLeakedPermitIsCounted() throws Exception {
    Semaphore db =
        Semaphore.builder()
            .name("db")
            .limit(2)
            .statistics(true)
            .leakDetection(LeakDetection.PARANOID)
            .build();
    new SemaphoreMetrics(db, "db").bindTo(registry);
    FunctionCounter leaked = registry.get("jeton.semaphore.leaked").functionCounter();
    assertEquals(0, leaked.count());

    dropAPermit(db);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2); // a hang guard only
    while (leaked.count() == 0) {
      assertTrue(System.nanoTime() - deadline < 0, "no leak counted within the hang guard");
      System.gc();
      Thread.sleep(20);
    }
    assertEquals(1, leaked.count());
    assertEquals(1, requests("acquired"));
  }

  private static void dropAPermit(Semaphore semaphore) {
    assertTrue(semaphore.tryAcquire(1).isPresent());
  }

  @Test
  void withoutStatisticsOnlyTheGaugesAreBound() {
    Semaphore plain = Semaphore.create(2);
    SemaphoreMetrics metrics = new SemaphoreMetrics(plain, "db");
    metrics.bindTo(registry);
    assertFalse(metrics.bindsStatistics());
    assertEquals(3, registry.getMeters().size());
    assertEquals(2, gauge("jeton.semaphore.available"));
    assertNull(registry.find("jeton.semaphore.requests").meter());
  }

  @Test
  void everyMeterCarriesTheNameAndTheGivenTags() {
    Semaphore db = Semaphore.builder().limit(2).statistics(true).build();
    new SemaphoreMetrics(db, "db", Tag.of("pool", "primary")).bindTo(registry);
    assertEquals(12, registry.getMeters().size());
    for (Meter meter : registry.getMeters()) {
      assertEquals("db", meter.getId().getTag("name"), meter.getId().toString());
      assertEquals("primary", meter.getId().getTag("pool"), meter.getId().toString());
    }
  }

  @Test
  void twoSemaphoresUnderTwoNamesAreTwoSetsOfMeters() {
    new SemaphoreMetrics(Semaphore.create(2), "a").bindTo(registry);
    new SemaphoreMetrics(Semaphore.create(7), "b").bindTo(registry);
    assertEquals(2, registry.get("jeton.semaphore.limit").tag("name", "a").gauge().value());
    assertEquals(7, registry.get("jeton.semaphore.limit").tag("name", "b").gauge().value());
  }

  @Test
  void badArgumentsFailNamingThem() {
    Semaphore s = Semaphore.create(1);
    IllegalArgumentException blank =
        assertThrows(IllegalArgumentException.class, () -> new SemaphoreMetrics(s, " "));
    assertTrue(blank.getMessage().contains("name"), blank.getMessage());
    NullPointerException noSemaphore =
        assertThrows(NullPointerException.class, () -> new SemaphoreMetrics(null, "x"));
    assertEquals("semaphore", noSemaphore.getMessage());
  }
}
