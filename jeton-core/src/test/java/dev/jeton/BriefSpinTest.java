package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A waiter's brief spin before parking: how long, how it ends, and how many spin at once. */
class BriefSpinTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  @Test
  void spinsItsStepsWhenNothingHappens_thenLeavesNoSpinnerCounted() {
    WaitNode w = WaitNode.blocking(1);
    assertEquals(BriefSpin.STEPS, BriefSpin.await(w));
    assertEquals(0, BriefSpin.spinners());
  }

  @Test
  void stopsAtOnce_forANodeNoLongerWaiting() {
    WaitNode w = WaitNode.blocking(1);
    w.status = WaitNode.GRANTED;
    assertEquals(0, BriefSpin.await(w));
  }

  @Test
  void stopsAtOnce_whenInterrupted_andKeepsTheInterrupt() {
    WaitNode w = WaitNode.blocking(1);
    Thread.currentThread().interrupt();
    try {
      assertEquals(0, BriefSpin.await(w));
      assertTrue(Thread.currentThread().isInterrupted(), "the wait loop must still see it");
    } finally {
      Thread.interrupted();
    }
  }

  /**
   * Many threads spinning at once, repeatedly: never more than MAX_SPINNERS inside the loop (a
   * spinner's node watches the count while it spins), and none left counted at the end.
   */
  @Test
  void neverMoreSpinnersThanAllowed() throws Exception {
    int threadCount = BriefSpin.MAX_SPINNERS + 3;
    AtomicInteger most = new AtomicInteger();
    AtomicInteger spun = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    for (int t = 0; t < threadCount; t++) {
      threads.start(
          () -> {
            go.await();
            for (int i = 0; i < 2_000; i++) {
              WaitNode w = WaitNode.blocking(1);
              if (BriefSpin.await(w) > 0) {
                spun.incrementAndGet();
              }
              most.accumulateAndGet(BriefSpin.spinners(), Math::max);
            }
          });
    }
    go.countDown();
    threads.joinAll();
    assertTrue(spun.get() > 0, "some spun");
    assertTrue(
        most.get() <= BriefSpin.MAX_SPINNERS, "at most " + BriefSpin.MAX_SPINNERS + ": " + most);
    assertEquals(0, BriefSpin.spinners());
  }
}
