package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.contract.LeakLog;
import dev.jeton.redis.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leak detection for Redis leases, against a real redis-server: a lease dropped while held is
 * reported through {@code System.Logger} (read here through {@code java.util.logging}); by default
 * it stays held and renewed, and with {@code releaseLeaked} Redis frees it. A lease released, given
 * back or lost is never reported.
 */
class RedisLeakDetectionIntegrationTest extends RedisServerPerTest {
  /** Short, so that "still renewed" is seen over several lease times within seconds. */
  private static final Duration LEASE_TIME = Duration.ofSeconds(1);

  private final List<LeakLog.Logged> reports = new CopyOnWriteArrayList<>();
  private Runnable stopListening = () -> {};

  @BeforeEach
  void listen() {
    stopListening = LeakLog.listen("dev.jeton.leak", "Redis semaphore 'rl-", reports::add);
  }

  @AfterEach
  void stopListening() {
    stopListening.run();
  }

  private RedisSemaphore.Builder builder(String name, int limit) {
    return RedisSemaphore.builder(name)
        .uri(server.uri())
        .limitIfNew(limit)
        .options(RedisSemaphoreOptions.defaults().withLeaseTime(LEASE_TIME));
  }

  private RedisSemaphore open(RedisSemaphore.Builder builder) {
    RedisSemaphore semaphore = builder.open();
    toClose.add(semaphore);
    return semaphore;
  }

  /**
   * The case the issue found: a dropped lease was renewed for as long as the JVM ran, and nothing
   * said so. At the default level (no builder call, no system property in the test JVM) every lease
   * is watched: the first one dropped is reported, and stays held and renewed.
   */
  @Test
  void aDroppedLease_isReportedAtTheDefaultLevel_andStaysHeldAndRenewed() throws Exception {
    assertNull(System.getProperty("jeton.leakDetection"), "the default level is under test");
    RedisSemaphore semaphore = open(builder("rl-kept", 2));
    takeAndDrop(semaphore, 2);

    LeakLog.collectUntil(() -> !reports.isEmpty());
    LeakLog.assertKeptReport(
        reports.get(0),
        "Jeton: a lease of Redis semaphore 'rl-kept' was never released: 2 permits held for ");

    // Three lease times later it is still held in Redis: renewed, as the report says.
    RedisSemaphore other = open(builder("rl-kept", 2).leakDetection(LeakDetection.OFF));
    long threeLeaseTimes = System.nanoTime() + 3 * LEASE_TIME.toNanos();
    while (System.nanoTime() - threeLeaseTimes < 0) {
      assertTrue(other.tryAcquire(1).isEmpty(), "the leaked lease is still held");
      Thread.sleep(100);
    }
    assertEquals(1, reports.size(), "reported once: " + reports);
  }

