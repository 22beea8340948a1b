package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The in-process mutex: one test per point of {@link Mutex}'s contract. */
class FifoMutexTest {
  /** A hang guard, never a timing assertion: long enough for a loaded 2-core machine. */
  static final long GUARD_SECONDS = 120;

  private final List<Thread> threads = new ArrayList<>();
  private final List<Throwable> threadFailures = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopThreads() throws InterruptedException {
    for (Thread t : threads) {
      t.interrupt();
      t.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
    }
    if (!threadFailures.isEmpty()) {
      AssertionError e = new AssertionError("a test thread failed");
      threadFailures.forEach(e::addSuppressed);
      throw e;
    }
  }

  // ---------------------------------------------------------------- locking

  @Test
  void lock_thenUnlock_freesTheMutex() throws Exception {
    Mutex mutex = Mutex.create();
    Guard guard = mutex.lock();
    assertTrue(mutex.isLocked());
    assertTrue(mutex.tryLock().isEmpty());
    guard.unlock();
    assertFalse(mutex.isLocked());
    try (Guard again = mutex.lock()) {
      assertTrue(mutex.isLocked());
    }
    assertFalse(mutex.isLocked(), "try-with-resources unlocks");
  }

  @Test
  void lock_byTheHolderAgain_waitsBecauseTheMutexIsNotReentrant() throws Exception {
    Mutex mutex = Mutex.create();
    Guard guard = mutex.lock();
    assertThrows(TimeoutException.class, () -> mutex.lock(Duration.ofMillis(20)));
    assertTrue(mutex.tryLock().isEmpty(), "tryLock by the holder fails too");
    assertEquals(0, mutex.queueLength(), "the timed-out request left the queue");
    guard.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lockAsync_onAFreeMutex_isGrantedAtOnce() {
    Mutex mutex = Mutex.create();
    CompletableFuture<Guard> f = mutex.lockAsync();
    assertTrue(f.isDone());
    assertTrue(mutex.isLocked());
    f.join().unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void fifo_blockingAndAsyncRequests_areGrantedInArrivalOrderFromOneQueue() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    List<Integer> order = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Void>> asyncDone = new ArrayList<>();
    for (int id = 0; id < 6; id++) {
      int me = id;
      if (id % 2 == 0) {
        start(
            () -> {
              try (Guard g = mutex.lock()) {
                order.add(me);
              }
            });
      } else {
        asyncDone.add(
            mutex
                .lockAsync()
                .thenAccept(
                    g -> {
                      order.add(me);
                      g.unlock();
                    }));
      }
      awaitTrue(() -> mutex.queueLength() == me + 1, "request " + me + " to queue");
    }
    held.unlock();
    awaitTrue(() -> order.size() == 6, "all six to run");
    assertEquals(List.of(0, 1, 2, 3, 4, 5), order);
    for (CompletableFuture<Void> f : asyncDone) {
      f.get(GUARD_SECONDS, TimeUnit.SECONDS);
    }
    awaitTrue(() -> !mutex.isLocked(), "the last to unlock");
  }

  @Test
  void tryLock_neverJumpsAQueuedRequest() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> queued = mutex.lockAsync();
    held.unlock(); // hands the lock straight to the queued request
    Guard next = queued.get(GUARD_SECONDS, TimeUnit.SECONDS);
    CompletableFuture<Guard> second = mutex.lockAsync();
    assertTrue(mutex.tryLock().isEmpty(), "locked and queued");
    next.unlock(); // hands it to `second`, never leaving a free moment for tryLock
    assertTrue(mutex.tryLock().isEmpty(), "the queued request got it");
    second.get(GUARD_SECONDS, TimeUnit.SECONDS).unlock();
    Optional<Guard> free = mutex.tryLock();
    assertTrue(free.isPresent(), "free and no one queued");
    free.get().unlock();
  }

  // ---------------------------------------------------------------- timeouts

