package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.RateLimiterBoundTest.Admitted;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The keyed rate limiter on a clock the test moves (ManualTime): exact values, and the bound. */
class KeyedRateLimiterTest {
  private final ManualTime time = new ManualTime();

  private KeyedRateLimiter<String> limiter(long permits, Duration period, int burst, int maxKeys) {
    return KeyedRateLimiter.<String>builder()
        .rate(permits, period)
        .burst(burst)
        .maxKeys(maxKeys)
        .clock(time)
        .build();
  }

  @Test
  void badInput_failsAtOnce_namingTheValue() {
    KeyedRateLimiter.Builder<String> b = KeyedRateLimiter.builder();
    assertMessage("was 0", () -> b.rate(0, Duration.ofSeconds(1)));
    assertMessage("was -3", () -> b.rate(-3, Duration.ofSeconds(1)));
    assertMessage("was PT0S", () -> b.rate(1, Duration.ZERO));
    assertMessage("was PT-1S", () -> b.rate(1, Duration.ofSeconds(-1)));
    assertMessage("burst must be 1 or more, was 0", () -> b.burst(0));
    assertMessage("maxKeys must be 1 or more, was -1", () -> b.maxKeys(-1));
    assertThrows(IllegalStateException.class, b::build);
    KeyedRateLimiter<String> l = limiter(10, Duration.ofSeconds(1), 4, 10);
    assertMessage("the burst, 4, was 5", () -> l.tryAcquire("a", 5));
    assertMessage("was 0", () -> l.attempt("a", 0));
    assertMessage("was -1", () -> l.peek("a", -1));
    assertEquals(0, l.keys(), "a refused weight adds no key");
  }