  /**
   * With releaseLeaked, the report is followed by a release: Redis frees the permits at once. The
   * handle was closed first, which leaves a held lease held (and renewed) until it is released: the
   * case the issue found held until the JVM exited.
   */
  @Test
  void releaseLeaked_releasesTheLeaseInRedis_evenOfAClosedHandle() throws Exception {
    RedisSemaphore semaphore = open(builder("rl-released-once-found", 2).releaseLeaked(true));
    takeAndDrop(semaphore, 2);
    semaphore.close();

    RedisSemaphore other =
        open(builder("rl-released-once-found", 2).leakDetection(LeakDetection.OFF));
    // the report comes first, then the release: wait for the permits themselves
    LeakLog.collectUntil(() -> other.available() == 2);
    assertTrue(reports.get(0).message().contains("Its permits are given back now."));
    assertTrue(
        other
            .acquire(2, Duration.ofSeconds(5))
            .releaseAsync()
            .get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
  }

  /**
   * A lease is granted on one of Lettuce's threads; its report shows where it was asked for, on the
   * caller's thread.
   */
  @Test
  void paranoid_reportsTheStackOfTheAsynchronousCall() throws Exception {
    RedisSemaphore semaphore = open(builder("rl-stack", 1).leakDetection(LeakDetection.PARANOID));
    askAsynchronouslyAndDrop(semaphore);

    LeakLog.collectUntil(() -> !reports.isEmpty());
    Throwable acquiredAt = reports.get(0).thrown();
    assertNotNull(acquiredAt, "paranoid records every lease's stack");
    assertTrue(
        Arrays.stream(acquiredAt.getStackTrace())
            .anyMatch(frame -> frame.getMethodName().equals("askAsynchronouslyAndDrop")),
        "the caller's frame: " + Arrays.toString(acquiredAt.getStackTrace()));
  }

  /**
   * Leases released every way by threads that contend for them, withdrawn as they were granted, and
   * lost are never reported; a dropped one on another semaphore is, and its report tells when the
   * reporter has seen the rest.
   */
  @Test
  void releasedWithdrawnAndLostLeases_areNeverReported() throws Exception {
    RedisSemaphore semaphore =
        open(builder("rl-released", 2).leakDetection(LeakDetection.PARANOID));
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        done.add(threads.submit(() -> takeAndReleaseEveryWay(semaphore, 40)));
      }
      for (Future<?> f : done) {
        f.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    loseAndDrop(semaphore); // held nowhere once lost: no leak

    RedisSemaphore control = open(builder("rl-control", 1).leakDetection(LeakDetection.PARANOID));
    takeAndDrop(control, 1);
    LeakLog.collectUntil(() -> !reports.isEmpty());
    LeakLog.collectOnce(); // a report of any other lease would come with or before the control's
    assertEquals(1, reports.size(), "only the dropped one: " + reports);
    assertTrue(reports.get(0).message().contains("'rl-control'"), reports.get(0).message());
  }

  @Test
  void off_watchesNoLease() throws Exception {
    RedisSemaphore unwatched = open(builder("rl-off", 1).leakDetection(LeakDetection.OFF));
    takeAndDrop(unwatched, 1);
    RedisSemaphore control =
        open(builder("rl-off-control", 1).leakDetection(LeakDetection.PARANOID));
    takeAndDrop(control, 1);

    LeakLog.collectUntil(() -> !reports.isEmpty());
    LeakLog.collectOnce();
    assertEquals(1, reports.size(), "only the watched one: " + reports);
    assertTrue(reports.get(0).message().contains("'rl-off-control'"), reports.get(0).message());
  }

  /** Takes {@code permits} and drops them, in a frame of its own so nothing keeps them. */
  private static void takeAndDrop(RedisSemaphore semaphore, int permits) throws Exception {
    @Nullable Lease lease = semaphore.acquire(permits, Await.HANG_GUARD);
    assertNotNull(lease);
  }

  private static @Nullable Void takeAndReleaseEveryWay(RedisSemaphore semaphore, int rounds)
      throws Exception {
    long guard = Await.HANG_GUARD.toSeconds();
    for (int i = 0; i < rounds; i++) {
      semaphore.acquire(1).release();
      assertTrue(semaphore.acquireLeaseAsync(2).get(guard, TimeUnit.SECONDS).releaseAsync().join());
      semaphore.tryAcquire(1).ifPresent(Permit::close);
      CompletableFuture<Lease> raced = semaphore.acquireLeaseAsync(1);
      if (!raced.cancel(false)) {
        raced.get(guard, TimeUnit.SECONDS).release(); // granted first: ours to release
      }
      if (i % 10 == 0) {
        System.gc(); // a collection while others hold and release
      }
    }
    return null;
  }

  /** Takes a lease, makes Redis forget it, waits until the lease is found lost, and drops it. */
  private void loseAndDrop(RedisSemaphore semaphore) throws Exception {
    Lease lease = semaphore.acquire(1);
    server.command("FLUSHALL"); // the next renewal finds it gone
    lease.lost().toCompletableFuture().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
  }

  private static void askAsynchronouslyAndDrop(RedisSemaphore semaphore) throws Exception {
    assertNotNull(
        semaphore.acquireLeaseAsync(1).get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
  }
}