  @Test
  void lockTimed_throwsTimeoutExceptionAndLeavesTheQueue() throws Exception {
    Mutex mutex = Mutex.builder().name("orders").build();
    Guard held = mutex.lock();
    TimeoutException e =
        assertThrows(TimeoutException.class, () -> mutex.lock(Duration.ofMillis(30)));
    assertTrue(e.getMessage().contains("orders"), e.getMessage());
    assertEquals(0, mutex.queueLength());
    held.unlock();
    assertFalse(mutex.isLocked(), "the timed-out request never takes the lock");
  }

  @Test
  void lockTimed_onAFreeMutex_succeedsEvenWithZero() throws Exception {
    Mutex mutex = Mutex.create();
    mutex.lock(Duration.ZERO).unlock();
    mutex.lockAsync(Duration.ZERO).get(GUARD_SECONDS, TimeUnit.SECONDS).unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lockTimed_negativeTimeout_throwsIllegalArgumentAtOnce() {
    Mutex mutex = Mutex.create();
    assertThrows(IllegalArgumentException.class, () -> mutex.lock(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> mutex.lockAsync(Duration.ofMillis(-1)));
    assertFalse(mutex.isLocked());
    assertEquals(0, mutex.queueLength());
  }

  @Test
  void lockAsyncTimed_failsWithTimeoutExceptionAndLeavesTheQueue() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> f = mutex.lockAsync(Duration.ofMillis(30));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> f.get(GUARD_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(TimeoutException.class, e.getCause());
    // The timer's thread completes the future, then withdraws the request: a moment later.
    awaitTrue(() -> mutex.queueLength() == 0, "the timed-out request to leave");
    held.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lockAsyncTimed_grantedInTime_holdsTheLock() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> f = mutex.lockAsync(Duration.ofMinutes(10));
    assertFalse(f.isDone());
    held.unlock();
    Guard guard = f.get(GUARD_SECONDS, TimeUnit.SECONDS);
    assertTrue(mutex.isLocked());
    guard.unlock();
    assertFalse(mutex.isLocked());
  }

  // ---------------------------------------------------------------- giving up

  @Test
  void lockAsync_cancelled_withdrawsTheRequest() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> f = mutex.lockAsync();
    assertEquals(1, mutex.queueLength());
    assertTrue(f.cancel(false));
    assertEquals(0, mutex.queueLength());
    held.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lockAsync_completedFromOutside_withdrawsTheRequest() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> completed = mutex.lockAsync();
    CompletableFuture<Guard> failed = mutex.lockAsync();
    Guard stranger = () -> {};
    assertTrue(completed.complete(stranger));
    assertTrue(failed.completeExceptionally(new IllegalStateException("caller gave up")));
    assertEquals(0, mutex.queueLength());
    held.unlock();
    assertFalse(mutex.isLocked());
    assertSame(stranger, completed.join());
  }

  @Test
  void lockAsync_orTimeout_withdrawsTheRequest() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> f = mutex.lockAsync().orTimeout(10, TimeUnit.MILLISECONDS);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> f.get(GUARD_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(TimeoutException.class, e.getCause());
    // The timer's thread completes the future, then withdraws the request: a moment later.
    awaitTrue(() -> mutex.queueLength() == 0, "the timed-out request to leave");
    held.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lock_interruptedWhileWaiting_throwsAndLeavesTheQueue() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread waiter =
        start(
            () -> {
              try {
                mutex.lock().unlock();
                thrown.completeExceptionally(new AssertionError("lock() returned"));
              } catch (InterruptedException e) {
                thrown.complete(e);
              }
            });
    awaitTrue(() -> mutex.queueLength() == 1, "the request to queue");
    waiter.interrupt();
    assertInstanceOf(InterruptedException.class, thrown.get(GUARD_SECONDS, TimeUnit.SECONDS));
    assertEquals(0, mutex.queueLength());
    held.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lock_interruptedBeforeLocking_throwsAtOnceEvenWhenFree() {
    Mutex mutex = Mutex.create();
    Thread.currentThread().interrupt();
    try {
      assertThrows(InterruptedException.class, mutex::lock);
    } finally {
      Thread.interrupted();
    }
    Thread.currentThread().interrupt();
    try {
      assertThrows(InterruptedException.class, () -> mutex.lock(Duration.ofMinutes(1)));
    } finally {
      Thread.interrupted();
    }
    assertFalse(mutex.isLocked());
  }

  @Test
  void waiterThatGaveUp_neverHoldsTheLockAfterwards() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> cancelled = mutex.lockAsync();
    CompletableFuture<Throwable> interrupted = new CompletableFuture<>();
    Thread blocked =
        start(
            () -> {
              try {
                mutex.lock();
                interrupted.completeExceptionally(new AssertionError("lock() returned"));
              } catch (InterruptedException e) {
                interrupted.complete(e);
              }
            });
    awaitTrue(() -> mutex.queueLength() == 2, "the blocking request to queue");
    CompletableFuture<Guard> timedOut = mutex.lockAsync(Duration.ofMillis(10));
    cancelled.cancel(false);
    blocked.interrupt();
    assertInstanceOf(InterruptedException.class, interrupted.get(GUARD_SECONDS, TimeUnit.SECONDS));
    assertThrows(ExecutionException.class, () -> timedOut.get(GUARD_SECONDS, TimeUnit.SECONDS));
    held.unlock();
    assertFalse(mutex.isLocked(), "no one who gave up holds it: " + mutex);
    assertEquals(0, mutex.queueLength());
    assertTrue(cancelled.isCancelled());
    mutex.tryLock().orElseThrow().unlock();
  }

  /**
   * A cancel that races with the unlock granting that very request: whichever wins, the lock is
   * never lost. If the cancel wins the grant goes on to the next waiter; if the grant wins the
   * canceller owns the lock and unlocks it, which hands it on just the same.
   */
  @Test
  void grantRacingWithCancel_isHandedOnToTheNextWaiter() throws Exception {
    Mutex mutex = Mutex.create();
    ExecutorService unlocker = Executors.newSingleThreadExecutor();
    int cancelsWon = 0;
    try {
      for (int round = 0; round < 2_000; round++) {
        Guard held = mutex.lock();
        CompletableFuture<Guard> racing = mutex.lockAsync();
        CompletableFuture<Guard> next = mutex.lockAsync();
        Future<?> unlocked = unlocker.submit(held::unlock);
        if (racing.cancel(false)) {
          cancelsWon++;
        } else {
          racing.get(GUARD_SECONDS, TimeUnit.SECONDS).unlock(); // granted first: ours
        }
        unlocked.get(GUARD_SECONDS, TimeUnit.SECONDS);
        Guard nextGuard = next.get(GUARD_SECONDS, TimeUnit.SECONDS);
        assertTrue(mutex.isLocked(), "round " + round);
        assertEquals(0, mutex.queueLength(), "round " + round);
        nextGuard.unlock();
        assertFalse(mutex.isLocked(), "round " + round + ": " + mutex);
      }
    } finally {
      unlocker.shutdownNow();
    }
    assertTrue(cancelsWon > 0, "some cancels won");
  }

  // ---------------------------------------------------------------- guards

  @Test
  void guardUnlock_isIdempotent_aDoubleUnlockNeverFreesSomeoneElsesLock() throws Exception {
    Mutex mutex = Mutex.create();
    Guard first = mutex.lock();
    first.unlock();
    Guard second = mutex.lock();
    first.unlock();
    first.close();
    assertTrue(mutex.isLocked(), "the second holder still holds it");
    assertTrue(mutex.tryLock().isEmpty());
    second.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void guardUnlock_fromAnotherThread_grantsTheNextWaiter() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    CompletableFuture<Guard> next = mutex.lockAsync();
    start(held::unlock).join();
    next.get(GUARD_SECONDS, TimeUnit.SECONDS).unlock();
    assertFalse(mutex.isLocked());
  }

  // ---------------------------------------------------------------- tasks

  @Test
  void call_holdsTheLockForTheTaskAndReturnsItsResult() throws Exception {
    Mutex mutex = Mutex.create();
    assertTrue(mutex.call(mutex::isLocked));
    assertFalse(mutex.isLocked());
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () ->
                mutex.call(
                    () -> {
                      throw new IllegalStateException("boom");
                    }));
    assertEquals("boom", e.getMessage());
    assertFalse(mutex.isLocked(), "unlocked when the task throws");
  }

