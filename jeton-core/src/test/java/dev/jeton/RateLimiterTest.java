package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The rate limiter on a clock the test moves: bursts, pacing in exact fractions of a nanosecond,
 * first-come-first-served waiting, withdrawal, rate changes, estimates, statistics and bad input.
 */
class RateLimiterTest {
  private static final long MS = 1_000_000L;
  private static final Duration SECOND = Duration.ofSeconds(1);

  private final ManualTime time = new ManualTime();

  @Test
  void aFullLimiter_letsTheBurstPass_thenPacesTheRest() {
    FifoRateLimiter limiter = time.limiter(10, SECOND, 5);
    for (int i = 0; i < 5; i++) {
      assertTrue(limiter.tryAcquire(), "the burst: " + i);
    }
    assertFalse(limiter.tryAcquire(), "the burst is spent");
    time.advance(100 * MS - 1);
    assertFalse(limiter.tryAcquire(), "one more only after a tenth of a second");
    time.advance(1);
    assertTrue(limiter.tryAcquire());
    assertFalse(limiter.tryAcquire());
    time.advance(10_000 * MS); // a long pause refills the burst, never more
    assertTrue(limiter.tryAcquire(5));
    assertFalse(limiter.tryAcquire());
  }

  /**
   * Three per second is 333,333,333 and a third nanoseconds apart: never rounded to more, and the
   * thirds add up, so that after the burst exactly three more pass in a second.
   */
  @Test
  void aRateOfNoWholeNanoseconds_isKeptExactly() {
    FifoRateLimiter limiter = time.limiter(3, SECOND, 3);
    assertTrue(limiter.tryAcquire(3)); // the burst, at 0
    time.advance(333_333_333);
    assertFalse(limiter.tryAcquire(), "a third of a nanosecond early");
    time.advance(1);
    assertTrue(limiter.tryAcquire()); // at 333,333,334
    time.advance(333_333_332);
    assertFalse(limiter.tryAcquire(), "due at 666,666,666 and two thirds");
    time.advance(1);
    assertTrue(limiter.tryAcquire()); // at 666,666,667
    time.advance(333_333_332);
    assertFalse(limiter.tryAcquire(), "due at one second exactly");
    time.advance(1);
    assertTrue(limiter.tryAcquire(), "three in the second after the burst, exactly");
    assertFalse(limiter.tryAcquire());

    // and on for a hundred seconds: the k-th after the burst passes at ceil(k / 3 s), never a
    // nanosecond sooner, which dropping the thirds would make it
    long start = time.getAsLong() - 1_000_000_000L;
    for (long k = 4; k <= 300; k++) {
      long due = start + (k * 1_000_000_000L + 2) / 3;
      time.advance(due - 1 - time.getAsLong());
      assertFalse(limiter.tryAcquire(), "number " + k + " a nanosecond early");
      time.advance(1);
      assertTrue(limiter.tryAcquire(), "number " + k + " when due");
    }
  }

  @Test
  void aHeavyRequest_isNeverPassedByLighterOnesBehindIt() throws Exception {
    FifoRateLimiter limiter = time.limiter(10, SECOND, 10);
    assertTrue(limiter.tryAcquire(10));
    CompletableFuture<Void> heavy = limiter.acquireAsync(10);
    CompletableFuture<Void> light = limiter.acquireAsync(1);
    assertEquals(2, limiter.queueLength());
    time.advance(500 * MS);
    assertFalse(limiter.tryAcquire(), "a try never passes anyone waiting");
    assertFalse(light.isDone(), "the light one waits behind the heavy one");
    time.advance(500 * MS);
    assertTrue(heavy.isDone(), "the heavy one passes once ten have drained");
    assertFalse(light.isDone());
    time.advance(100 * MS);
    assertTrue(light.isDone());
    assertEquals(0, limiter.queueLength());
  }

  @Test
  void aHeadThatGivesUp_givesItsTurnToTheOnesBehind() {
    FifoRateLimiter limiter = time.limiter(10, SECOND, 10);
    assertTrue(limiter.tryAcquire(10));
    CompletableFuture<Void> heavy = limiter.acquireAsync(10);
    CompletableFuture<Void> light = limiter.acquireAsync(1);
    time.advance(100 * MS);
    assertFalse(light.isDone());
    assertTrue(heavy.cancel(false));
    assertTrue(light.isDone(), "the light one passes at once: one has drained");
    assertEquals(0, limiter.queueLength());
    assertEquals(0, time.pending(), "no wake-up left behind");
  }

  /**
   * A request that passed, cancelled before its future completed (its completion still waits in the
   * executor), never reaches its caller: its weight goes back to the limiter.
   */
  @Test
  void aRequestCancelledAsItPasses_givesItsWeightBack() {
    Queue<Runnable> completions = new ArrayDeque<>();
    FifoRateLimiter limiter =
        new FifoRateLimiter(null, 1, SECOND, 2, true, completions::add, time, time);
    assertTrue(limiter.tryAcquire()); // one of two left
    CompletableFuture<Void> heavy = limiter.acquireAsync(2);
    CompletableFuture<Void> light = limiter.acquireAsync(1);
    assertTrue(heavy.cancel(false)); // the light one passes; its completion waits
    assertEquals(0, limiter.queueLength());
    assertTrue(light.cancel(false), "claimed before its completion ran");
    completions.forEach(Runnable::run);
    assertTrue(light.isCancelled());
    assertTrue(limiter.tryAcquire(), "its weight came back");
    assertFalse(limiter.tryAcquire());
  }

