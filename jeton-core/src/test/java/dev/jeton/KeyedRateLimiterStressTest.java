package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Eight threads on the real clock trying and giving back on random keys, in a table large enough
 * for them all or far too small (sweeps racing admissions and give-backs): the weight each key kept
 * over the run stays within its bound, burst + rate x the run's length, and the table never holds
 * more than maxKeys.
 */
class KeyedRateLimiterStressTest {
  private static final long PERMITS = 1_000;
  private static final int BURST = 4;

  @ParameterizedTest
  @CsvSource({"16, 64", "48, 16"})
  void threadsOnRandomKeys_keepEachKeysBound_andTheTableBound(int keys, int maxKeys)
      throws Exception {
    KeyedRateLimiter<Integer> limiter =
        KeyedRateLimiter.<Integer>builder()
            .rate(PERMITS, Duration.ofSeconds(1))
            .burst(BURST)
            .maxKeys(maxKeys)
            .build();
    AtomicLongArray kept = new AtomicLongArray(keys);
    AtomicLongArray oversize = new AtomicLongArray(1);
    long start = System.nanoTime();
    StressWorkers.platformWorkersUninterrupted(
        8,
        40_000,
        random -> {
          int key = random.nextInt(keys);
          int weight = 1 + random.nextInt(BURST);
          KeyedRateLimiter.Attempt a = limiter.attempt(key, weight);
          if (a.passed() && !(random.nextInt(4) == 0 && limiter.giveBack(a))) {
            kept.addAndGet(key, weight);
          }
          if (limiter.keys() > maxKeys) {
            oversize.incrementAndGet(0);
          }
        },
        limiter);
    long elapsed = System.nanoTime() - start;
    BigInteger allowed =
        BigInteger.valueOf(elapsed)
            .multiply(BigInteger.valueOf(PERMITS))
            .divide(BigInteger.valueOf(1_000_000_000L))
            .add(BigInteger.valueOf(BURST));
    long total = 0;
    for (int key = 0; key < keys; key++) {
      total += kept.get(key);
      assertTrue(
          BigInteger.valueOf(kept.get(key)).compareTo(allowed) <= 0,
          "key " + key + ": " + kept.get(key) + " kept in " + elapsed + " ns, over " + allowed);
    }
    assertTrue(total > 300, "enough passed to mean something: " + total);
    assertEquals(0, oversize.get(0), "the table grew past maxKeys");
  }
}