  @Test
  void callAsync_holdsTheLockUntilTheStageCompletes() throws Exception {
    Mutex mutex = Mutex.create();
    CompletableFuture<String> work = new CompletableFuture<>();
    CompletableFuture<String> result = mutex.callAsync(() -> work);
    assertTrue(mutex.isLocked());
    CompletableFuture<String> second = mutex.callAsync(() -> CompletableFuture.completedFuture("b"));
    assertFalse(second.isDone(), "waits for the first task's stage");
    work.complete("a");
    assertEquals("a", result.get(GUARD_SECONDS, TimeUnit.SECONDS));
    assertEquals("b", second.get(GUARD_SECONDS, TimeUnit.SECONDS));
    assertFalse(mutex.isLocked());
  }

  @Test
  void callAsync_outcomeIsSeenAfterTheLockIsLetGo() throws Exception {
    Mutex mutex = Mutex.create();
    CompletableFuture<String> work = new CompletableFuture<>();
    CompletableFuture<Boolean> lockedWhenSeen =
        mutex.callAsync(() -> work).thenApply(value -> mutex.isLocked());
    work.complete("done");
    assertFalse(lockedWhenSeen.get(GUARD_SECONDS, TimeUnit.SECONDS));
  }

  @Test
  void callAsync_cancelledBeforeTheGrant_neverRunsTheTask() throws Exception {
    Mutex mutex = Mutex.create();
    Guard held = mutex.lock();
    AtomicBoolean ran = new AtomicBoolean();
    CompletableFuture<String> result =
        mutex.callAsync(
            () -> {
              ran.set(true);
              return CompletableFuture.completedFuture("x");
            });
    assertTrue(result.cancel(false));
    assertThrows(CancellationException.class, result::join);
    assertEquals(0, mutex.queueLength());
    held.unlock();
    assertFalse(ran.get());
    assertFalse(mutex.isLocked());
  }

