package dev.jeton;

import static dev.jeton.TestThreads.awaitLatch;
import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What sets the mutex's two modes apart ({@link Fairness}): a newcomer may take a free lock ahead
 * of a woken waiter only in bounded barging mode, and only until a waiter has waited past the
 * bound. Everything else they share is in {@link FifoMutexTest}, run in both.
 */
class MutexFairnessTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  // ---------------------------------------------------------------- the option

  @Test
  void fairness_boundedBarging_refusesAZeroNegativeOrMissingBound() {
    IllegalArgumentException zero =
        assertThrows(IllegalArgumentException.class, () -> Fairness.boundedBarging(Duration.ZERO));
    assertTrue(zero.getMessage().contains("strictFifo()"), zero.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> Fairness.boundedBarging(Duration.ofNanos(-1)));
    assertThrows(NullPointerException.class, () -> Fairness.boundedBarging(null));
    assertThrows(NullPointerException.class, () -> Mutex.builder().fairness(null));
  }

  @Test
  void fairness_saysWhatItIs() {
    assertTrue(Fairness.strictFifo().isStrictFifo());
    assertEquals(Optional.empty(), Fairness.strictFifo().bound());
    assertFalse(Fairness.boundedBarging().isStrictFifo());
    assertEquals(Optional.of(Duration.ofMillis(1)), Fairness.boundedBarging().bound());
    assertEquals(Fairness.boundedBarging(), Fairness.boundedBarging(Duration.ofMillis(1)));
    assertNotEquals(Fairness.boundedBarging(), Fairness.strictFifo());
    assertEquals("strictFifo", Fairness.strictFifo().toString());
    assertEquals(
        "boundedBarging(PT0.25S)", Fairness.boundedBarging(Duration.ofMillis(250)).toString());
    // Longer than nanoseconds can count: saturated, not refused.
    assertEquals(
        Optional.of(Duration.ofSeconds(Long.MAX_VALUE)),
        Fairness.boundedBarging(Duration.ofSeconds(Long.MAX_VALUE)).bound());
    Mutex.builder().fairness(Fairness.boundedBarging(Duration.ofSeconds(Long.MAX_VALUE))).build();
  }

  // ---------------------------------------------------------------- the modes

  @Test
  void strictFifo_theLockGoesToTheBlockedWaiter_neverToATryLockInBetween() throws Exception {
    Mutex mutex = Mutex.builder().fairness(Fairness.strictFifo()).build();
    WaiterThatHolds waiter = new WaiterThatHolds(mutex);
    waiter.queueBehind(mutex.lock());
    assertTrue(mutex.tryLock().isEmpty(), "handed to the waiter at the unlock");
    waiter.finish();
  }

  /**
   * A waiter takes tens of microseconds to wake, so a tryLock right after the unlock finds the lock
   * free, ahead of it, nearly every time; each round that the waiter wins is another chance.
   */
  @Test
  void boundedBarging_aNewcomerMayTakeTheFreeLockAheadOfTheWokenWaiter() throws Exception {
    Mutex mutex = Mutex.builder().fairness(Fairness.boundedBarging(Duration.ofHours(1))).build();
    boolean barged = false;
    for (int round = 0; round < 100 && !barged; round++) {
      WaiterThatHolds waiter = new WaiterThatHolds(mutex);
      waiter.queueBehind(mutex.lock());
      Optional<Guard> newcomer = mutex.tryLock();
      if (newcomer.isPresent()) {
        barged = true;
        assertEquals(1, mutex.queueLength(), "the woken waiter is still queued, at the head");
        newcomer.get().unlock(); // the waiter is awake (WOKEN): it takes the lock next
      }
      waiter.finish();
    }
    assertTrue(barged, "a tryLock never got ahead of a woken waiter in 100 rounds");
  }

  /**
   * With a bound of one nanosecond, the waiter is past it the first time it looks: it switches the
   * mutex to handoffs before it parks, so the unlock gives it the lock directly, and a tryLock in
   * between finds none.
   */
  @Test
  void boundedBarging_aWaiterPastTheBound_isHandedTheLockAtTheUnlock() throws Exception {
    Mutex mutex = Mutex.builder().fairness(Fairness.boundedBarging(Duration.ofNanos(1))).build();
    WaiterThatHolds waiter = new WaiterThatHolds(mutex);
    waiter.queueBehind(mutex.lock());
    assertTrue(mutex.tryLock().isEmpty(), "handed to the starving waiter at the unlock");
    waiter.finish();
    Guard again = mutex.tryLock().orElseThrow(); // the queue served: barging again
    again.unlock();
  }

  /**
   * Regression: a head parked before its wait reached the bound, and still parked when the bound
   * passes, was woken at the next unlock like any other, so a tryLock could take the lock ahead of
   * it once more; the unlock now hands it the lock.
   */
  @Test
  void boundedBarging_aParkedWaiterPastTheBound_isHandedTheLockAtTheNextUnlock() throws Exception {
    Duration bound = Duration.ofMillis(50);
    Mutex mutex = Mutex.builder().fairness(Fairness.boundedBarging(bound)).build();
    Guard held = mutex.lock();
    long queuedAt = System.nanoTime();
    WaiterThatHolds waiter = new WaiterThatHolds(mutex);
    waiter.queue(); // it looked once, well within the bound, and parked
    LockSupport.parkNanos(bound.toNanos() * 2 - (System.nanoTime() - queuedAt));
    held.unlock();
    assertTrue(mutex.tryLock().isEmpty(), "handed to the waiter past the bound at the unlock");
    waiter.finish();
  }

  /**
   * The woken head gives up (interrupted) while the lock is free: it must pass the lock on to the
   * next in line, here an asynchronous request that has no thread of its own to look.
   */
  @Test
  void boundedBarging_aWokenHeadThatGivesUp_handsTheFreeLockOn() throws Exception {
    for (int round = 0; round < 20; round++) {
      Mutex mutex = Mutex.builder().fairness(Fairness.boundedBarging(Duration.ofHours(1))).build();
      Guard held = mutex.lock();
      CompletableFuture<Throwable> head = new CompletableFuture<>();
      Thread headThread =
          threads.start(
              () -> {
                try {
                  mutex.lock().unlock(); // won the race with its interrupt
                  Thread.interrupted();
                  head.complete(null);
                } catch (InterruptedException e) {
                  head.complete(e);
                }
              });
      awaitTrue(() -> mutex.queueLength() == 1, "the head to queue");
      awaitParkedIn(mutex, headThread);
      CompletableFuture<Guard> next = mutex.lockAsync();
      held.unlock(); // wakes the head...
      headThread.interrupt(); // ...which most often sees this first, and withdraws
      done(head);
      done(next).unlock();
      assertFalse(mutex.isLocked(), "round " + round + ": " + mutex);
      assertEquals(0, mutex.queueLength());
    }
  }

  /**
   * Waits until {@code thread} is parked in the mutex's own wait, which it enters only after it has
   * looked at the lock as the head (and, past the bound, switched the mutex to handoffs): not
   * merely WAITING, which a park on the queue's internal lock would also be, while this test's
   * queueLength() held it.
   */
  private static void awaitParkedIn(Mutex mutex, Thread thread) {
    awaitTrue(
        () -> thread.getState() == Thread.State.WAITING && LockSupport.getBlocker(thread) == mutex,
        "the waiter to park in the mutex's wait");
  }

  /** A thread that queues for the lock behind its holder, and holds it until told to finish. */
  private final class WaiterThatHolds {
    private final Mutex mutex;
    private final CountDownLatch holding = new CountDownLatch(1);
    private final CountDownLatch finish = new CountDownLatch(1);
    private Thread thread;

    WaiterThatHolds(Mutex mutex) {
      this.mutex = mutex;
    }

    /**
     * Starts the waiter behind {@code held}; once it is parked in the queue, unlocks {@code held}.
     */
    void queueBehind(Guard held) {
      queue();
      held.unlock();
    }

    /** Starts the waiter and waits until it is parked in the queue. */
    void queue() {
      thread =
          threads.start(
              () -> {
                try (Guard g = mutex.lock()) {
                  holding.countDown();
                  awaitLatch(finish);
                }
              });
      awaitTrue(() -> mutex.queueLength() == 1, "the waiter to queue");
      awaitParkedIn(mutex, thread);
    }

    /** Waits until the waiter holds the lock, lets it unlock, and waits for it to end. */
    void finish() throws InterruptedException {
      awaitLatch(holding);
      finish.countDown();
      thread.join();
      assertFalse(mutex.isLocked());
    }
  }
}
