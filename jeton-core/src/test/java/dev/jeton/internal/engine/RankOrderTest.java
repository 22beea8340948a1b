package dev.jeton.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RankOrderTest {
  private record Entry(int priority, long enqueuedNanos, long seq) implements RankOrder.Ranked {}

  private static final long FOREVER = Long.MAX_VALUE;

  @Test
  void byPriority_higherFirstEvenAtTheExtremes_underAnyAgingAndAnyClock() {
    long hour = Duration.ofHours(1).toNanos();
    for (long aging : new long[] {0, 1, 1_000_000_000L, hour, FOREVER}) {
      RankOrder order = RankOrder.byPriority(aging);
      for (long clock : new long[] {0, Long.MIN_VALUE + 1_000, Long.MAX_VALUE - 1_000}) {
        int[][] pairs = {
          {Integer.MAX_VALUE - 1, Integer.MAX_VALUE},
          {Integer.MIN_VALUE, Integer.MIN_VALUE + 1},
          {Integer.MIN_VALUE, Integer.MAX_VALUE},
          {5, 6}
        };
        for (int[] pair : pairs) {
          Entry lower = new Entry(pair[0], clock, 1);
          Entry higher = new Entry(pair[1], clock, 2); // came later, at the same instant
          String what = pair[1] + " before " + pair[0] + ", aging " + aging + ", clock " + clock;
          assertTrue(order.compare(higher, lower) < 0, what);
          assertTrue(order.compare(lower, higher) > 0, what);
        }
      }
    }
  }

  @Test
  void byPriority_equalPrioritiesAreServedInArrivalOrder() {
    RankOrder order = RankOrder.byPriority(1);
    assertTrue(order.compare(new Entry(3, 10, 1), new Entry(3, 10, 2)) < 0);
    assertEquals(0, order.compare(new Entry(3, 10, 1), new Entry(3, 10, 1)));
  }

  @Test
  void byPriority_agingLiftsOnePriorityPerPeriodWaited_exactlyAtTheBoundary() {
    RankOrder order = RankOrder.byPriority(100);
    Entry old = new Entry(0, 0, 1);
    assertTrue(order.compare(new Entry(3, 299, 2), old) < 0, "waited less than 3 periods");
    assertTrue(order.compare(old, new Entry(3, 300, 2)) < 0, "tied rank: the earlier arrival");
    assertTrue(order.compare(old, new Entry(3, 301, 2)) < 0, "waited more than 3 periods");
  }

  @Test
  void byPriority_withoutAging_readsNoClock() {
    RankOrder order = RankOrder.byPriority(0);
    assertTrue(!order.ages());
    assertTrue(RankOrder.byPriority(1).ages());
    // far apart enqueue times change nothing without aging
    assertTrue(order.compare(new Entry(1, Long.MAX_VALUE, 2), new Entry(0, Long.MIN_VALUE, 1)) < 0);
  }

  @Test
  void newestFirst_ignoresPriorities() {
    RankOrder order = RankOrder.newestFirst();
    List<Entry> sorted =
        List.of(new Entry(9, 0, 1), new Entry(0, 0, 3), new Entry(5, 0, 2)).stream()
            .sorted(order)
            .toList();
    assertEquals(List.of(3L, 2L, 1L), sorted.stream().map(Entry::seq).toList());
  }

  @Test
  void byPriority_negativeAging_isRefused() {
    assertThrows(IllegalArgumentException.class, () -> RankOrder.byPriority(-1));
  }
}