  @Test
  void callAsync_taskThatThrowsOrFails_unlocks() throws Exception {
    Mutex mutex = Mutex.create();
    CompletableFuture<Object> thrown =
        mutex.callAsync(
            () -> {
              throw new IllegalStateException("boom");
            });
    assertThrows(ExecutionException.class, () -> thrown.get(GUARD_SECONDS, TimeUnit.SECONDS));
    CompletableFuture<Object> failed =
        mutex.callAsync(() -> CompletableFuture.failedFuture(new IllegalStateException("boom")));
    assertThrows(ExecutionException.class, () -> failed.get(GUARD_SECONDS, TimeUnit.SECONDS));
    assertFalse(mutex.isLocked());
  }

  // ---------------------------------------------------------------- inspection and building

  @Test
  void isLockedAndQueueLength_followTheHoldersAndWaiters() throws Exception {
    Mutex mutex = Mutex.create();
    assertFalse(mutex.isLocked());
    assertEquals(0, mutex.queueLength());
    Guard held = mutex.lock();
    CompletableFuture<Guard> a = mutex.lockAsync();
    CompletableFuture<Guard> b = mutex.lockAsync();
    assertTrue(mutex.isLocked());
    assertEquals(2, mutex.queueLength());
    held.unlock();
    assertEquals(1, mutex.queueLength());
    a.join().unlock();
    assertEquals(0, mutex.queueLength());
    assertTrue(mutex.isLocked());
    b.join().unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void toString_showsNameStateAndQueue() throws Exception {
    Mutex named = Mutex.builder().name("orders").build();
    assertEquals("Mutex[name=orders, unlocked, queued=0]", named.toString());
    Guard held = named.lock();
    CompletableFuture<Guard> queued = named.lockAsync();
    assertEquals("Mutex[name=orders, locked, queued=1]", named.toString());
    queued.cancel(false);
    held.unlock();
    assertEquals("Mutex[unlocked, queued=0]", Mutex.create().toString());
  }

  @Test
  void builder_blankName_throwsIllegalArgumentException() {
    assertThrows(IllegalArgumentException.class, () -> Mutex.builder().name(""));
    assertThrows(IllegalArgumentException.class, () -> Mutex.builder().name("  "));
  }

  @Test
  void completionExecutor_completesFuturesOnTheExecutor() throws Exception {
    ExecutorService executor =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "mutex-completions"));
    try {
      Mutex mutex = Mutex.builder().completionExecutor(executor).build();
      Guard held = mutex.lock();
      AtomicReference<String> completedOn = new AtomicReference<>();
      CompletableFuture<Void> seen =
          mutex
              .lockAsync()
              .thenAccept(
                  g -> {
                    completedOn.set(Thread.currentThread().getName());
                    g.unlock();
                  });
      held.unlock();
      seen.get(GUARD_SECONDS, TimeUnit.SECONDS);
      assertEquals("mutex-completions", completedOn.get());
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void completionExecutor_thatRejects_stillDeliversOnTheUnlockingThread() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    executor.shutdown();
    Mutex mutex = Mutex.builder().completionExecutor(executor).build();
    Guard held = mutex.lock();
    CompletableFuture<Guard> f = mutex.lockAsync();
    held.unlock();
    assertTrue(f.isDone(), "completed inline when the executor rejected it");
    f.join().unlock();
    assertFalse(mutex.isLocked());
  }

