package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.RateLimiterStats;
import dev.jeton.redis.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** {@link RedisRateLimiter} against a real redis-server: the API, giving up, bad input. */
class RedisRateLimiterIntegrationTest extends RedisServerPerTest {
  private static final Duration MINUTE = Duration.ofMinutes(1);
  private static final long PATIENCE = Await.HANG_GUARD.toSeconds(); // only against a hang

  RedisRateLimiter open(String name, long permits, Duration period, int burst) {
    RedisRateLimiter limiter =
        RedisRateLimiter.builder(name)
            .uri(server.uri())
            .rate(permits, period)
            .burst(burst)
            .statistics(true)
            .open();
    toClose.add(limiter);
    return limiter;
  }

  @Test
  void theBurstPassesAtOnceThenEachWaitsItsTurn() throws Exception {
    RedisRateLimiter api = open("api", 1, MINUTE, 3);
    assertTrue(api.tryAcquire());
    assertTrue(api.tryAcquire(2));
    assertFalse(api.tryAcquire());
    Duration wait = api.timeToAdmit(1);
    assertTrue(
        wait.compareTo(Duration.ofSeconds(50)) > 0 && wait.compareTo(MINUTE) <= 0, "" + wait);
    RateLimiterStats stats = api.stats().orElseThrow();
    assertEquals(2, stats.admitted());
    assertEquals(1, stats.rejected());
    assertEquals(1, api.permits());
    assertEquals(MINUTE, api.period());
    assertEquals(3, api.burst());
  }

  @Test
  void aRequestWaitsOnATimerForItsInstant() throws Exception {
    RedisRateLimiter api = open("paced", 20, Duration.ofSeconds(1), 1); // one every 50 ms
    api.acquire();
    long before = System.nanoTime();
    api.acquire();
    // Redis gave it the instant 50 ms after the first; the wait is counted from Redis's answer
    assertTrue(System.nanoTime() - before >= TimeUnit.MILLISECONDS.toNanos(40));
    assertEquals(2, api.stats().orElseThrow().admitted());
    assertEquals(0, api.queueLength());
  }

