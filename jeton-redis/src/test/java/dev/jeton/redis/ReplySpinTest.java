package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jeton.internal.engine.Spin;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bounded busy wait for Redis's replies (decision 61). */
@Timeout(60) // a hang guard: every wait here ends by itself
class ReplySpinTest {

  @Test
  void spin_endsWhileStillPending_withinItsBound() {
    ReplySpin spin = new ReplySpin();
    AtomicInteger asked = new AtomicInteger();
    spin.spin(() -> asked.incrementAndGet() > 0, Long.MAX_VALUE); // pending for ever
    assumeTrue(ReplySpin.MAX_SPINNERS > 0, "one core: nothing spins");
    assertTrue(asked.get() > 0, "a new handle spins");
  }

  @Test
  void spin_stopsAsSoonAsTheOutcomeIsThere() {
    ReplySpin spin = new ReplySpin();
    AtomicInteger asked = new AtomicInteger();
    spin.spin(() -> asked.incrementAndGet() < 3, Long.MAX_VALUE);
    assumeTrue(ReplySpin.MAX_SPINNERS > 0, "one core: nothing spins");
    assertEquals(3, asked.get(), "asked until it was no longer pending, then not again");
  }

  @Test
  void afterLongWaits_aHandleParksAtOnce_andAfterShortOnesSpinsAgain() {
    assumeTrue(ReplySpin.MAX_SPINNERS > 0, "one core: nothing spins");
    ReplySpin spin = new ReplySpin();
    for (int i = 0; i < 40; i++) { // waits as long as a queue's: counted as MAX_COUNTED_NANOS
      spin.waited(System.nanoTime() - TimeUnit.SECONDS.toNanos(1));
    }
    assertTrue(2 * spin.typicalNanos() > ReplySpin.MAX_SPIN_NANOS, "" + spin.typicalNanos());
    AtomicInteger asked = new AtomicInteger();
    spin.spin(() -> asked.incrementAndGet() > 0, Long.MAX_VALUE);
    assertEquals(0, asked.get(), "no spin where waits are long");

    for (int i = 0; i < 60; i++) { // replies within a few microseconds
      spin.waited(System.nanoTime());
    }
    assertTrue(2 * spin.typicalNanos() <= ReplySpin.MAX_SPIN_NANOS, "" + spin.typicalNanos());
    spin.spin(() -> asked.incrementAndGet() < 2, Long.MAX_VALUE);
    assertTrue(asked.get() > 0, "spins again once waits are short");
  }

  @Test
  void waited_countsALongWaitAsTheLongestCounted() {
    ReplySpin spin = new ReplySpin();
    for (int i = 0; i < 200; i++) {
      spin.waited(System.nanoTime() - TimeUnit.HOURS.toNanos(1));
    }
    assertTrue(spin.typicalNanos() <= ReplySpin.MAX_COUNTED_NANOS, "" + spin.typicalNanos());
    assertTrue(spin.typicalNanos() > ReplySpin.MAX_COUNTED_NANOS / 2, "" + spin.typicalNanos());
  }

  @Test
  void anInterruptedThread_stopsSpinning_andKeepsItsFlag() {
    ReplySpin spin = new ReplySpin();
    AtomicInteger asked = new AtomicInteger();
    Thread.currentThread().interrupt();
    try {
      spin.spin(() -> asked.incrementAndGet() > 0, Long.MAX_VALUE);
      assertTrue(Thread.currentThread().isInterrupted(), "the flag is the caller's to see");
      assertTrue(asked.get() <= 1, "asked " + asked.get() + " times");
    } finally {
      Thread.interrupted();
    }
  }

  /**
   * Stress: threads of many handles spin at once, each held inside its spin until released; no more
   * than MAX_SPINNERS are ever inside, and the others do not spin at all.
   */
  @Test
  void atMostHalfTheCoresSpinAtOnce() throws Exception {
    int threads = 4 * Math.max(1, ReplySpin.MAX_SPINNERS) + 2;
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch allCalled = new CountDownLatch(threads);
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();
    AtomicInteger spun = new AtomicInteger();
    List<Thread> started = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      ReplySpin spin = new ReplySpin(); // a handle each: the bound is the process's
      boolean[] first = {true};
      Thread thread =
          new Thread(
              () -> {
                spin.spin(
                    () -> {
                      if (first[0]) { // held inside the loop until every thread has tried
                        first[0] = false;
                        spun.incrementAndGet();
                        mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        allCalled.countDown();
                        awaitQuietly(release);
                        inside.decrementAndGet();
                      }
                      return false;
                    },
                    Long.MAX_VALUE);
                if (first[0]) {
                  allCalled.countDown(); // did not spin
                }
              });
      started.add(thread);
      thread.start();
    }
    allCalled.await();
    release.countDown();
    for (Thread thread : started) {
      thread.join();
    }
    assertEquals(ReplySpin.MAX_SPINNERS, spun.get(), "the spinners of the process");
    assertTrue(mostInside.get() <= ReplySpin.MAX_SPINNERS, "" + mostInside.get());
    // and every slot was given back: a new handle spins again (asks at least once: a second ask
    // may not come if a loaded machine spends the spin's time bound between the two)
    AtomicInteger asked = new AtomicInteger();
    new ReplySpin().spin(() -> asked.incrementAndGet() < 2, Long.MAX_VALUE);
    assertEquals(ReplySpin.MAX_SPINNERS > 0, asked.get() > 0, "asked " + asked.get() + " times");
  }

  /**
   * The gate is the engine's, shared with the channels' spins: while it is full a handle does not
   * spin, and once a place is free it does again.
   */
  @Test
  void whileTheEnginesGateIsFull_aHandleDoesNotSpin() {
    assumeTrue(ReplySpin.MAX_SPINNERS > 0, "one core: nothing spins");
    int entered = 0;
    try {
      while (Spin.tryEnter()) {
        entered++;
      }
      assertEquals(Spin.MAX_SPINNERS, entered, "the gate's places");
      AtomicInteger asked = new AtomicInteger();
      new ReplySpin().spin(() -> asked.incrementAndGet() > 0, Long.MAX_VALUE);
      assertEquals(0, asked.get(), "no place in the gate: no spin");
      Spin.exit();
      entered--;
      new ReplySpin().spin(() -> asked.incrementAndGet() < 2, Long.MAX_VALUE);
      assertTrue(asked.get() > 0, "a place: it spins"); // a second ask may fall past its bound
    } finally {
      for (; entered > 0; entered--) {
        Spin.exit();
      }
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
