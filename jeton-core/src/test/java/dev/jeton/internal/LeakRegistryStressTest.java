package dev.jeton.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Many threads add and forget leak records in a registry of few stripes and small arrays, so that
 * stripes are shared and arrays double while others forget: every record held is found by its code,
 * and once every one is forgotten none is counted as held.
 */
class LeakRegistryStressTest {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(LeakRecord[].class);
  static final LeakTracker TRACKER = new LeakTracker(true, false, "a test registry");

  static LeakRecord recordOf(LeakRegistry registry, Object grant) {
    return new LeakRecord(grant, registry.collected, TRACKER, "permit", 1, 0, null, null);
  }

  /** The record in the slot of {@code code}, as the registry's forget finds it. */
  static LeakRecord inSlot(LeakRegistry registry, int code) {
    // decode as LeakRegistry does: stripe in the low 8 bits, the index above
    int bits = -1 - code;
    LeakRegistry.Stripe stripe = registry.stripeAt(bits & 0xff);
    return (LeakRecord) SLOT.getAcquire(stripe.slots, bits >>> 8);
  }

  @Test
  void threadsAddingAndForgetting_whileArraysDouble_loseNoRecordAndLeaveNoneHeld()
      throws Exception {
    LeakRegistry registry = new LeakRegistry(2, 2, false);
    int threads = 8;
    int operations = 20_000;
    Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      SplittableRandom random = new SplittableRandom(t);
      Thread worker =
          new Thread(
              () -> {
                try {
                  start.await();
                  ArrayDeque<Object[]> held = new ArrayDeque<>(); // {grant, record, code}
                  for (int i = 0; i < operations; i++) {
                    if (held.isEmpty() || held.size() < 64 && random.nextBoolean()) {
                      Object grant = new Object();
                      LeakRecord record = recordOf(registry, grant);
                      int code = registry.add(record);
                      assertNotEquals(0, code, "room in the stripe");
                      held.add(new Object[] {grant, record, code});
                    } else {
                      Object[] oldest = random.nextBoolean() ? held.poll() : held.pollLast();
                      int code = (Integer) oldest[2];
                      assertSame(oldest[1], inSlot(registry, code), "found by its code");
                      registry.forget(code, oldest[0]);
                      assertEquals(true, ((LeakRecord) oldest[1]).isForgotten());
                    }
                  }
                  for (Object[] left : held) {
                    assertSame(left[1], inSlot(registry, (Integer) left[2]), "found by its code");
                    registry.forget((Integer) left[2], left[0]);
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      workers.add(worker);
      worker.start();
    }
    start.countDown();
    for (Thread worker : workers) {
      worker.join(TimeUnit.SECONDS.toMillis(120)); // a hang guard
      assertEquals(false, worker.isAlive(), "a worker hangs");
    }
    if (!failures.isEmpty()) {
      AssertionError error = new AssertionError("a worker failed");
      failures.forEach(error::addSuppressed);
      throw error;
    }
    assertEquals(0, registry.watchedNow(), "every record forgotten, none held");
    int filled = 0;
    for (int i = 0; i < 2; i++) {
      for (LeakRecord record : registry.stripeAt(i).slots) {
        filled += record != null ? 1 : 0;
      }
    }
    // Only a stale copy (a release racing with its array's doubling) may stay in a slot; if
    // forgetting emptied no slot, every one of the 160,000 records would fill one.
    assertEquals(true, filled <= threads * 64, filled + " slots still filled");
  }
}
