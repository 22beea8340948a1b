package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Many threads mixing every kind of lock request (blocking, timed, try, asynchronous, timed
 * asynchronous, cancelled, interrupted) while the critical section counts its holders: never two at
 * once; and at the end every future completed, no one queued, the mutex free.
 *
 * <p>Each run is bounded by a count of operations, not by time; seeds are fixed per thread.
 */
class FifoMutexStressTest {

  /** Counts holders inside the critical section and keeps the first violations. */
  private static final class Ledger {
    final AtomicInteger holders = new AtomicInteger();
    final AtomicInteger entered = new AtomicInteger();
    final AtomicInteger gaveUp = new AtomicInteger();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final Queue<CompletableFuture<?>> futures = new ConcurrentLinkedQueue<>();

    void hold(Guard guard) {
      entered.incrementAndGet();
      int now = holders.incrementAndGet();
      if (now != 1) {
        violations.add(now + " holders at once");
      }
      Thread.onSpinWait();
      holders.decrementAndGet();
      guard.unlock();
    }
  }

  /** Both modes: bounded barging (the default), and strict FIFO. */
  static Stream<Fairness> fairnesses() {
    return Stream.of(Fairness.boundedBarging(), Fairness.strictFifo());
  }

  @ParameterizedTest
  @MethodSource("fairnesses")
  void platformThreads_mixingEveryKindOfRequest_neverTwoHolders(Fairness fairness)
      throws Exception {
    Mutex mutex = Mutex.builder().fairness(fairness).build();
    Ledger ledger = new Ledger();
    StressWorkers.platformWorkers(
        8, 5_000, random -> oneRequest(mutex, ledger, random), ledger.gaveUp, mutex);
    assertSettled(mutex, ledger);
    assertTrue(ledger.gaveUp.get() > 0, "some requests really gave up");
  }

  @ParameterizedTest
  @MethodSource("fairnesses")
  void virtualThreads_tenThousandMixingBlockingTimedAndAsync_neverTwoHolders(Fairness fairness)
      throws Exception {
    Mutex mutex = Mutex.builder().fairness(fairness).build();
    Ledger ledger = new Ledger();
    StressWorkers.virtualTasks(
        10_000, random -> oneRequest(mutex, ledger, random), ledger.violations);
    assertSettled(mutex, ledger);
  }

  private long unguarded; // plain: the mutex must publish it, and lose no increment

  /**
   * Eight threads that only lock, count and unlock, as fast as they can, with nothing to wake a
   * lost waiter (the stress above interrupts its workers, which does): every wake-up must come from
   * an unlock. Regression: a barging head blocked on the queue's lock spent the unpark of a grant
   * made meanwhile there, then parked for good (BlockingWait's rule on parks).
   */
  @ParameterizedTest
  @MethodSource("fairnesses")
  void hotLoop_onlyLockAndUnlock_neverLosesAWakeup(Fairness fairness) throws Exception {
    Mutex mutex = Mutex.builder().fairness(fairness).build();
    int threads = 8;
    int rounds = 30_000; // strict FIFO hands off at every unlock: a context switch each, under load
    StressWorkers.platformWorkersUninterrupted(
        threads,
        rounds,
        random -> {
          Guard guard = mutex.lock();
          unguarded++;
          guard.unlock();
        },
        mutex);
    assertEquals((long) threads * rounds, unguarded);
    assertFalse(mutex.isLocked());
    assertEquals(0, mutex.queueLength());
  }

  /** One request of a random kind; whatever is granted goes through the critical section. */
  private static void oneRequest(Mutex mutex, Ledger ledger, SplittableRandom random)
      throws Exception {
    switch (random.nextInt(8)) {
      case 0 -> ledger.hold(mutex.lock());
      case 1 -> {
        try {
          ledger.hold(mutex.lock(Duration.ofNanos(random.nextInt(500_000))));
        } catch (TimeoutException expected) {
          ledger.gaveUp.incrementAndGet();
        }
      }
      case 2 -> mutex.tryLock().ifPresent(ledger::hold);
      case 3 -> ledger.hold(mutex.lockAsync().join());
      case 4 -> {
        CompletableFuture<Guard> f = mutex.lockAsync();
        if (f.cancel(false)) {
          ledger.gaveUp.incrementAndGet();
        } else {
          ledger.hold(f.join()); // granted first: ours to use and unlock
        }
      }
      case 5 -> {
        CompletableFuture<Guard> f = mutex.lockAsync(Duration.ofNanos(random.nextInt(500_000)));
        ledger.futures.add(
            f.handle(
                (guard, failure) -> {
                  if (guard != null) {
                    ledger.hold(guard);
                  } else if (failure instanceof TimeoutException) {
                    ledger.gaveUp.incrementAndGet();
                  } else {
                    ledger.violations.add("unexpected failure: " + failure);
                  }
                  return null;
                }));
      }
      case 6 -> {
        // Interrupted before it asks: throws at once and never queues.
        Thread.currentThread().interrupt();
        try {
          ledger.hold(mutex.lock());
          ledger.violations.add("an interrupted lock() returned");
        } catch (InterruptedException expected) {
          ledger.gaveUp.incrementAndGet();
        }
      }
      default -> ledger.futures.add(mutex.lockAsync().thenAccept(ledger::hold));
    }
  }

  private static void assertSettled(Mutex mutex, Ledger ledger) throws Exception {
    TestThreads.awaitAll(ledger.futures);
    // A timer's thread withdraws its request just after failing the future.
    awaitTrue(() -> mutex.queueLength() == 0 && !mutex.isLocked(), "the mutex to settle");
    TestThreads.assertNoViolations(ledger.violations);
    assertTrue(ledger.entered.get() > 0, "the critical section ran");
    assertEquals(0, ledger.holders.get());
    mutex.tryLock().orElseThrow().unlock();
  }
}
