package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.internal.engine.WaitNode;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Many threads mixing every kind of request, with random weights, while the invariants are checked
 * throughout (never more than the limit held, FIFO among a thread's queued requests) and at the end
 * (every future completed, every permit back, the queue empty, counts balanced).
 *
 * <p>Every run is bounded by a count of operations, not by time; the seed is fixed per thread so
 * that a failure can be replayed.
 */
class FifoSemaphoreStressTest {

  private static final int LIMIT = 6;

  /** Tracks permits held, fails on any excess, and remembers the first violation. */
  private static final class Ledger {
    final int limit;
    final AtomicInteger inUse = new AtomicInteger();
    final AtomicInteger peak = new AtomicInteger();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final Queue<CompletableFuture<?>> futures = new ConcurrentLinkedQueue<>();

    Ledger(int limit) {
      this.limit = limit;
    }

    void hold(Permit permit) {
      int now = inUse.addAndGet(permit.permits());
      peak.accumulateAndGet(now, Math::max);
      if (now > limit) {
        violations.add(now + " permits held under limit " + limit);
      }
      Thread.onSpinWait();
      inUse.addAndGet(-permit.permits());
      permit.release();
    }

    /**
     * Checks FIFO among the queued requests of one issuing thread: when one is granted, every
     * request that thread queued before it must have left the queue (granted or withdrawn). Both
     * modes serve the queue in order; barging lets a newcomer in ahead of it, not a queued one.
     */
    void checkGrantedInOrder(Queue<Queued> issuedByOneThread, Queued granted) {
      for (Queued earlier : issuedByOneThread) {
        if (earlier.sequence >= granted.sequence) {
          return;
        }
        if (earlier.waiter.status() == WaitNode.WAITING) {
          violations.add("a request was granted while an earlier one from its thread still waited");
        }
      }
    }
  }

  /** A request queued by one thread, numbered in the order that thread issued it. */
  private static final class Queued {
    final long sequence;
    final WaitNode waiter;

    Queued(long sequence, WaitNode waiter) {
      this.sequence = sequence;
      this.waiter = waiter;
    }
  }

  @ParameterizedTest
  @MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
  void platformThreads_mixingEveryKindOfRequest_keepEveryInvariant(Fairness fairness)
      throws Exception {
    Semaphore semaphore =
        Semaphore.builder().limit(LIMIT).fairness(fairness).statistics(true).build();
    Ledger ledger = new Ledger(LIMIT);
    int threads = 8;
    int operations = 20_000;
    // Rounds until some request timed out and some was cancelled: on two cores the threads of one
    // round may run one after another, and then none waits (seen in CI). 100 is a hang guard.
    SemaphoreStats stats;
    int round = 0;
    do {
      int seed = round * threads;
      runThreads(
          threads,
          t ->
              mixedRequests(
                  semaphore, fairness, ledger, new SplittableRandom(seed + t), operations));
      assertSettled(semaphore, ledger);
      stats = semaphore.stats().orElseThrow();
      assertEquals(stats.acquired(), stats.released(), stats.toString());
    } while (!(stats.timedOut() > 0 && stats.cancelled() > 0) && ++round < 100);
    assertTrue(stats.timedOut() > 0 && stats.cancelled() > 0, "the mix really ran: " + stats);
  }

  @ParameterizedTest
  @MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
  void platformThreads_whileTheLimitChanges_neverLosePermits(Fairness fairness) throws Exception {
    Semaphore semaphore = Semaphore.builder().limit(LIMIT).fairness(fairness).build();
    Ledger ledger = new Ledger(LIMIT);
    CountDownLatch workersDone = new CountDownLatch(4);
    Thread changer =
        new Thread(
            () -> {
              SplittableRandom random = new SplittableRandom(99);
              while (workersDone.getCount() > 0) {
                semaphore.setLimit(1 + random.nextInt(LIMIT));
                Thread.yield();
              }
            });
    changer.start();
    runThreads(
        4,
        t -> {
          try {
            SplittableRandom random = new SplittableRandom(1000 + t);
            for (int i = 0; i < 5_000; i++) {
              int weight = 1 + random.nextInt(3);
              try {
                if (random.nextBoolean()) {
                  semaphore.acquire(weight, Duration.ofMillis(5)).release();
                } else {
                  semaphore.acquireAsync(weight).join().release();
                }
              } catch (IllegalArgumentException | TimeoutException | CompletionException e) {
                // the limit fell below the weight, or the wait was too long: both are expected
              }
            }
          } finally {
            workersDone.countDown();
          }
        });
    changer.join();
    semaphore.setLimit(LIMIT);
    assertEquals(LIMIT, semaphore.available(), "permits lost or invented: " + semaphore);
    assertEquals(0, semaphore.queueLength());
    assertTrue(ledger.violations.isEmpty());
  }

  /**
   * Timed asynchronous requests granted, cancelled and given back by many threads at once: once
   * they have all completed, not one timer is left running (the timers are recorded, not run).
   */
  @Test
  void timedAsyncRequests_fromManyThreads_leaveNoTimerRunning() throws Exception {
    RecordedTimers timers = new RecordedTimers();
    FifoSemaphore semaphore = timers.semaphore(2);
    Ledger ledger = new Ledger(2);
    // Requests queue (and start a timer) only when threads overlap; on a loaded machine a round
    // may run them one after another, so rounds go on until some did (at most 50: a hang guard).
    int rounds = 0;
    do {
      int round = rounds++;
      runThreads(
          4,
          t -> {
            SplittableRandom random = new SplittableRandom(500 + 4 * round + t);
            for (int i = 0; i < 20_000; i++) {
              int weight = 1 + random.nextInt(2);
              CompletableFuture<Permit> f = semaphore.acquireAsync(weight, Duration.ofHours(1));
              if (random.nextBoolean()) {
                ledger.futures.add(f.thenAccept(ledger::hold));
              } else if (!f.cancel(false)) {
                ledger.hold(f.join()); // granted first: ours to use and give back
              }
            }
          });
    } while (timers.started() < 100 && rounds < 50);
    assertSettled(semaphore, ledger);
    assertTrue(timers.started() >= 100, "requests really queued: " + timers.started());
    assertEquals(0, timers.running(), "timers still running, of " + timers.started());
  }

  @ParameterizedTest
  @MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
  void virtualThreads_aHundredThousandContendWithoutPinning(Fairness fairness) throws Exception {
    Assumptions.assumeTrue(
        Runtime.version().feature() >= 21,
        "virtual threads need JDK 21+; .ci/run runs this suite again on the newest JDK installed");
    Semaphore semaphore = Semaphore.builder().limit(16).fairness(fairness).statistics(true).build();
    Ledger ledger = new Ledger(16);
    int tasks = 100_000;
    List<RecordedEvent> pinned;
    try (Recording recording = new Recording()) {
      recording.enable("jdk.VirtualThreadPinned").withoutThreshold();
      recording.start();
      ExecutorService executor = newVirtualThreadPerTaskExecutor();
      try {
        for (int i = 0; i < tasks; i++) {
          int id = i;
          executor.execute(
              () -> {
                SplittableRandom random = new SplittableRandom(id);
                int weight = 1 + random.nextInt(4);
                try {
                  Permit permit =
                      id % 10 == 0
                          ? semaphore.acquire(weight, Duration.ofMillis(1))
                          : semaphore.acquire(weight);
                  Thread.yield(); // hold across a reschedule of the virtual thread
                  ledger.hold(permit);
                } catch (TimeoutException expected) {
                  // some timed requests give up; the check is that they leave cleanly
                } catch (InterruptedException e) {
                  ledger.violations.add("interrupted: " + e);
                }
              });
        }
      } finally {
        executor.shutdown();
      }
      assertTrue(executor.awaitTermination(5, TimeUnit.MINUTES), "the tasks finished");
      recording.stop();
      Path file = Files.createTempFile("jeton-pinning", ".jfr");
      try {
        recording.dump(file);
        pinned =
            RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned"))
                .collect(Collectors.toList());
      } finally {
        Files.deleteIfExists(file);
      }
    }
    assertSettled(semaphore, ledger);
    assertEquals(List.of(), pinned, "virtual threads were pinned while waiting");
    SemaphoreStats stats = semaphore.stats().orElseThrow();
    assertEquals(tasks, stats.acquired() + stats.timedOut(), stats.toString());
    assertEquals(stats.acquired(), stats.released(), stats.toString());
  }

  /**
   * Threads that only acquire and release, weighted, with nothing else to wake them: a lost wake-up
   * (a head left parked while its permits are free) hangs a worker, which the hang guard reports.
   * The interrupts and timeouts of the mixed tests would wake such a head and hide it.
   */
  @ParameterizedTest
  @MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
  void hotLoop_onlyAcquireAndRelease_neverLosesAWakeup(Fairness fairness) throws Exception {
    Semaphore semaphore = Semaphore.builder().limit(3).fairness(fairness).build();
    Ledger ledger = new Ledger(3);
    StressWorkers.platformWorkersUninterrupted(
        8,
        50_000,
        random ->
            ledger.hold(semaphore.acquire(random.nextInt(64) == 0 ? 1 + random.nextInt(3) : 1)),
        semaphore);
    assertSettled(semaphore, ledger);
  }

  // ---------------------------------------------------------------- the mix

  private static void mixedRequests(
      Semaphore semaphore,
      Fairness fairness,
      Ledger ledger,
      SplittableRandom random,
      int operations) {
    Queue<Queued> queuedByMe = new ConcurrentLinkedQueue<>();
    try {
      for (int i = 0; i < operations; i++) {
        int weight = 1 + random.nextInt(LIMIT);
        switch (random.nextInt(7)) {
          case 0:
            ledger.hold(semaphore.acquire(weight));
            break;
          case 1:
            try {
              ledger.hold(semaphore.acquire(weight, Duration.ofNanos(random.nextInt(2_000_000))));
            } catch (TimeoutException expected) {
              // gave up: the request must have left the queue, checked at the end
            }
            break;
          case 2:
            semaphore.tryAcquire(weight).ifPresent(ledger::hold);
            break;
          case 3:
            ledger.hold(semaphore.acquireAsync(weight).join());
            break;
          case 4:
            {
              CompletableFuture<Permit> f = semaphore.acquireAsync(weight);
              if (!f.cancel(false)) {
                ledger.hold(f.join()); // granted first: ours to use and give back
              }
              break;
            }
          case 5:
            {
              CompletableFuture<Permit> f =
                  semaphore.acquireAsync(weight, Duration.ofNanos(random.nextInt(2_000_000)));
              ledger.futures.add(
                  f.handle(
                      (permit, failure) -> {
                        if (permit != null) {
                          ledger.hold(permit);
                        } else if (!(failure instanceof TimeoutException)) {
                          ledger.violations.add("unexpected failure: " + failure);
                        }
                        return null;
                      }));
              break;
            }
          default:
            {
              CompletableFuture<Permit> f = semaphore.acquireAsync(weight);
              WaitNode waiter =
                  f instanceof WaitNode.NodeFuture ? ((WaitNode.NodeFuture<?>) f).node() : null;
              // A barging request may be granted at once under the queue's lock, ahead of the
              // queued ones: only one still waiting when the call returned surely queued.
              boolean queuedSurely = waiter != null && (fairness.isStrictFifo() || !f.isDone());
              Queued queued = queuedSurely ? new Queued(i, waiter) : null;
              if (queued != null) {
                queuedByMe.removeIf(q -> q.waiter.status() != WaitNode.WAITING);
                queuedByMe.add(queued);
              }
              ledger.futures.add(
                  f.thenAccept(
                      permit -> {
                        if (queued != null) {
                          ledger.checkGrantedInOrder(queuedByMe, queued);
                        }
                        ledger.hold(permit);
                      }));
            }
        }
      }
    } catch (InterruptedException e) {
      ledger.violations.add("interrupted: " + e);
    }
  }

  // ---------------------------------------------------------------- helpers

  private interface Worker {
    void run(int index) throws Exception;
  }

  private static void runThreads(int count, Worker worker) throws Exception {
    List<Thread> threads = new ArrayList<>();
    Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
    for (int t = 0; t < count; t++) {
      int index = t;
      Thread thread =
          new Thread(
              () -> {
                try {
                  worker.run(index);
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join(TimeUnit.SECONDS.toMillis(TestThreads.GUARD_SECONDS)); // a hang guard
      if (thread.isAlive()) {
        failures.add(new AssertionError("a worker hangs: " + thread));
      }
    }
    if (!failures.isEmpty()) {
      AssertionError error = new AssertionError("a worker failed");
      failures.forEach(error::addSuppressed);
      throw error;
    }
  }

  private static void assertSettled(Semaphore semaphore, Ledger ledger) throws Exception {
    for (Iterator<CompletableFuture<?>> it = ledger.futures.iterator(); it.hasNext(); ) {
      CompletableFuture<?> f = it.next();
      try {
        f.get(30, TimeUnit.SECONDS);
      } catch (CancellationException ignored) {
        // cancelled requests are complete too
      }
    }
    semaphore.awaitIdle().get(30, TimeUnit.SECONDS);
    assertEquals(
        List.of(),
        ledger.violations.stream().limit(10).collect(Collectors.toList()),
        ledger.violations.size() + " violations, the first ten shown");
    assertTrue(ledger.peak.get() <= ledger.limit && ledger.peak.get() > 0, "peak " + ledger.peak);
    assertEquals(semaphore.limit(), semaphore.available(), "every permit back: " + semaphore);
    assertEquals(0, semaphore.queueLength(), "queue empty: " + semaphore);
  }

  static ExecutorService newVirtualThreadPerTaskExecutor() throws ReflectiveOperationException {
    // Compiled for Java 17, so reached by reflection; the test runs only on JDK 21+.
    try {
      return (ExecutorService)
          Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException(e.getCause());
    }
  }
}
