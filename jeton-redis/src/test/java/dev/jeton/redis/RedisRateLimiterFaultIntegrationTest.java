package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.ChildJvm;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link RedisRateLimiter} when Redis restarts empty or freezes, and with another process
 * competing.
 */
class RedisRateLimiterFaultIntegrationTest extends RedisServerPerTest {
  private static final Duration MINUTE = Duration.ofMinutes(1);
  private static final long PATIENCE = Await.HANG_GUARD.toSeconds(); // only against a hang

  private RedisRateLimiter open(String name, long permits, Duration period, int burst) {
    RedisRateLimiter limiter =
        RedisRateLimiter.builder(name).uri(server.uri()).rate(permits, period).burst(burst).open();
    toClose.add(limiter);
    return limiter;
  }

  /** Whether a call gets through, after a restart; a failure is Redis not back yet. */
  private static boolean answers(RedisRateLimiter limiter) {
    try {
      limiter.timeToAdmit(1);
      return true;
    } catch (RuntimeException notYet) {
      return false;
    }
  }

  @Test
  void aRestartWithoutPersistenceRecreatesTheLimiterAsIfAFullBurstHadJustPassed() throws Exception {
    RedisRateLimiter api = open("restart", 1, MINUTE, 1);
    assertTrue(api.tryAcquire());
    CompletableFuture<Void> waiting = api.acquireAsync(1); // its instant is a minute away
    assertTrue(api.timeToAdmit(1).compareTo(Duration.ofSeconds(100)) > 0);

    server.restart();
    Await.until(() -> answers(api), "Redis to answer again");
    // recreated no earlier than the last instant this handle had heard of: the waiter's instant
    // stays the last one given, and a new request comes after it
    assertFalse(api.tryAcquire());
    Duration wait = api.timeToAdmit(1);
    assertTrue(wait.compareTo(Duration.ofSeconds(90)) > 0, "" + wait);
    assertFalse(waiting.isDone());
  }

  @Test
  void aHandleThatSawTheStateRecreatesItAsIfABurstHadJustPassed() throws Exception {
    RedisRateLimiter seen = open("restart2", 1, MINUTE, 2);
    assertTrue(seen.tryAcquire(2));
    server.restart();
    Await.until(() -> answers(seen), "Redis to answer again");
    // the first call after the restart was this handle's (answers), which had seen the state
    assertFalse(seen.tryAcquire());
  }

  @Test
  void aFrozenRedisTimesOutTimedRequestsAndTheLateReservationIsGivenBack() throws Exception {
    // an hour to refill one unit: only a give-back frees the weight within the test
    RedisRateLimiter api = open("frozen", 1, Duration.ofHours(1), 2);
    assertTrue(api.timeToAdmit(2).isZero());
    server.pause();
    try {
      TimeoutException e =
          assertThrows(TimeoutException.class, () -> api.acquire(1, Duration.ofMillis(300)));
      assertTrue(e.getMessage().contains("did not answer"), e.getMessage());
    } finally {
      server.resume();
    }
    // the call reached Redis late and reserved; its answer found the request gone and gave back
    Await.until(() -> api.timeToAdmit(2).isZero(), "the late reservation to be given back");
    assertTrue(api.tryAcquire(2));
    assertEquals(0, api.queueLength());
  }

  @Test
  void aRequestWithoutATimeoutWaitsOutAFrozenRedis() throws Exception {
    RedisRateLimiter api = open("frozen2", 1, Duration.ofHours(1), 2);
    assertTrue(api.timeToAdmit(1).isZero());
    CompletableFuture<Void> patient;
    server.pause();
    try {
      patient = api.acquireAsync(1);
      assertFalse(patient.isDone());
      assertEquals(1, api.queueLength());
    } finally {
      server.resume();
    }
    patient.get(PATIENCE, TimeUnit.SECONDS);
    assertTrue(api.tryAcquire());
    assertFalse(api.tryAcquire());
  }

  @Test
  void twoProcessesShareTheRateAndBothProgress() throws Exception {
    int perProcess = 30;
    long periodMillis = 1000;
    int permits = 40; // 25 ms apart
    int burst = 2;
    RedisRateLimiter here = open("shared", permits, Duration.ofMillis(periodMillis), burst);
    ChildJvm child =
        ChildJvm.start(
            RateClient.class,
            server.uri(),
            "shared",
            Integer.toString(permits),
            Long.toString(periodMillis),
            Integer.toString(burst),
            Integer.toString(perProcess));
    toClose.add(child);
    child.await("READY");
    long startMicros = redisMicros();
    child.tell("go");
    AtomicInteger passedHere = new AtomicInteger();
    for (int n = 0; n < perProcess; n++) {
      here.acquire();
      passedHere.incrementAndGet();
    }
    child.await("DONE");
    long elapsedMicros = redisMicros() - startMicros;
    // 60 passed; at most `burst` of them at once, the rest 25 ms apart at least, on Redis's clock
    long floor = (2L * perProcess - burst) * 25_000;
    assertTrue(elapsedMicros >= floor, elapsedMicros + " µs for 60, below " + floor);
    assertEquals(perProcess, passedHere.get());
  }

  private long redisMicros() {
    String[] time = server.command("TIME").split("\n");
    return Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
  }
}
