package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.GraphLayout;

/**
 * Keys come from clients, so their number must not grow the heap without bound: 100,000 and more
 * distinct keys never take the table past maxKeys, and what one key costs is measured (exact, JOL:
 * the retained size of the limiter, the keys themselves left out).
 */
class KeyedRateLimiterMemoryTest {
  private final ManualTime time = new ManualTime();

  /**
   * 100,000 distinct keys, one a millisecond, each full again 10 ms after it passed: a table of
   * 1,000 holds them all in turn, every key passing, by dropping the idle ones.
   */
  @Test
  void aHundredThousandDistinctKeys_neverTakeTheTablePastMaxKeys() {
    KeyedRateLimiter<String> limiter =
        KeyedRateLimiter.<String>builder()
            .rate(1, Duration.ofMillis(10))
            .burst(1)
            .maxKeys(1_000)
            .clock(time)
            .build();
    int largest = 0;
    for (int i = 0; i < 100_000; i++) {
      assertTrue(limiter.tryAcquire("client-" + i), "key " + i + " found room");
      largest = Math.max(largest, limiter.keys());
      time.advance(1_000_000);
    }
    assertEquals(1_000, largest, "the table filled up, and no further");
  }

  /**
   * A flood of 300,000 distinct keys within one burst window, the default table: the first 100,000
   * pass and stay (none is idle), the rest are refused, and the table stays at 100,000. Prints the
   * bytes per key.
   */
  @Test
  void aFloodOfNewKeys_isRefusedPastTheDefaultMaxKeys_andEachKeyCostsFewBytes() {
    KeyedRateLimiter<String> limiter =
        KeyedRateLimiter.<String>builder().rate(100, Duration.ofMinutes(1)).clock(time).build();
    int maxKeys = KeyedRateLimiter.Builder.DEFAULT_MAX_KEYS;
    List<String> kept = new ArrayList<>();
    for (int i = 0; i < 3 * maxKeys; i++) {
      String key = "client-" + i;
      boolean passed = limiter.tryAcquire(key);
      if (i < maxKeys) {
        assertTrue(passed, key);
        kept.add(key);
      } else {
        assertFalse(passed, key + ": no key is idle");
      }
      time.advance(1); // a nanosecond: no key is full again
    }
    assertEquals(maxKeys, limiter.keys());

    long all = GraphLayout.parseInstance(limiter).totalSize();
    long keys = GraphLayout.parseInstance(kept.toArray()).totalSize();
    long keysArray = GraphLayout.parseInstance((Object) new Object[maxKeys]).totalSize();
    long perKey = (all - (keys - keysArray)) / maxKeys;
    System.out.printf(
        "KeyedRateLimiter: %d keys retain %d bytes, %d of them the keys' own: %d bytes per key"
            + " without its key object%n",
        maxKeys, all, keys - keysArray, perKey);
    // a map node (32), a schedule (32) and a table slot or two (4 to 8), with compressed oops
    assertTrue(perKey <= 96, perKey + " bytes per key");
  }
}
