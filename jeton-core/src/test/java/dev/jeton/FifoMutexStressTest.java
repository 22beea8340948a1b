package dev.jeton;

import static dev.jeton.FifoMutexTest.GUARD_SECONDS;
import static dev.jeton.FifoMutexTest.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Many threads mixing every kind of lock request (blocking, timed, try, asynchronous, timed
 * asynchronous, cancelled, interrupted) while the critical section counts its holders: never
 * two at once; and at the end every future completed, no one queued, the mutex free.
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

  @Test
  void platformThreads_mixingEveryKindOfRequest_neverTwoHolders() throws Exception {
    Mutex mutex = Mutex.create();
    Ledger ledger = new Ledger();
    int threads = 8;
    int operations = 5_000;
    List<Thread> workers = new ArrayList<>();
    Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
    for (int t = 0; t < threads; t++) {
      SplittableRandom random = new SplittableRandom(t);
      Thread worker =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < operations; i++) {
                    try {
                      oneRequest(mutex, ledger, random);
                    } catch (InterruptedException e) {
                      ledger.gaveUp.incrementAndGet(); // by the interrupter, while it waited
                    }
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      workers.add(worker);
      worker.start();
    }
    Thread interrupter = interruptAtRandom(workers);
    for (Thread worker : workers) {
      worker.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
      assertFalse(worker.isAlive(), "a worker hangs");
    }
    interrupter.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
    assertEquals(List.of(), List.copyOf(failures));
    assertSettled(mutex, ledger);
    assertTrue(ledger.gaveUp.get() > 0, "some requests really gave up");
  }

  @Test
  void virtualThreads_tenThousandMixingBlockingTimedAndAsync_neverTwoHolders() throws Exception {
    Assumptions.assumeTrue(
        Runtime.version().feature() >= 21,
        "virtual threads need JDK 21+; .ci/run runs this suite again on the newest JDK installed");
    Mutex mutex = Mutex.create();
    Ledger ledger = new Ledger();
    int tasks = 10_000;
    ExecutorService executor = FifoSemaphoreStressTest.newVirtualThreadPerTaskExecutor();
    try {
      for (int i = 0; i < tasks; i++) {
        SplittableRandom random = new SplittableRandom(1_000 + i);
        executor.execute(
            () -> {
              try {
                oneRequest(mutex, ledger, random);
              } catch (Throwable e) {
                ledger.violations.add("failed: " + e);
              }
            });
      }
    } finally {
      executor.shutdown();
    }
    assertTrue(executor.awaitTermination(GUARD_SECONDS, TimeUnit.SECONDS), "the tasks finished");
    assertSettled(mutex, ledger);
  }

  /** Interrupts the workers at random until they have all finished. */
  static Thread interruptAtRandom(List<Thread> workers) {
    Thread interrupter =
        new Thread(
            () -> {
              SplittableRandom random = new SplittableRandom(42);
              while (workers.stream().anyMatch(Thread::isAlive)) {
                workers.get(random.nextInt(workers.size())).interrupt();
                LockSupport.parkNanos(100_000); // now and then, not all the time
              }
            });
    interrupter.setDaemon(true);
    interrupter.start();
    return interrupter;
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
    for (CompletableFuture<?> f : ledger.futures) {
      try {
        f.get(GUARD_SECONDS, TimeUnit.SECONDS);
      } catch (CancellationException ignored) {
        // cancelled requests are complete too
      }
    }
    // A timer's thread withdraws its request just after failing the future.
    awaitTrue(() -> mutex.queueLength() == 0 && !mutex.isLocked(), "the mutex to settle");
    assertEquals(
        List.of(),
        ledger.violations.stream().limit(10).collect(Collectors.toList()),
        ledger.violations.size() + " violations, the first ten shown");
    assertTrue(ledger.entered.get() > 0, "the critical section ran");
    assertEquals(0, ledger.holders.get());
    mutex.tryLock().orElseThrow().unlock();
  }
}
