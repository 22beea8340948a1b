package dev.jeton;

import static dev.jeton.TestThreads.GUARD_SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The stress runs the lock tests share: many platform threads (with or without an interrupter) or
 * many virtual threads, each making random requests of the primitive under test.
 *
 * <p>A hang here means a lost wake-up: every worker parked while nothing is left to wake them. On a
 * loaded machine a fair lock hands off on every unlock, each handoff a context switch, and the same
 * run can take twenty times as long as on an idle one; so the hang guard watches progress, not the
 * clock. A run fails as hung only when no request at all completed for {@link #STALL_SECONDS}, and
 * the failure then shows the primitive's state.
 */
final class StressWorkers {
  /** How long a run may go without a single completed request before it counts as hung. */
  static final long STALL_SECONDS = GUARD_SECONDS / 2;

  private StressWorkers() {}

  /** One request of a random kind, drawn from {@code random}; may throw anything. */
  interface Request {
    void run(SplittableRandom random) throws Exception;
  }

  /**
   * Runs {@code operations} requests on each of {@code threads} platform threads (thread t seeded
   * with t) while an interrupter interrupts them at random; a request interrupted while it waited
   * counts in {@code interrupted}. Fails if the workers stall or one throws anything else.
   */
  static void platformWorkers(
      int threads, int operations, Request request, AtomicInteger interrupted, Object underTest)
      throws InterruptedException {
    platformWorkers(threads, operations, request, interrupted, true, underTest);
  }

  /**
   * As {@link #platformWorkers(int, int, Request, AtomicInteger, Object)}, but with no interrupter:
   * for a hot loop whose waiters nothing else wakes, where an interrupt would hide a lost wake-up.
   */
  static void platformWorkersUninterrupted(
      int threads, int operations, Request request, Object underTest) throws InterruptedException {
    platformWorkers(threads, operations, request, new AtomicInteger(), false, underTest);
  }

  private static void platformWorkers(
      int threads,
      int operations,
      Request request,
      AtomicInteger interrupted,
      boolean interrupt,
      Object underTest)
      throws InterruptedException {
    List<Thread> workers = new ArrayList<>();
    Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
    LongAdder completed = new LongAdder();
    Phaser start = new Phaser(1); // all at once, or the first may finish alone; uninterruptible
    for (int t = 0; t < threads; t++) {
      SplittableRandom random = new SplittableRandom(t);
      Thread worker =
          new Thread(
              () -> {
                try {
                  start.awaitAdvance(0);
                  for (int i = 0; i < operations; i++) {
                    try {
                      request.run(random);
                    } catch (InterruptedException e) {
                      interrupted.incrementAndGet(); // by the interrupter, while it waited
                    }
                    completed.increment();
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      worker.setDaemon(true); // a stalled run must not keep the test JVM alive
      workers.add(worker);
      worker.start();
    }
    start.arrive();
    @Nullable Thread interrupter = interrupt ? interruptAtRandom(workers) : null;
    joinWhileProgressing(workers, completed::sum, underTest::toString);
    if (interrupter != null) {
      interrupter.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
    }
    assertEquals(List.of(), List.copyOf(failures));
  }

  /**
   * Waits for {@code workers} to end for as long as {@code progress} keeps growing; fails, showing
   * {@code state}, once it has stood still for {@link #STALL_SECONDS}.
   */
  static void joinWhileProgressing(
      List<Thread> workers, Supplier<Long> progress, Supplier<String> state)
      throws InterruptedException {
    long seen = progress.get();
    long stillSince = System.nanoTime();
    for (Thread worker : workers) {
      while (worker.isAlive()) {
        worker.join(200);
        long now = progress.get();
        if (now != seen) {
          seen = now;
          stillSince = System.nanoTime();
        } else if (System.nanoTime() - stillSince > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
          throw new AssertionError(
              "no request completed for "
                  + STALL_SECONDS
                  + " s after "
                  + seen
                  + " (a lost wake-up?): "
                  + state.get());
        }
      }
    }
  }

  /** Interrupts the workers at random until they have all finished. */
  private static Thread interruptAtRandom(List<Thread> workers) {
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

  /**
   * Runs {@code tasks} requests, one per virtual thread (task i seeded with 1,000 + i), and waits
   * for them all; what a request throws is added to {@code violations}. Skips the test below JDK
   * 21.
   */
  static void virtualTasks(int tasks, Request request, Queue<String> violations) throws Exception {
    ExecutorService executor = TestThreads.virtualThreadPerTaskExecutor();
    try {
      for (int i = 0; i < tasks; i++) {
        SplittableRandom random = new SplittableRandom(1_000 + i);
        executor.execute(
            () -> {
              try {
                request.run(random);
              } catch (Throwable e) {
                violations.add("failed: " + e);
              }
            });
      }
    } finally {
      executor.shutdown();
    }
    assertTrue(executor.awaitTermination(GUARD_SECONDS, TimeUnit.SECONDS), "the tasks finished");
  }
}
