package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.ReadWriteLock.WriteGuard;
import java.time.Duration;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Many threads mixing read and write requests of every kind (blocking, timed, try, asynchronous,
 * timed asynchronous, cancelled, interrupted, downgraded) while the critical sections count their
 * holders: never two writers, never a writer with readers; and at the end every future completed,
 * no one queued, the lock free.
 *
 * <p>Each run is bounded by a count of operations, not by time; seeds are fixed per thread.
 */
class FifoReadWriteLockStressTest {

  /**
   * Counts readers and writers inside their critical sections. Each holder counts itself in and
   * then looks at the other count, so of a reader and a writer that overlap, at least one sees the
   * other.
   */
  private static final class Ledger {
    final AtomicInteger readers = new AtomicInteger();
    final AtomicInteger writers = new AtomicInteger();
    final AtomicInteger peakReaders = new AtomicInteger();
    final AtomicInteger wrote = new AtomicInteger();
    final AtomicInteger gaveUp = new AtomicInteger();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final Queue<CompletableFuture<?>> futures = new ConcurrentLinkedQueue<>();

    void read(Guard guard) {
      int now = readers.incrementAndGet();
      peakReaders.accumulateAndGet(now, Math::max);
      if (writers.get() != 0) {
        violations.add("a reader beside a writer");
      }
      Thread.onSpinWait();
      readers.decrementAndGet();
      guard.unlock();
    }

    void write(WriteGuard guard, boolean downgrade) {
      wrote.incrementAndGet();
      int now = writers.incrementAndGet();
      if (now != 1) {
        violations.add(now + " writers at once");
      }
      if (readers.get() != 0) {
        violations.add("a writer beside readers");
      }
      Thread.onSpinWait();
      if (downgrade) {
        // Still exclusive here, so becoming a reader in the counts first is safe.
        readers.incrementAndGet();
        writers.decrementAndGet();
        Guard read = guard.downgrade();
        Thread.onSpinWait();
        if (writers.get() != 0) {
          violations.add("a writer got in beside a downgraded reader");
        }
        readers.decrementAndGet();
        read.unlock();
      } else {
        writers.decrementAndGet();
        guard.unlock();
      }
    }
  }

  @ParameterizedTest
  @MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
  void platformThreads_mixingEveryKindOfRequest_neverAWriterBesideAnyoneElse(Fairness fairness)
      throws Exception {
    ReadWriteLock rw = ReadWriteLock.builder().fairness(fairness).build();
    Ledger ledger = new Ledger();
    StressWorkers.platformWorkers(
        8, 5_000, random -> oneRequest(rw, ledger, random), ledger.gaveUp, rw);
    assertSettled(rw, ledger);
    assertTrue(ledger.gaveUp.get() > 0, "some requests really gave up");
    assertTrue(ledger.peakReaders.get() > 1, "readers really shared: " + ledger.peakReaders);
  }

  @ParameterizedTest
  @MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
  void virtualThreads_tenThousandMixingReadersAndWriters_neverAWriterBesideAnyoneElse(
      Fairness fairness) throws Exception {
    ReadWriteLock rw = ReadWriteLock.builder().fairness(fairness).build();
    Ledger ledger = new Ledger();
    StressWorkers.virtualTasks(10_000, random -> oneRequest(rw, ledger, random), ledger.violations);
    assertSettled(rw, ledger);
  }

  /**
   * Threads that only read and write, with nothing else to wake them (no timeouts, no interrupts,
   * which would wake a head left parked and hide it): a lost wake-up hangs a worker, which the hang
   * guard reports.
   */
  @ParameterizedTest
  @MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
  void hotLoop_onlyReadAndWrite_neverLosesAWakeup(Fairness fairness) throws Exception {
    ReadWriteLock rw = ReadWriteLock.builder().fairness(fairness).build();
    Ledger ledger = new Ledger();
    StressWorkers.platformWorkersUninterrupted(
        8,
        20_000,
        random -> {
          if (random.nextInt(10) == 0) {
            ledger.write(rw.write(), false);
          } else {
            ledger.read(rw.read());
          }
        },
        rw);
    assertSettled(rw, ledger);
  }

  /** One request of a random kind; whatever is granted goes through its critical section. */
  private static void oneRequest(ReadWriteLock rw, Ledger ledger, SplittableRandom random)
      throws Exception {
    Duration shortWait = Duration.ofNanos(random.nextInt(500_000));
    boolean downgrade = random.nextInt(4) == 0;
    switch (random.nextInt(13)) {
      case 0 -> ledger.read(rw.read());
      case 1 -> ledger.write(rw.write(), downgrade);
      case 2 -> {
        try {
          ledger.read(rw.read(shortWait));
        } catch (TimeoutException expected) {
          ledger.gaveUp.incrementAndGet();
        }
      }
      case 3 -> {
        try {
          ledger.write(rw.write(shortWait), downgrade);
        } catch (TimeoutException expected) {
          ledger.gaveUp.incrementAndGet();
        }
      }
      case 4 -> rw.tryRead().ifPresent(ledger::read);
      case 5 -> rw.tryWrite().ifPresent(w -> ledger.write(w, downgrade));
      case 6 -> {
        CompletableFuture<Guard> f = rw.readAsync();
        if (f.cancel(false)) {
          ledger.gaveUp.incrementAndGet();
        } else {
          ledger.read(f.join()); // granted first: ours to use and unlock
        }
      }
      case 7 -> {
        CompletableFuture<WriteGuard> f = rw.writeAsync();
        if (f.cancel(false)) {
          ledger.gaveUp.incrementAndGet();
        } else {
          ledger.write(f.join(), downgrade);
        }
      }
      case 8 ->
          ledger.futures.add(
              rw.readAsync(shortWait).handle((g, failure) -> outcome(ledger, g, failure, false)));
      case 9 ->
          ledger.futures.add(
              rw.writeAsync(shortWait)
                  .handle((g, failure) -> outcome(ledger, g, failure, downgrade)));
      case 10 -> {
        Thread.currentThread().interrupt(); // before it asks: throws at once, never queues
        try {
          ledger.write(rw.write(), downgrade);
          ledger.violations.add("an interrupted write() returned");
        } catch (InterruptedException expected) {
          ledger.gaveUp.incrementAndGet();
        }
      }
      case 11 -> ledger.futures.add(rw.readAsync().thenAccept(ledger::read));
      default -> ledger.futures.add(rw.writeAsync().thenAccept(w -> ledger.write(w, downgrade)));
    }
  }

  private static @Nullable Void outcome(
      Ledger ledger, @Nullable Guard guard, @Nullable Throwable failure, boolean downgrade) {
    if (guard instanceof WriteGuard write) {
      ledger.write(write, downgrade);
    } else if (guard != null) {
      ledger.read(guard);
    } else if (failure instanceof TimeoutException) {
      ledger.gaveUp.incrementAndGet();
    } else {
      ledger.violations.add("unexpected failure: " + failure);
    }
    return null;
  }

  private static void assertSettled(ReadWriteLock rw, Ledger ledger) throws Exception {
    TestThreads.awaitAll(ledger.futures);
    // A timer's thread withdraws its request just after failing the future.
    awaitTrue(
        () -> rw.queueLength() == 0 && rw.readers() == 0 && !rw.isWriteLocked(),
        "the lock to settle");
    TestThreads.assertNoViolations(ledger.violations);
    assertTrue(ledger.wrote.get() > 0, "writers ran");
    assertEquals(0, ledger.readers.get());
    assertEquals(0, ledger.writers.get());
    rw.tryWrite().orElseThrow().unlock();
  }
}
