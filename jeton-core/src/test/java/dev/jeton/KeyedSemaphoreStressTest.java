package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Many threads on many keys under a global limit, with every kind of request (blocking, timed,
 * asynchronous, tried), random weights, and random cancellations and interrupts: no key and not the
 * global limit is ever exceeded, every request ends, and at the end every permit is back and every
 * entry is gone.
 */
class KeyedSemaphoreStressTest {
  private static final int KEYS = 24;
  private static final int PER_KEY = 3;
  private static final int GLOBAL = 10;

  private final KeyedSemaphore<Integer> keyed =
      KeyedSemaphore.builder().limitPerKey(PER_KEY).globalLimit(GLOBAL).build();
  private final AtomicIntegerArray inUse = new AtomicIntegerArray(KEYS);
  private final AtomicInteger globalInUse = new AtomicInteger();
  private final AtomicInteger worstKey = new AtomicInteger();
  private final AtomicInteger worstGlobal = new AtomicInteger();
  private final AtomicInteger granted = new AtomicInteger();

  private void hold(int key, Permit permit, SplittableRandom random) {
    int n = permit.permits();
    worstKey.accumulateAndGet(inUse.addAndGet(key, n), Math::max);
    worstGlobal.accumulateAndGet(globalInUse.addAndGet(n), Math::max);
    if (random.nextInt(4) == 0) {
      LockSupport.parkNanos(random.nextInt(50_000));
    }
    inUse.addAndGet(key, -n);
    globalInUse.addAndGet(-n);
    granted.incrementAndGet();
    permit.release();
  }

  /** One request of a random kind on a random key; returns once it has ended. */
  private void oneRequest(SplittableRandom random) throws Exception {
    int key = random.nextInt(KEYS);
    int weight = 1 + random.nextInt(PER_KEY);
    Semaphore semaphore = keyed.forKey(key);
    switch (random.nextInt(5)) {
      case 0 -> hold(key, semaphore.acquire(weight), random);
      case 1 -> {
        try {
          hold(key, semaphore.acquire(weight, Duration.ofNanos(random.nextInt(200_000))), random);
        } catch (TimeoutException expected) {
          // gave up: nothing held
        }
      }
      case 2 -> semaphore.tryAcquire(weight).ifPresent(p -> hold(key, p, random));
      case 3 -> {
        CompletableFuture<Permit> f = semaphore.acquireAsync(weight);
        if (random.nextBoolean() && f.cancel(false)) {
          return;
        }
        hold(key, f.get(30, TimeUnit.SECONDS), random);
      }
      default -> {
        CompletableFuture<Permit> f =
            semaphore.acquireAsync(weight, Duration.ofNanos(random.nextInt(200_000)));
        try {
          hold(key, f.get(30, TimeUnit.SECONDS), random);
        } catch (ExecutionException e) {
          assertTrue(e.getCause() instanceof TimeoutException, e.getCause().toString());
        } catch (CancellationException unexpected) {
          throw new AssertionError("nobody cancelled it", unexpected);
        }
      }
    }
  }

