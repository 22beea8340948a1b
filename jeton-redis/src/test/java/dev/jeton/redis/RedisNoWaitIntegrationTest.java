package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.RandomizedHistoryChecker.MonitorLine;
import dev.jeton.redis.RedisRandomizedIntegrationTest.RedisMonitor;
import dev.jeton.redis.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Requests that do not wait (a zero timeout, {@code tryAcquire}) against a real redis-server: sent
 * as tries, never queued; and in the quarantine after Redis lost its state, failed with the
 * quarantine as the reason. Issue 29's regression tests: a zero timeout was sent as "queue" (it sat
 * in Redis's queue until its withdrawal came), and a try in quarantine answered "busy", as on a
 * full semaphore.
 */
class RedisNoWaitIntegrationTest extends RedisServerPerTest {
  private static final long GUARD = Await.HANG_GUARD.toSeconds();

  private RedisSemaphore open(String name, int limit, Duration lease) {
    RedisSemaphore semaphore =
        RedisSemaphore.builder(name)
            .uri(server.uri())
            .limit(limit)
            .options(RedisSemaphoreOptions.defaults().withLeaseTime(lease))
            .open();
    toClose.add(semaphore);
    return semaphore;
  }

  private static String keyTag(String name) {
    return "{" + RedisSemaphoreOptions.DEFAULT_KEY_PREFIX + ":" + name + "}";
  }

  /** The acquires among {@code lines} (FCALL fn 4 keys... acquire create channel ...). */
  private static List<MonitorLine> acquires(List<MonitorLine> lines) {
    return lines.stream()
        .filter(line -> line.command().equals("FCALL") && line.arg(7).equals("acquire"))
        .toList();
  }

  private static void assertNothingQueued(List<MonitorLine> lines) {
    for (MonitorLine line : lines) {
      if (line.command().equals("FCALL") && line.arg(7).equals("acquire")) {
        assertEquals("try", line.arg(12), "sent as a try: " + line.args());
      }
      if (line.command().equals("ZADD") && line.arg(1).endsWith(":queue")) {
        throw new AssertionError("a request entered Redis's queue: " + line.args());
      }
    }
  }

  private static TimeoutException timedOut(CompletableFuture<?> future) {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> future.get(GUARD, TimeUnit.SECONDS));
    return assertInstanceOf(TimeoutException.class, e.getCause(), () -> e.getCause().toString());
  }

  @Test
  void zeroTimeout_onAFullSemaphore_isATry_neverQueued_andTimesOutWithoutCause() throws Exception {
    RedisSemaphore sem = open("full", 1, Duration.ofSeconds(30));
    Lease held = sem.acquire(1);
    RedisMonitor monitor = RedisMonitor.start(server.port(), keyTag("full"));
    for (int i = 0; i < 100; i++) {
      assertNull(timedOut(sem.acquireLeaseAsync(1, Duration.ZERO)).getCause(), "no permit free");
    }
    TimeoutException blocking =
        assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ZERO));
    assertNull(blocking.getCause(), "no permit free");
    List<MonitorLine> lines = monitor.finish(server);
    assertNothingQueued(lines);
    assertEquals(101, acquires(lines).size(), "one call each");
    assertEquals(0, sem.queueLength());
    held.release();
  }

  @Test
  void zeroTimeout_onAFreeSemaphore_isGrantedInOneCall() throws Exception {
    RedisSemaphore sem = open("free", 2, Duration.ofSeconds(30));
    RedisMonitor monitor = RedisMonitor.start(server.port(), keyTag("free"));
    Lease lease = sem.acquireLeaseAsync(1, Duration.ZERO).get(GUARD, TimeUnit.SECONDS);
    Lease blocking = sem.acquire(1, Duration.ZERO);
    List<MonitorLine> lines = monitor.finish(server);
    assertNothingQueued(lines);
    assertEquals(2, acquires(lines).size(), "one call each");
    assertTrue(lease.isHeld() && blocking.isHeld());
    lease.release();
    blocking.release();
  }

  /** Restarts Redis (its state lost) and recreates the semaphore through {@code sem}. */
  private void restartedIntoQuarantine(RedisSemaphore sem) throws InterruptedException {
    server.restart(); // no persistence: every key is gone
    Await.until(
        () -> {
          try {
            return sem.limit() == 1; // the first call recreates it, in quarantine
          } catch (RuntimeException reconnecting) {
            return false;
          }
        },
        "the handle to reach the restarted Redis");
  }

  private static void assertQuarantine(Throwable why, Duration lease) {
    SemaphoreQuarantinedException q =
        assertInstanceOf(SemaphoreQuarantinedException.class, why, () -> String.valueOf(why));
    assertTrue(q.getMessage().contains("'restarted' is in quarantine until "), q.getMessage());
    assertTrue(q.until().isAfter(Instant.now().minusSeconds(5)), "ends ahead: " + q.until());
    assertTrue(q.remaining().compareTo(lease) <= 0 && !q.remaining().isNegative(), q.getMessage());
  }

  @Test
  void inQuarantine_requestsThatDoNotWaitFailWithIt_andNothingIsQueued() throws Exception {
    Duration lease = Duration.ofSeconds(60); // longer than this test can take
    RedisSemaphore sem = open("restarted", 1, lease);
    sem.acquire(1).release();
    restartedIntoQuarantine(sem);
    RedisMonitor monitor = RedisMonitor.start(server.port(), keyTag("restarted"));

    assertQuarantine(
        assertThrows(SemaphoreQuarantinedException.class, () -> sem.tryAcquire(1)), lease);
    assertQuarantine(timedOut(sem.acquireLeaseAsync(1, Duration.ZERO)).getCause(), lease);
    assertQuarantine(
        assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ZERO)).getCause(),
        lease);
    assertNothingQueued(monitor.finish(server));

    // A waiter with a timeout waits in the queue; timed out in quarantine, it says so.
    assertQuarantine(
        assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ofMillis(300)))
            .getCause(),
        lease);
    assertQuarantine(timedOut(sem.acquireLeaseAsync(1, Duration.ofMillis(300))).getCause(), lease);
    assertEquals(0, sem.queueLength(), "the timed-out waiters withdrew");
  }

  @Test
  void aWaiterWithATimeout_waitsThroughTheQuarantine_andIsGrantedAfterIt() throws Exception {
    Duration lease = Duration.ofSeconds(2);
    RedisSemaphore sem = open("restarted", 1, lease);
    sem.acquire(1).release();
    restartedIntoQuarantine(sem);
    Lease granted = sem.acquire(1, Await.HANG_GUARD);
    assertTrue(granted.isHeld());
    granted.release();
    sem.tryAcquire(1).orElseThrow().release(); // and tries succeed again
  }
}
