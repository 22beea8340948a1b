package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static dev.jeton.TestThreads.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.TestThreads.Blocked;
import dev.jeton.TestThreads.CancelRace;
import dev.jeton.TestThreads.HeldAndQueued;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The in-process mutex: one test per point of {@link Mutex}'s contract, which both modes keep (what
 * sets them apart is in {@link MutexFairnessTest}).
 */
@ParameterizedClass
@MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
class FifoMutexTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  @Parameter Fairness fairness;

  private Mutex newMutex() {
    return Mutex.builder().fairness(fairness).build();
  }

  // ---------------------------------------------------------------- locking

  @Test
  void lock_thenUnlock_freesTheMutex() throws Exception {
    Mutex mutex = newMutex();
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
    Mutex mutex = newMutex();
    Guard guard = mutex.lock();
    assertThrows(TimeoutException.class, () -> mutex.lock(Duration.ofMillis(20)));
    assertTrue(mutex.tryLock().isEmpty(), "tryLock by the holder fails too");
    assertEquals(0, mutex.queueLength(), "the timed-out request left the queue");
    guard.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lockAsync_onAFreeMutex_isGrantedAtOnce() {
    Mutex mutex = newMutex();
    CompletableFuture<Guard> f = mutex.lockAsync();
    assertTrue(f.isDone());
    assertTrue(mutex.isLocked());
    f.join().unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void fifo_blockingAndAsyncRequests_areGrantedInArrivalOrderFromOneQueue() throws Exception {
    // In both modes: barging lets a newcomer in ahead of the queue, never a waiter ahead of
    // another.
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    List<Integer> order = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Void>> asyncDone = new ArrayList<>();
    for (int id = 0; id < 6; id++) {
      int me = id;
      if (id % 2 == 0) {
        threads.start(
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
      done(f);
    }
    awaitTrue(() -> !mutex.isLocked(), "the last to unlock");
  }

  @Test
  void tryLock_neverJumpsAQueuedAsynchronousRequest() throws Exception {
    // In both modes: an asynchronous request has no thread to wake, so it is handed the lock.
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    CompletableFuture<Guard> queued = mutex.lockAsync();
    held.unlock(); // hands the lock straight to the queued request
    Guard next = done(queued);
    CompletableFuture<Guard> second = mutex.lockAsync();
    assertTrue(mutex.tryLock().isEmpty(), "locked and queued");
    next.unlock(); // hands it to `second`, never leaving a free moment for tryLock
    assertTrue(mutex.tryLock().isEmpty(), "the queued request got it");
    done(second).unlock();
    Optional<Guard> free = mutex.tryLock();
    assertTrue(free.isPresent(), "free and no one queued");
    free.get().unlock();
  }

  // ---------------------------------------------------------------- timeouts

  @Test
  void lockTimed_throwsTimeoutExceptionAndLeavesTheQueue() throws Exception {
    Mutex mutex = Mutex.builder().fairness(fairness).name("orders").build();
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
    Mutex mutex = newMutex();
    mutex.lock(Duration.ZERO).unlock();
    done(mutex.lockAsync(Duration.ZERO)).unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lockTimed_negativeTimeout_throwsIllegalArgumentAtOnce() {
    Mutex mutex = newMutex();
    assertThrows(IllegalArgumentException.class, () -> mutex.lock(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> mutex.lockAsync(Duration.ofMillis(-1)));
    assertFalse(mutex.isLocked());
    assertEquals(0, mutex.queueLength());
  }

  @Test
  void lockAsyncTimed_failsWithTimeoutExceptionAndLeavesTheQueue() throws Exception {
    assertTimedOutRequestLeavesTheQueue(mutex -> mutex.lockAsync(Duration.ofMillis(30)));
  }

  @Test
  void lockAsyncTimed_grantedInTime_holdsTheLock() throws Exception {
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    CompletableFuture<Guard> f = mutex.lockAsync(Duration.ofMinutes(10));
    assertFalse(f.isDone());
    held.unlock();
    Guard guard = done(f);
    assertTrue(mutex.isLocked());
    guard.unlock();
    assertFalse(mutex.isLocked());
  }

  // ---------------------------------------------------------------- giving up

  @Test
  void lockAsync_cancelled_withdrawsTheRequest() throws Exception {
    Mutex mutex = newMutex();
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
    Mutex mutex = newMutex();
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
    assertTimedOutRequestLeavesTheQueue(
        mutex -> mutex.lockAsync().orTimeout(10, TimeUnit.MILLISECONDS));
  }

  /**
   * Queues {@code timedRequest} behind a holder: it fails with a {@code TimeoutException}, leaves
   * the queue, and never takes the lock.
   */
  private void assertTimedOutRequestLeavesTheQueue(
      Function<Mutex, CompletableFuture<Guard>> timedRequest) throws Exception {
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    CompletableFuture<Guard> f = timedRequest.apply(mutex);
    assertInstanceOf(TimeoutException.class, failureOf(f));
    // The timer's thread completes the future, then withdraws the request: a moment later.
    awaitTrue(() -> mutex.queueLength() == 0, "the timed-out request to leave");
    held.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lock_interruptedWhileWaiting_throwsAndLeavesTheQueue() throws Exception {
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    Blocked waiter = threads.startBlocked(() -> mutex.lock().unlock());
    awaitTrue(() -> mutex.queueLength() == 1, "the request to queue");
    waiter.thread().interrupt();
    assertInstanceOf(InterruptedException.class, done(waiter.thrown()));
    assertEquals(0, mutex.queueLength());
    held.unlock();
    assertFalse(mutex.isLocked());
  }

  @Test
  void lock_interruptedBeforeLocking_throwsAtOnceEvenWhenFree() {
    Mutex mutex = newMutex();
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
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    CompletableFuture<Guard> cancelled = mutex.lockAsync();
    Blocked blocked = threads.startBlocked(mutex::lock);
    awaitTrue(() -> mutex.queueLength() == 2, "the blocking request to queue");
    CompletableFuture<Guard> timedOut = mutex.lockAsync(Duration.ofMillis(10));
    cancelled.cancel(false);
    blocked.thread().interrupt();
    assertInstanceOf(InterruptedException.class, done(blocked.thrown()));
    failureOf(timedOut);
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
    Mutex mutex = newMutex();
    TestThreads.raceCancelsWithGrants(
        2_000,
        round -> new CancelRace(mutex.lock(), mutex.lockAsync(), mutex.lockAsync()),
        (next, round) -> {
          assertTrue(mutex.isLocked(), "round " + round);
          assertEquals(0, mutex.queueLength(), "round " + round);
          next.unlock();
          assertFalse(mutex.isLocked(), "round " + round + ": " + mutex);
        });
  }

  // ---------------------------------------------------------------- guards

  @Test
  void guardUnlock_isIdempotent_aDoubleUnlockNeverFreesSomeoneElsesLock() throws Exception {
    Mutex mutex = newMutex();
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
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    CompletableFuture<Guard> next = mutex.lockAsync();
    threads.start(held::unlock).join();
    done(next).unlock();
    assertFalse(mutex.isLocked());
  }

  // ---------------------------------------------------------------- tasks

  @Test
  void call_holdsTheLockForTheTaskAndReturnsItsResult() throws Exception {
    Mutex mutex = newMutex();
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
    Mutex mutex = newMutex();
    CompletableFuture<String> work = new CompletableFuture<>();
    CompletableFuture<String> result = mutex.callAsync(() -> work);
    assertTrue(mutex.isLocked());
    CompletableFuture<String> second =
        mutex.callAsync(() -> CompletableFuture.completedFuture("b"));
    assertFalse(second.isDone(), "waits for the first task's stage");
    work.complete("a");
    assertEquals("a", done(result));
    assertEquals("b", done(second));
    assertFalse(mutex.isLocked());
  }

  @Test
  void callAsync_outcomeIsSeenAfterTheLockIsLetGo() throws Exception {
    Mutex mutex = newMutex();
    CompletableFuture<String> work = new CompletableFuture<>();
    CompletableFuture<Boolean> lockedWhenSeen =
        mutex.callAsync(() -> work).thenApply(value -> mutex.isLocked());
    work.complete("done");
    assertFalse(done(lockedWhenSeen));
  }

  @Test
  void callAsync_cancelledBeforeTheGrant_neverRunsTheTask() throws Exception {
    Mutex mutex = newMutex();
    Guard held = mutex.lock();
    AtomicBoolean ran = TestThreads.cancelledBeforeTheGrant(mutex::callAsync);
    assertEquals(0, mutex.queueLength());
    held.unlock();
    assertFalse(ran.get());
    assertFalse(mutex.isLocked());
  }

  @Test
  void callAsync_taskThatThrowsOrFails_unlocks() throws Exception {
    Mutex mutex = newMutex();
    CompletableFuture<Object> thrown =
        mutex.callAsync(
            () -> {
              throw new IllegalStateException("boom");
            });
    failureOf(thrown);
    CompletableFuture<Object> failed =
        mutex.callAsync(() -> CompletableFuture.failedFuture(new IllegalStateException("boom")));
    failureOf(failed);
    assertFalse(mutex.isLocked());
  }

  // ---------------------------------------------------------------- inspection and building

  @Test
  void isLockedAndQueueLength_followTheHoldersAndWaiters() throws Exception {
    Mutex mutex = newMutex();
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
    Mutex named = Mutex.builder().fairness(fairness).name("orders").build();
    assertEquals("Mutex[name=orders, unlocked, queued=0]", named.toString());
    Guard held = named.lock();
    CompletableFuture<Guard> queued = named.lockAsync();
    assertEquals("Mutex[name=orders, locked, queued=1]", named.toString());
    queued.cancel(false);
    held.unlock();
    assertEquals("Mutex[unlocked, queued=0]", newMutex().toString());
  }

  @Test
  void builder_blankName_throwsIllegalArgumentException() {
    assertThrows(IllegalArgumentException.class, () -> Mutex.builder().name(""));
    assertThrows(IllegalArgumentException.class, () -> Mutex.builder().name("  "));
  }

  @Test
  void completionExecutor_completesFuturesOnTheExecutor() throws Exception {
    String completedOn =
        TestThreads.completingThread(
            "mutex-completions",
            executor -> {
              Mutex mutex = Mutex.builder().fairness(fairness).completionExecutor(executor).build();
              return new HeldAndQueued(mutex.lock(), mutex.lockAsync());
            });
    assertEquals("mutex-completions", completedOn);
  }

  @Test
  void completionExecutor_thatRejects_stillDeliversOnTheUnlockingThread() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    executor.shutdown();
    Mutex mutex = Mutex.builder().fairness(fairness).completionExecutor(executor).build();
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
    Mutex mutex = newMutex();
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
    done(CompletableFuture.allOf(chain.toArray(new CompletableFuture<?>[0])));
    assertEquals(steps, ran.get());
    assertFalse(mutex.isLocked());
  }

  private int unguarded; // deliberately plain: the mutex must publish it

  @Test
  void memoryVisibility_writesUnderTheLockAreSeenByTheNextHolder() throws Exception {
    Mutex mutex = newMutex();
    int workers = 4;
    int rounds = 10_000;
    threads.runAll(
        workers,
        t -> {
          boolean async = t % 2 == 1;
          for (int i = 0; i < rounds; i++) {
            try (Guard g = async ? mutex.lockAsync().join() : mutex.lock()) {
              unguarded++;
            }
          }
        });
    mutex.lock().unlock();
    assertEquals(workers * rounds, unguarded);
  }
}