  private static void assertMessage(String expected, Runnable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  @Test
  void burstPassesAtOnce_thenExactFractionsOfANanosecond() {
    KeyedRateLimiter<String> l = limiter(3, Duration.ofSeconds(1), 2, 10);
    KeyedRateLimiter.Attempt first = l.attempt("a", 1);
    assertTrue(first.passed());
    assertEquals(1, first.available());
    assertEquals(Duration.ZERO, first.retryAfter());
    assertEquals(Duration.ofNanos(333_333_334), first.untilFull()); // a third of a second, up
    assertTrue(l.tryAcquire("a"));
    KeyedRateLimiter.Attempt third = l.attempt("a", 1);
    assertFalse(third.passed());
    assertEquals(0, third.available());
    // tat = now + 2/3 s: one unit fits once tat - t <= 1/3 s, at 333,333,333 1/3 ns, so ...334
    assertEquals(Duration.ofNanos(333_333_334), third.retryAfter());
    assertEquals(Duration.ofNanos(666_666_667), third.untilFull());
    assertEquals(Duration.ofNanos(333_333_334), l.timeToAdmit("a", 1));
    assertEquals(Duration.ofNanos(666_666_667), l.timeToAdmit("a", 2));
    assertTrue(l.tryAcquire("b", 2), "another key has its own burst");

    time.advance(333_333_333);
    assertFalse(l.tryAcquire("a"), "a third of a nanosecond early");
    time.advance(1);
    assertTrue(l.tryAcquire("a"));
  }

  @Test
  void peek_takesNothing() {
    KeyedRateLimiter<String> l = limiter(1, Duration.ofSeconds(1), 1, 10);
    assertTrue(l.peek("a", 1).passed());
    assertEquals(0, l.keys(), "a peek at a new key adds nothing");
    assertTrue(l.tryAcquire("a"));
    KeyedRateLimiter.Attempt seen = l.peek("a", 1);
    assertFalse(seen.passed());
    assertEquals(Duration.ofSeconds(1), seen.retryAfter());
    assertFalse(l.tryAcquire("a"));
  }

  /**
   * The keyed limiter decides for each key exactly as a RateLimiter of its own would (its tries, on
   * the same clock), and keeps the bound per key, over random arrival times and weights.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void eachKey_decidesAsItsOwnRateLimiter_withinTheBound(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    long permits = 1 + random.nextInt(20);
    Duration period = Duration.ofMillis(1 + random.nextInt(2_000)).plusNanos(random.nextInt(7));
    int burst = 1 + random.nextInt(10);
    KeyedRateLimiter<String> keyed = limiter(permits, period, burst, 100);
    Map<String, FifoRateLimiter> alone = new HashMap<>();
    Map<String, List<Admitted>> admitted = new HashMap<>();
    long emission = period.toNanos() / permits + 1;
    int passed = 0;
    for (int step = 0; step < 4_000; step++) {
      String key = "k" + random.nextInt(5);
      int weight = 1 + random.nextInt(burst);
      FifoRateLimiter own = alone.computeIfAbsent(key, k -> time.limiter(permits, period, burst));
      boolean expected = own.tryAcquire(weight);
      assertEquals(expected, keyed.tryAcquire(key, weight), "step " + step + ", " + key);
      if (expected) {
        passed++;
        admitted
            .computeIfAbsent(key, k -> new ArrayList<>())
            .add(new Admitted(time.getAsLong(), weight));
      }
      if (random.nextInt(3) == 0) {
        time.advance(random.nextLong(2 * emission / 5 + 1));
      }
    }
    assertTrue(passed > 200, "enough admissions to mean something: " + passed);
    admitted
        .values()
        .forEach(a -> RateLimiterBoundTest.assertWithinBound(a, permits, period, burst));
  }

  /** With a table far too small for its keys, each key still keeps its bound. */
  @ParameterizedTest
  @ValueSource(longs = {11, 12, 13, 14})
  void aSmallTable_keepsTheBoundPerKey_andItsSize(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    Duration period = Duration.ofMillis(100);
    KeyedRateLimiter<String> l = limiter(3, period, 3, 4);
    Map<String, List<Admitted>> admitted = new HashMap<>();
    for (int step = 0; step < 4_000; step++) {
      String key = "k" + random.nextInt(12);
      int weight = 1 + random.nextInt(3);
      if (l.tryAcquire(key, weight)) {
        admitted
            .computeIfAbsent(key, k -> new ArrayList<>())
            .add(new Admitted(time.getAsLong(), weight));
      }
      assertTrue(l.keys() <= 4, "keys " + l.keys());
      time.advance(random.nextLong(5_000_000));
    }
    assertTrue(admitted.size() > 8, "most keys got in: " + admitted.keySet());
    admitted.values().forEach(a -> RateLimiterBoundTest.assertWithinBound(a, 3, period, 3));
  }

  @Test
  void aFullTable_refusesANewKey_untilAKeyIsIdle_neverEvictingABusyOne() {
    KeyedRateLimiter<String> l = limiter(1, Duration.ofSeconds(1), 2, 2);
    assertTrue(l.tryAcquire("a", 2)); // full in 2 s
    time.advance(500_000_000);
    assertTrue(l.tryAcquire("b")); // full in 1 s, at 1.5 s
    KeyedRateLimiter.Attempt c = l.attempt("c", 1);
    assertFalse(c.passed(), "no idle key to drop");
    assertEquals(Duration.ofMillis(1_000), c.retryAfter(), "when b is full again");
    assertFalse(l.tryAcquire("a"), "a keeps its state: no burst again");
    time.advance(999_999_999);
    assertFalse(l.tryAcquire("c"), "b is not full yet");
    time.advance(1);
    assertTrue(l.tryAcquire("c"), "b dropped, full again");
    assertEquals(2, l.keys());
    assertFalse(l.tryAcquire("a", 2), "a, kept, still owes half a second");
    assertTrue(l.tryAcquire("a", 1));
  }

  @Test
  void giveBack_restoresTheWeight_onlyIfNothingPassedSince() {
    KeyedRateLimiter<String> l = limiter(1, Duration.ofSeconds(1), 2, 10);
    KeyedRateLimiter.Attempt first = l.attempt("a", 2);
    assertTrue(l.giveBack(first));
    assertFalse(l.giveBack(first), "once");
    assertEquals(0, l.keys(), "full again: dropped");
    KeyedRateLimiter.Attempt again = l.attempt("a", 1);
    assertTrue(again.passed());
    assertTrue(l.tryAcquire("a", 1));
    assertFalse(l.giveBack(again), "another passed since, decided on a schedule counting it");
    assertFalse(l.tryAcquire("a", 1));
    assertFalse(l.giveBack(l.attempt("a", 1)), "refused: nothing to give back");
    KeyedRateLimiter<String> other = limiter(1, Duration.ofSeconds(1), 2, 10);
    assertThrows(IllegalArgumentException.class, () -> other.giveBack(again));
  }

  @Test
  void giveBack_afterTheKeyWasDroppedAndMadeAgain_doesNothing() {
    KeyedRateLimiter<String> l = limiter(1, Duration.ofSeconds(1), 1, 1);
    KeyedRateLimiter.Attempt old = l.attempt("a", 1);
    time.advance(1_000_000_000);
    assertTrue(l.tryAcquire("b"), "a, full again, dropped for b");
    time.advance(1_000_000_000);
    KeyedRateLimiter.Attempt fresh = l.attempt("a", 1);
    assertTrue(fresh.passed());
    assertFalse(l.giveBack(old), "not the schedule it moved");
    assertFalse(l.tryAcquire("a"));
  }
}