  @Test
  void requestsPassInTheOrderRedisReceivedThemAcrossHandles() throws Exception {
    RedisRateLimiter a = open("fifo", 50, Duration.ofSeconds(1), 3);
    RedisRateLimiter b = open("fifo", 50, Duration.ofSeconds(1), 3);
    assertTrue(a.tryAcquire(3)); // empty it: everything below waits
    List<String> order = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Void>> all = new ArrayList<>();
    String[] who = {"a1", "b1", "a-heavy", "b2", "a2"};
    int[] weights = {1, 1, 3, 1, 1};
    for (int i = 0; i < who.length; i++) {
      RedisRateLimiter handle = who[i].startsWith("a") ? a : b;
      String name = who[i];
      CompletableFuture<Void> f = handle.acquireAsync(weights[i]);
      all.add(f.thenRun(() -> order.add(name)));
      handle.timeToAdmit(1); // on the same connection: Redis has received the request
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]))
        .get(PATIENCE, TimeUnit.SECONDS);
    assertEquals(List.of(who), order);
  }

  @Test
  void aRequestGivenUpGivesItsInstantBackWhenNoOneCameAfterIt() throws Exception {
    RedisRateLimiter api = open("giveback", 1, MINUTE, 1);
    assertTrue(api.tryAcquire());
    Duration empty = api.timeToAdmit(1);
    CompletableFuture<Void> waiting = api.acquireAsync(1);
    Duration behind = api.timeToAdmit(1);
    assertTrue(behind.minus(empty).compareTo(Duration.ofSeconds(50)) > 0, empty + " " + behind);
    assertEquals(1, api.queueLength());
    assertTrue(waiting.cancel(true));
    assertEquals(0, api.queueLength());
    Await.until(() -> api.timeToAdmit(1).compareTo(behind.minusSeconds(50)) < 0, "the give-back");
    assertEquals(1, api.stats().orElseThrow().cancelled());
  }

  @Test
  void anInstantWithOthersAfterItGoesUnusedAndTheirsStay() throws Exception {
    RedisRateLimiter api = open("middle", 1, MINUTE, 1);
    assertTrue(api.tryAcquire());
    CompletableFuture<Void> first = api.acquireAsync(1);
    CompletableFuture<Void> second = api.acquireAsync(1);
    Duration behindBoth = api.timeToAdmit(1);
    assertTrue(first.cancel(true));
    // the give-back was refused: a request made now still comes after both
    Duration now = api.timeToAdmit(1);
    assertTrue(now.compareTo(behindBoth.minusSeconds(10)) > 0, behindBoth + " then " + now);
    assertFalse(second.isDone());
  }

  @Test
  void aTimeoutBeforeTheInstantFailsAtOnceAndTakesNothing() throws Exception {
    RedisRateLimiter api = open("timeout", 1, MINUTE, 1);
    assertTrue(api.tryAcquire());
    Duration before = api.timeToAdmit(1);
    TimeoutException e =
        assertThrows(TimeoutException.class, () -> api.acquire(1, Duration.ofSeconds(30)));
    assertTrue(e.getMessage().contains("beyond its timeout of PT30S"), e.getMessage());
    assertTrue(api.timeToAdmit(1).compareTo(before) <= 0, "nothing was reserved");
    ExecutionException async =
        assertThrows(
            ExecutionException.class,
            () -> api.acquireAsync(1, Duration.ZERO).get(PATIENCE, TimeUnit.SECONDS));
    assertTrue(async.getCause() instanceof TimeoutException, async.toString());
    assertEquals(2, api.stats().orElseThrow().timedOut());
  }

  @Test
  void anInterruptedWaitGivesUpAndGivesBack() throws Exception {
    RedisRateLimiter api = open("interrupt", 1, MINUTE, 1);
    assertTrue(api.tryAcquire());
    Duration empty = api.timeToAdmit(1);
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                api.acquire();
                thrown.complete(null);
              } catch (Throwable t) {
                thrown.complete(t);
              }
            });
    waiter.start();
    Await.until(() -> api.timeToAdmit(1).compareTo(empty.plusSeconds(50)) > 0, "the reservation");
    waiter.interrupt();
    assertTrue(thrown.get(PATIENCE, TimeUnit.SECONDS) instanceof InterruptedException);
    Await.until(() -> api.timeToAdmit(1).compareTo(empty.plusSeconds(10)) < 0, "the give-back");
    assertEquals(0, api.queueLength());
  }

  @Test
  void setRateReachesEveryHandle() {
    RedisRateLimiter a = open("rate", 10, Duration.ofSeconds(1), 10);
    RedisRateLimiter b =
        RedisRateLimiter.builder("rate").uri(server.uri()).open(); // as it is in Redis
    toClose.add(b);
    a.setRate(100, Duration.ofSeconds(2));
    assertEquals(100, a.permits());
    assertTrue(b.tryAcquire()); // every answer carries the rate
    assertEquals(100, b.permits());
    assertEquals(Duration.ofSeconds(2), b.period());
    assertEquals(10, b.burst(), "the burst stays");
  }

  @Test
  void openingRefusesAnotherRateAndAMissingLimiter() {
    open("existing", 10, Duration.ofSeconds(1), 5);
    IllegalArgumentException other =
        assertThrows(
            IllegalArgumentException.class, () -> open("existing", 11, Duration.ofSeconds(1), 5));
    assertTrue(other.getMessage().contains("exists with 10 per PT1S"), other.getMessage());
    IllegalArgumentException burst =
        assertThrows(
            IllegalArgumentException.class, () -> open("existing", 10, Duration.ofSeconds(1), 6));
    assertTrue(burst.getMessage().contains("burst of 5"), burst.getMessage());
    // the same rate written another way is the same rate
    open("existing", 20, Duration.ofSeconds(2), 5);
    IllegalArgumentException missing =
        assertThrows(
            IllegalArgumentException.class,
            () -> RedisRateLimiter.builder("missing").uri(server.uri()).open());
    assertTrue(missing.getMessage().contains("give the builder a rate"), missing.getMessage());
  }

  @Test
  void badInputFailsAtOnceNamingTheValue() {
    RedisRateLimiter.Builder builder = RedisRateLimiter.builder("bad").uri(server.uri());
    assertMessage("was 0", () -> builder.rate(0, Duration.ofSeconds(1)));
    assertMessage("was -5", () -> builder.rate(-5, Duration.ofSeconds(1)));
    assertMessage("PT0S", () -> builder.rate(1, Duration.ZERO));
    assertMessage("was 0", () -> builder.burst(0));
    assertMessage(
        "too fine to count exactly in Redis",
        () -> builder.rate(7_000_001, Duration.ofSeconds(1)).open());
    assertMessage("35 years", () -> builder.rate(1, Duration.ofDays(365)).burst(100).open());
    RedisRateLimiter api = open("weights", 10, Duration.ofSeconds(1), 4);
    assertMessage("burst, 4, of rate limiter 'weights': was 5", () -> api.tryAcquire(5));
    assertMessage("was 0", () -> api.acquireAsync(0));
    assertMessage("must not be negative", () -> api.acquireAsync(1, Duration.ofSeconds(-1)));
    assertThrows(
        IllegalArgumentException.class, () -> RedisRateLimiter.builder("no spaces please"));
  }

  @Test
  void aClosedHandleFailsItsWaitersAndRefusesMore() throws Exception {
    RedisRateLimiter api = open("closing", 1, MINUTE, 1);
    assertTrue(api.tryAcquire());
    Duration empty = api.timeToAdmit(1);
    CompletableFuture<Void> waiting = api.acquireAsync(1);
    api.timeToAdmit(1); // received
    api.close();
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> waiting.get(PATIENCE, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
    assertThrows(IllegalStateException.class, api::tryAcquire);
    RedisRateLimiter again = open("closing", 1, MINUTE, 1);
    assertTrue(again.timeToAdmit(1).compareTo(empty.plusSeconds(10)) < 0, "given back on close");
  }

  @Test
  void aHandleClosedWithACallInFlightGivesBackWhatItsAnswerReserved() throws Exception {
    RedisRateLimiter api = open("in-flight", 1, MINUTE, 1);
    assertTrue(api.tryAcquire()); // the request below has to wait a minute
    RedisRateLimiter handle = RedisRateLimiter.builder("in-flight").uri(server.uri()).open();
    server.pause(); // the call below waits in Redis's socket until it resumes
    CompletableFuture<Void> request;
    CompletableFuture<Void> resumed;
    try {
      request = handle.acquireAsync(1);
      resumed =
          CompletableFuture.runAsync(
              () -> {
                try {
                  Thread.sleep(500); // while close() waits for the answer
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                server.resume();
              });
      handle.close();
    } finally {
      server.resume();
    }
    resumed.get(PATIENCE, TimeUnit.SECONDS);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> request.get(PATIENCE, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
    Duration wait = api.timeToAdmit(1);
    assertTrue(wait.compareTo(MINUTE) <= 0, "the reservation was given back: " + wait);
  }

  @Test
  void throughJedis() throws Exception {
    RedisRateLimiter api =
        RedisRateLimiter.builder("jedis")
            .uri(server.uri())
            .jedis()
            .rate(50, Duration.ofSeconds(1))
            .burst(1)
            .open();
    toClose.add(api);
    api.acquire();
    api.acquire(); // 20 ms later
    assertFalse(api.tryAcquire());
    assertEquals(50, api.permits());
  }

  private static void assertMessage(String part, org.junit.jupiter.api.function.Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(part), "'" + e.getMessage() + "' lacks '" + part + "'");
  }
}