  // ---------------------------------------------------------------- stack and memory

  @Test
  void lockAsyncChain_ofAHundredThousandSteps_runsInConstantStack() throws Exception {
    Mutex mutex = Mutex.create();
    Guard first = mutex.lock();
    int steps = 100_000;
    AtomicInteger ran = new AtomicInteger();
    List<CompletableFuture<Void>> chain = new ArrayList<>(steps);
    for (int i = 0; i < steps; i++) {
      chain.add(
          mutex
              .lockAsync()
              .thenAccept(
                  g -> {
                    ran.incrementAndGet();
                    g.unlock(); // grants, and so completes, the next future in the queue
                  }));
    }
    assertEquals(steps, mutex.queueLength());
    first.unlock(); // recursion would overflow the 1 MB stack long before 100,000 steps
    CompletableFuture.allOf(chain.toArray(new CompletableFuture<?>[0]))
        .get(GUARD_SECONDS, TimeUnit.SECONDS);
    assertEquals(steps, ran.get());
    assertFalse(mutex.isLocked());
  }

  private int unguarded; // deliberately plain: the mutex must publish it

  @Test
  void memoryVisibility_writesUnderTheLockAreSeenByTheNextHolder() throws Exception {
    Mutex mutex = Mutex.create();
    int workers = 4;
    int rounds = 10_000;
    CountDownLatch done = new CountDownLatch(workers);
    for (int t = 0; t < workers; t++) {
      boolean async = t % 2 == 1;
      start(
          () -> {
            for (int i = 0; i < rounds; i++) {
              try (Guard g = async ? mutex.lockAsync().join() : mutex.lock()) {
                unguarded++;
              }
            }
            done.countDown();
          });
    }
    assertTrue(done.await(GUARD_SECONDS, TimeUnit.SECONDS), "the workers finished");
    mutex.lock().unlock();
    assertEquals(workers * rounds, unguarded);
  }

  // ---------------------------------------------------------------- helpers

  /** Something a test thread runs; may throw anything. */
  interface Body {
    void run() throws Exception;
  }

  /** Starts a daemon thread; it is interrupted and joined after the test, its failure reported. */
  Thread start(Body body) {
    Thread t =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (Throwable e) {
                threadFailures.add(e);
              }
            });
    t.setDaemon(true);
    threads.add(t);
    t.start();
    return t;
  }

  /** Waits until {@code condition} holds; fails, naming what it awaited, after the hang guard. */
  static void awaitTrue(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GUARD_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what);
      }
      LockSupport.parkNanos(50_000); // leaves the core to the threads awaited
    }
  }
}