  @Test
  void aTimedRequest_timesOutOnItsOwnTimer_andLeavesTheQueue() {
    FifoRateLimiter limiter = time.limiter(1, SECOND, 1);
    assertTrue(limiter.tryAcquire());
    CompletableFuture<Void> late = limiter.acquireAsync(1, Duration.ofMillis(200));
    time.advance(200 * MS);
    ExecutionException e = assertThrows(ExecutionException.class, late::get);
    assertInstanceOf(TimeoutException.class, e.getCause());
    assertTrue(e.getCause().getMessage().startsWith("timed out after 200ms waiting for 1"));
    assertEquals(0, limiter.queueLength());
    time.advance(800 * MS);
    assertTrue(limiter.tryAcquire(), "its turn was not taken");
  }

  @Test
  void raisingTheRate_letsTheHeadPassSooner_andLoweringItLater() {
    FifoRateLimiter limiter = time.limiter(1, SECOND, 1);
    assertTrue(limiter.tryAcquire());
    CompletableFuture<Void> next = limiter.acquireAsync(1);
    time.advance(100 * MS); // 900 ms owed at one a second
    limiter.setRate(10, SECOND); // what is owed, nine tenths of one, drains at ten a second
    time.advance(90 * MS - 1);
    assertFalse(next.isDone());
    time.advance(1);
    assertTrue(next.isDone());

    CompletableFuture<Void> after = limiter.acquireAsync(1); // owed: one tenth of a second
    limiter.setRate(1, SECOND); // now one whole second
    time.advance(999 * MS);
    assertFalse(after.isDone());
    time.advance(MS);
    assertTrue(after.isDone());
    assertEquals(1, limiter.permits());
    assertEquals(SECOND, limiter.period());
  }

  @Test
  void timeToAdmit_countsTheQueueAhead() {
    FifoRateLimiter limiter = time.limiter(10, SECOND, 10);
    assertEquals(Duration.ZERO, limiter.timeToAdmit(10));
    assertTrue(limiter.tryAcquire(10));
    assertEquals(Duration.ofMillis(100), limiter.timeToAdmit(1));
    var queued = limiter.acquireAsync(5);
    assertEquals(Duration.ofMillis(600), limiter.timeToAdmit(1), "five ahead, then one");
    assertEquals(Duration.ofMillis(1500), limiter.timeToAdmit(10));
    assertFalse(queued.isDone());
  }

  @Test
  void statistics_countRequests() {
    FifoRateLimiter limiter = time.limiter(10, SECOND, 1);
    assertTrue(limiter.tryAcquire());
    assertFalse(limiter.tryAcquire());
    CompletableFuture<Void> waiting = limiter.acquireAsync(1);
    CompletableFuture<Void> cancelled = limiter.acquireAsync(1);
    CompletableFuture<Void> timedOut = limiter.acquireAsync(1, Duration.ofMillis(50));
    assertTrue(cancelled.cancel(false));
    time.advance(100 * MS);
    assertTrue(waiting.isDone());
    assertTrue(timedOut.isCompletedExceptionally());
    RateLimiterStats stats = limiter.stats().orElseThrow();
    assertEquals(2, stats.admitted());
    assertEquals(1, stats.rejected());
    assertEquals(1, stats.cancelled());
    assertEquals(1, stats.timedOut());
    assertEquals(0, stats.queueLength());
    assertEquals(3, stats.peakQueueLength());
  }

  @Test
  void badInput_failsAtOnce_namingTheValue() {
    RateLimiter limiter = RateLimiter.builder().rate(10, SECOND).burst(5).name("api").build();
    assertEquals(
        "weight 6 exceeds the burst 5 of rate limiter 'api': it could never pass",
        assertThrows(IllegalArgumentException.class, () -> limiter.tryAcquire(6)).getMessage());
    assertEquals(
        "weight must be 1 or more, was 0",
        assertThrows(IllegalArgumentException.class, () -> limiter.acquireAsync(0)).getMessage());
    assertThrows(IllegalArgumentException.class, () -> limiter.acquire(1, Duration.ofSeconds(-1)));
    assertEquals(
        "rate must be 1 or more permits per period, was 0",
        assertThrows(IllegalArgumentException.class, () -> RateLimiter.create(0, SECOND))
            .getMessage());
    assertEquals(
        "the period must be positive, was PT-1S",
        assertThrows(IllegalArgumentException.class, () -> limiter.setRate(1, SECOND.negated()))
            .getMessage());
    assertEquals(10, limiter.permits(), "a refused rate changes nothing");
    assertThrows(IllegalArgumentException.class, () -> RateLimiter.builder().burst(0));
    assertEquals(
        "a rate limiter needs a rate: call rate(permits, period)",
        assertThrows(IllegalStateException.class, () -> RateLimiter.builder().build())
            .getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> RateLimiter.builder().rate(1, Duration.ofDays(365 * 300)).build(),
        "a period too long for nanoseconds");
  }

  @Test
  void theDefaultBurst_isOnePeriodsPermits() {
    assertEquals(100, RateLimiter.create(100, SECOND).burst());
    assertEquals(Integer.MAX_VALUE, RateLimiter.create(3_000_000_000L, SECOND).burst());
  }

  @Test
  void blockingAcquire_waitsForItsTurn() throws Exception {
    FifoRateLimiter limiter = time.limiter(10, SECOND, 1);
    assertTrue(limiter.tryAcquire());
    CompletableFuture<Void> passed = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                limiter.acquire();
                passed.complete(null);
              } catch (Throwable e) {
                passed.completeExceptionally(e);
              }
            });
    waiter.start();
    TestThreads.awaitTrue(() -> limiter.queueLength() == 1, "the waiter queued");
    assertFalse(passed.isDone());
    time.advance(100 * MS);
    TestThreads.done(passed);
    waiter.join();
  }
}