  @Test
  void manyThreadsManyKeys_keepEveryLimitAndLeaveNothingBehind() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<CompletableFuture<Void>> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long seed = 1_000 + t;
        workers.add(
            CompletableFuture.runAsync(
                () -> {
                  SplittableRandom random = new SplittableRandom(seed);
                  for (int i = 0; i < 20_000; i++) {
                    try {
                      oneRequest(random);
                    } catch (Exception e) {
                      throw new AssertionError(e);
                    }
                  }
                },
                pool));
      }
      for (CompletableFuture<Void> worker : workers) {
        worker.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertLimitsKeptAndEverythingBack();
  }

  @Test
  void interruptsWhileWaiting_neverLeakKeyOrGlobalPermits() throws Exception {
    List<Thread> waiters = new ArrayList<>();
    AtomicInteger interrupted = new AtomicInteger();
    for (int t = 0; t < 16; t++) {
      long seed = t;
      Thread thread =
          new Thread(
              () -> {
                SplittableRandom random = new SplittableRandom(seed);
                while (true) {
                  int key = random.nextInt(4);
                  try {
                    hold(key, keyed.forKey(key).acquire(1 + random.nextInt(PER_KEY)), random);
                  } catch (InterruptedException e) {
                    interrupted.incrementAndGet();
                    return;
                  }
                }
              });
      thread.start();
      waiters.add(thread);
    }
    Thread.sleep(300);
    for (Thread thread : waiters) {
      thread.interrupt();
    }
    for (Thread thread : waiters) {
      thread.join(30_000);
      assertTrue(!thread.isAlive(), "a waiter did not end");
    }
    assertEquals(16, interrupted.get());
    assertLimitsKeptAndEverythingBack();
  }

  @Test
  void virtualThreads_contendOnKeysWithoutLeaks() throws Exception {
    Assumptions.assumeTrue(
        Runtime.version().feature() >= 21,
        "virtual threads need JDK 21+; .ci/run runs this suite again on the newest JDK installed");
    ExecutorService executor = FifoSemaphoreStressTest.newVirtualThreadPerTaskExecutor();
    try {
      List<CompletableFuture<Void>> tasks = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) {
        long seed = i;
        tasks.add(
            CompletableFuture.runAsync(
                () -> {
                  try {
                    oneRequest(new SplittableRandom(seed));
                  } catch (Exception e) {
                    throw new AssertionError(e);
                  }
                },
                executor));
      }
      CompletableFuture.allOf(tasks.toArray(new CompletableFuture<?>[0]))
          .get(120, TimeUnit.SECONDS);
    } finally {
      executor.shutdownNow();
    }
    assertLimitsKeptAndEverythingBack();
  }

  /**
   * Threads on a few keys with every operation (requests of each kind, setLimit, closing a key,
   * awaitIdle) while the keyed semaphore is closed under them: every request ends (granted, refused
   * or failed as closed), and once the last permit is back no entry is left.
   */
  @Test
  void closeUnderLoad_leavesNoEntryBehind() throws Exception {
    KeyedSemaphore<Integer> closing = KeyedSemaphore.create(2);
    int threads = 6;
    int opsPerThread = 4_000;
    AtomicInteger done = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<CompletableFuture<Void>> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long seed = 7_000 + t;
        workers.add(
            CompletableFuture.runAsync(
                () -> {
                  SplittableRandom random = new SplittableRandom(seed);
                  for (int i = 0; i < opsPerThread; i++) {
                    try {
                      oneOperation(closing.forKey(random.nextInt(6)), random);
                    } catch (SemaphoreClosedException
                        | IllegalArgumentException
                        | TimeoutException expected) {
                      // closed, a weight above a lowered limit, or gave up
                    } catch (Exception e) {
                      throw new AssertionError(e);
                    }
                    done.incrementAndGet();
                  }
                },
                pool));
      }
      while (done.get() < threads * opsPerThread / 2) {
        Thread.onSpinWait(); // close halfway through, with every thread still at work
      }
      closing.close();
      for (CompletableFuture<Void> worker : workers) {
        worker.get(120, TimeUnit.SECONDS); // hang guard
      }
    } finally {
      pool.shutdownNow();
    }
    KeyedSemaphoreTest.awaitTrue(() -> closing.keyCount() == 0);
  }

  private static void oneOperation(Semaphore key, SplittableRandom random) throws Exception {
    int weight = 1 + random.nextInt(2);
    switch (random.nextInt(7)) {
      case 0 -> key.acquire(weight, Duration.ofNanos(random.nextInt(200_000))).release();
      case 1 -> key.tryAcquire(weight).ifPresent(Permit::release);
      case 2 -> {
        CompletableFuture<Permit> f = key.acquireAsync(weight);
        if (!f.cancel(false)) {
          try {
            f.get(30, TimeUnit.SECONDS).release(); // hang guard
          } catch (ExecutionException failed) {
            if (!(failed.getCause() instanceof SemaphoreClosedException
                || failed.getCause() instanceof IllegalArgumentException)) {
              throw failed;
            }
          }
        }
      }
      case 3 -> key.setLimit(1 + random.nextInt(3));
      case 4 -> key.awaitIdle().get(30, TimeUnit.SECONDS); // hang guard
      case 5 -> {
        if (random.nextInt(50) == 0) {
          key.close();
        }
      }
      default -> {
        Permit held = key.acquire(weight, Duration.ofMillis(1));
        LockSupport.parkNanos(random.nextInt(20_000));
        held.release();
      }
    }
  }

  private void assertLimitsKeptAndEverythingBack() throws InterruptedException {
    assertTrue(worstKey.get() <= PER_KEY, "a key had " + worstKey.get() + " permits out");
    assertTrue(worstGlobal.get() <= GLOBAL, "the global limit had " + worstGlobal.get() + " out");
    assertTrue(granted.get() > 0, "some requests were granted");
    assertTrue(worstGlobal.get() > PER_KEY, "keys ran side by side: " + worstGlobal.get());
    // A cancelled grant is given back by the thread that delivered it, which may finish a moment
    // after the canceller has moved on.
    KeyedSemaphoreTest.awaitTrue(() -> keyed.globalAvailable().equals(OptionalInt.of(GLOBAL)));
    KeyedSemaphoreTest.awaitTrue(() -> keyed.keyCount() == 0);
    for (int key = 0; key < KEYS; key++) {
      assertEquals(PER_KEY, keyed.forKey(key).available(), "key " + key);
      assertEquals(0, keyed.forKey(key).queueLength(), "key " + key);
    }
  }
}
