package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.jeton.internal.engine.Spin;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * How a queued request waits: the blocking waiter's spin before it parks (watched through the
 * semaphore's spin hook, one call per step, so nothing here reads a clock), and the timer of a
 * timed asynchronous request.
 */
class FifoSemaphoreWaitTest {

  /** The permit the race test's next timer hands to the releaser. */
  private volatile Permit held;

  private static FifoSemaphore watched(int limit, Runnable spinStep) {
    return new FifoSemaphore(
        null, limit, Fairness.strictFifo(), null, false, new RecordedTimers(), spinStep);
  }

  /**
   * Regression: a timed acquire at the head spun its whole budget (5,120 steps) before it looked at
   * its deadline, and took a grant that came meanwhile, long after it should have given up.
   */
  @Test
  void timedAcquire_withItsDeadlinePassed_timesOutWithoutSpinningOrAGrant() throws Exception {
    AtomicInteger steps = new AtomicInteger();
    AtomicReference<Permit> held = new AtomicReference<>();
    FifoSemaphore semaphore =
        watched(
            1,
            () -> {
              if (steps.incrementAndGet() == 1) {
                held.get().release(); // a grant that comes during the spin
              }
            });
    held.set(semaphore.acquire(1));
    assertThrows(TimeoutException.class, () -> semaphore.acquire(1, Duration.ZERO));
    assertEquals(0, steps.get(), "spin steps taken after the deadline");
    assertEquals(0, semaphore.queueLength());
    assertEquals(0, semaphore.available(), "the permit is still held, not granted again");
    held.get().release();
    assertEquals(1, semaphore.available());
  }

  /**
   * Regression: an interrupt that came while the head spun was seen only after the whole budget,
   * thousands of yields later.
   */
  @Test
  void interrupt_duringTheSpin_isSeenAtTheNextStep() throws Exception {
    for (Duration timeout : new Duration[] {null, Duration.ofHours(1)}) {
      AtomicInteger steps = new AtomicInteger();
      FifoSemaphore semaphore =
          watched(
              1,
              () -> {
                steps.incrementAndGet();
                Thread.currentThread().interrupt();
              });
      Permit held = semaphore.acquire(1);
      assertThrows(
          InterruptedException.class,
          () -> {
            if (timeout == null) {
              semaphore.acquire(1);
            } else {
              semaphore.acquire(1, timeout);
            }
          });
      assertEquals(1, steps.get(), "spin steps taken with the interrupt set, timeout " + timeout);
      assertFalse(Thread.interrupted(), "the exception reports the interrupt and clears it");
      assertEquals(0, semaphore.queueLength());
      held.release();
      assertEquals(1, semaphore.available());
    }
  }

  /** An interrupt wins over a grant that reaches the waiter at the same step: given back. */
  @Test
  void interrupt_andAGrant_duringTheSpin_throwsAndGivesTheGrantBack() throws Exception {
    AtomicReference<Permit> held = new AtomicReference<>();
    FifoSemaphore semaphore =
        watched(
            1,
            () -> {
              Permit p = held.getAndSet(null);
              if (p != null) {
                p.release(); // grants the waiter
                Thread.currentThread().interrupt();
              }
            });
    held.set(semaphore.acquire(1));
    assertThrows(InterruptedException.class, () -> semaphore.acquire(1));
    assertEquals(1, semaphore.available(), "the grant was given back");
    assertEquals(0, semaphore.queueLength());
  }

  /**
   * Regression: every wake-up (a prewake, or a spurious one) restarted the whole spin budget, so a
   * waiter woken often could spin for ever. The hook wakes the waiter itself once its budget is
   * spent, and interrupts it if it ever spins again.
   */
  @Test
  void wakeUp_afterTheSpin_doesNotStartItAgain() throws Exception {
    AtomicInteger steps = new AtomicInteger();
    FifoSemaphore semaphore =
        watched(
            1,
            () -> {
              int step = steps.incrementAndGet();
              if (step == Spin.HEAD_STEPS) {
                LockSupport.unpark(Thread.currentThread()); // its next park returns at once
              } else if (step > Spin.HEAD_STEPS) {
                Thread.currentThread().interrupt(); // spinning again: end the test
              }
            });
    Permit held = semaphore.acquire(1);
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                outcome.set(semaphore.acquire(1));
              } catch (Exception e) {
                outcome.set(e);
              }
            });
    waiter.start();
    while (waiter.getState() != Thread.State.TERMINATED
        && (steps.get() < Spin.HEAD_STEPS || waiter.getState() != Thread.State.WAITING)) {
      Thread.onSpinWait(); // until it has spent its budget and parked for good, or failed
    }
    held.release();
    waiter.join();
    Permit granted = assertInstanceOf(Permit.class, outcome.get(), "outcome");
    assertEquals(Spin.HEAD_STEPS, steps.get(), "spin steps in all");
    granted.release();
    assertEquals(1, semaphore.available());
  }

  /**
   * Regression: a grant delivered while {@code acquireAsync} was storing the request's timer could
   * miss the timer, which then kept the granted future (and its permit) reachable until it fired.
   * Each round races a release against the store; every timer of a completed request must end up
   * cancelled.
   */
  @Test
  void timedAsyncAcquire_grantedWhileItsTimerIsStored_stopsTheTimer() throws Exception {
    AtomicReference<Permit> toRelease = new AtomicReference<>();
    AtomicBoolean done = new AtomicBoolean();
    SplittableRandom random = new SplittableRandom(12);
    RecordedTimers timers =
        new RecordedTimers(
            () -> {
              toRelease.set(held); // the releaser grants the request now
              for (int i = random.nextInt(1024); i > 0; i--) {
                Thread.onSpinWait(); // then the timer returns, to be stored, at a random moment
              }
            });
    FifoSemaphore semaphore = timers.semaphore(1);
    Thread releaser =
        new Thread(
            () -> {
              while (!done.get()) {
                Permit p = toRelease.getAndSet(null);
                if (p != null) {
                  p.release();
                } else {
                  Thread.onSpinWait();
                }
              }
            });
    releaser.start();
    try {
      for (int round = 0; round < 50_000; round++) {
        held = semaphore.acquire(1);
        semaphore.acquireAsync(1, Duration.ofHours(1)).get().release(); // the suite's hang guard
      }
    } finally {
      done.set(true);
      releaser.join();
    }
    assertEquals(0, timers.running(), "timers still running, of " + timers.started());
    assertEquals(1, semaphore.available());
  }
}
