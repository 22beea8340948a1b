package dev.jeton.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The behaviour every {@link Semaphore} implementation must show, one test per semantic point of
 * the interface's contract. An implementation's test class extends this and says how to make a
 * semaphore with a given limit.
 */
public abstract class SemaphoreContract {

  /** A new, open semaphore with the given limit, nothing held and no one queued. */
  protected abstract Semaphore newSemaphore(int limit);

  /**
   * How many rounds a repeated test runs, given the count used for the in-process semaphore. An
   * implementation whose every operation does I/O may run fewer; the test is the same.
   */
  protected int rounds(int inProcessRounds) {
    return inProcessRounds;
  }

  private final List<Thread> threads = new ArrayList<>();
  private final List<Throwable> threadFailures = new java.util.concurrent.CopyOnWriteArrayList<>();

  @AfterEach
  void stopThreads() throws InterruptedException {
    for (Thread t : threads) {
      t.interrupt();
      t.join(10_000);
    }
    if (!threadFailures.isEmpty()) {
      AssertionError e = new AssertionError("a test thread failed");
      threadFailures.forEach(e::addSuppressed);
      throw e;
    }
  }

  // ---------------------------------------------------------------- counting and weights

  @Test
  void acquire_grantsUpToTheLimit() throws Exception {
    Semaphore sem = newSemaphore(3);
    Permit a = sem.acquire(1);
    Permit b = sem.acquire(2);
    assertEquals(0, sem.available());
    assertTrue(sem.tryAcquire(1).isEmpty());
    a.release();
    b.release();
    assertEquals(3, sem.available());
  }

  @Test
  void acquire_isWeighted() throws Exception {
    Semaphore sem = newSemaphore(5);
    Permit three = sem.acquire(3);
    assertEquals(3, three.permits());
    assertTrue(sem.tryAcquire(3).isEmpty(), "3 + 3 exceeds 5");
    Optional<Permit> two = sem.tryAcquire(2);
    assertTrue(two.isPresent());
    assertEquals(0, sem.available());
    three.release();
    two.get().release();
    assertEquals(5, sem.available());
  }

  /**
   * The classic weighted case: a 4 and a 6 fill a limit of 10; three waiters of weight 1 all start
   * when either finishes.
   */
  @Test
  void weighted_threeSmallWaitersAllStartWhenEitherBigHolderFinishes() throws Exception {
    for (int finisher : new int[] {4, 6}) {
      Semaphore sem = newSemaphore(10);
      Permit four = sem.acquire(4);
      Permit six = sem.acquire(6);
      List<CompletableFuture<Permit>> ones = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        ones.add(sem.acquireAsync(1));
      }
      for (CompletableFuture<Permit> one : ones) {
        assertFalse(one.isDone(), "4 + 6 fill the limit");
      }
      Permit done = finisher == 4 ? four : six;
      Permit still = finisher == 4 ? six : four;
      done.release();
      for (CompletableFuture<Permit> one : ones) {
        one.get(10, TimeUnit.SECONDS).release(); // all three start, whichever finished
      }
      still.release();
      awaitTrue(() -> sem.available() == 10, "every permit to come back");
    }
  }

  @Test
  void release_isIdempotent() throws Exception {
    Semaphore sem = newSemaphore(2);
    Permit p = sem.acquire(2);
    p.release();
    p.release();
    p.close();
    assertEquals(2, sem.available(), "a double release must not inflate the count");
  }

  @Test
  void permit_worksWithTryWithResources() throws Exception {
    Semaphore sem = newSemaphore(1);
    try (Permit p = sem.acquire(1)) {
      assertEquals(0, sem.available());
    }
    assertEquals(1, sem.available());
  }

  // ---------------------------------------------------------------- FIFO

  @Test
  void fifo_largeRequestAtHeadHoldsBackSmallerOnes() throws Exception {
    Semaphore sem = newSemaphore(4);
    Permit held = sem.acquire(3);
    CompletableFuture<Permit> large = sem.acquireAsync(4);
    assertFalse(large.isDone());
    assertTrue(sem.tryAcquire(1).isEmpty(), "tryAcquire must not jump the queue");
    CompletableFuture<Permit> small = sem.acquireAsync(1);
    assertFalse(small.isDone(), "1 permit is free, but the large request is ahead");
    held.release();
    Permit largePermit = large.get(10, TimeUnit.SECONDS);
    assertFalse(small.isDone());
    largePermit.release();
    small.get(10, TimeUnit.SECONDS).release();
    assertEquals(4, sem.available());
  }

  @Test
  void fifo_blockingAndAsyncRequestsShareOneQueue() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> blocking = new CompletableFuture<>();
    start(() -> blocking.complete(sem.acquire(1)));
    awaitTrue(() -> sem.queueLength() == 1, "the blocking request to queue");
    CompletableFuture<Permit> async = sem.acquireAsync(1);
    held.release();
    Permit first = blocking.get(10, TimeUnit.SECONDS);
    assertFalse(async.isDone(), "the async request arrived second");
    first.release();
    async.get(10, TimeUnit.SECONDS).release();
    assertEquals(1, sem.available());
  }

  @Test
  void fifo_blockingRequestsAreGrantedInArrivalOrder() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    List<Integer> order = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      int id = i;
      start(
          () -> {
            try (Permit p = sem.acquire(1)) {
              order.add(id);
            }
          });
      awaitTrue(() -> sem.queueLength() == id + 1, "request " + id + " to queue");
    }
    held.release();
    awaitTrue(() -> order.size() == 5, "all five to run");
    assertEquals(List.of(0, 1, 2, 3, 4), order);
  }

  // ---------------------------------------------------------------- bad input

  @Test
  void badInput_failsAtOnceWithAMessageNamingTheValue() {
    Semaphore sem = newSemaphore(3);
    assertMessageContains("0", () -> sem.acquire(0));
    assertMessageContains("-1", () -> sem.acquire(-1));
    assertMessageContains("4", () -> sem.acquire(4));
    assertMessageContains("4", () -> sem.tryAcquire(4));
    assertMessageContains("0", () -> sem.acquireAsync(0));
    assertMessageContains("4", () -> sem.acquireAsync(4, Duration.ofSeconds(1)));
    assertMessageContains("-0.001", () -> sem.acquire(1, Duration.ofMillis(-1)));
    assertMessageContains("-0.001", () -> sem.acquireAsync(1, Duration.ofMillis(-1)));
    assertMessageContains("-1", () -> sem.setLimit(-1));
    assertMessageContains("0", () -> sem.callAsync(0, () -> CompletableFuture.completedFuture(1)));
    assertEquals(3, sem.available(), "bad input changes nothing");
    assertEquals(0, sem.queueLength());
  }

  // ---------------------------------------------------------------- timeouts and cancellation

  @Test
  void timeout_blockingRequestThrowsAndLeavesTheQueue() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ofMillis(50)));
    assertEquals(0, sem.queueLength());
    held.release();
    assertEquals(1, sem.available());
  }

  @Test
  void timeout_zeroOnAFreeSemaphoreSucceeds() throws Exception {
    Semaphore sem = newSemaphore(1);
    sem.acquire(1, Duration.ZERO).release();
    sem.acquireAsync(1, Duration.ZERO).get(10, TimeUnit.SECONDS).release();
    assertEquals(1, sem.available());
  }

  @Test
  void timeout_asyncRequestFailsAndLeavesTheQueue() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> f = sem.acquireAsync(1, Duration.ofMillis(50));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
    assertInstanceOf(TimeoutException.class, e.getCause());
    awaitTrue(() -> sem.queueLength() == 0, "the timed-out request to leave");
    held.release();
    assertEquals(1, sem.available());
  }

  @Test
  void cancel_queuedAsyncRequestIsWithdrawn() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> f = sem.acquireAsync(1);
    assertEquals(1, sem.queueLength());
    assertTrue(f.cancel(false));
    assertEquals(0, sem.queueLength());
    held.release();
    assertEquals(1, sem.available(), "the cancelled request must not take the permit");
  }

  @Test
  void cancel_ofTheHeadGrantsTheRequestsBehindIt() throws Exception {
    Semaphore sem = newSemaphore(2);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> head = sem.acquireAsync(2);
    CompletableFuture<Permit> behind = sem.acquireAsync(1);
    assertFalse(behind.isDone());
    head.cancel(false);
    behind.get(10, TimeUnit.SECONDS).release();
    held.release();
    assertEquals(2, sem.available());
  }

  @Test
  void cancel_completingExceptionallyWithdrawsToo() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> f = sem.acquireAsync(1);
    f.completeExceptionally(new IllegalStateException("caller gave up"));
    assertEquals(0, sem.queueLength());
    held.release();
    assertEquals(1, sem.available());
  }

  @Test
  void cancel_racingWithAGrantNeverLosesPermits() throws Exception {
    Semaphore sem = newSemaphore(1);
    for (int i = 0; i < rounds(2_000); i++) {
      Permit held = sem.acquire(1);
      CompletableFuture<Permit> f = sem.acquireAsync(1);
      Thread releaser = start(held::release);
      if (!f.cancel(false)) {
        f.get(10, TimeUnit.SECONDS).release(); // the grant won: we own the permit
      }
      releaser.join();
      awaitTrue(() -> sem.available() == 1, "the permit to come back on round " + i);
    }
    assertEquals(0, sem.queueLength());
  }

  @Test
  void interrupt_whileWaitingThrowsAndLeavesTheQueue() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    BlockedAcquire waiter = blockedAcquire(sem, 1);
    awaitTrue(() -> sem.queueLength() == 1, "the request to queue");
    waiter.thread.interrupt();
    assertInstanceOf(InterruptedException.class, waiter.failure());
    assertEquals(0, sem.queueLength());
    held.release();
    assertEquals(1, sem.available());
  }

  @Test
  void interrupt_beforeAcquireThrowsEvenWhenPermitsAreFree() {
    Semaphore sem = newSemaphore(1);
    Thread.currentThread().interrupt();
    try {
      assertThrows(InterruptedException.class, () -> sem.acquire(1));
    } finally {
      Thread.interrupted();
    }
    assertEquals(1, sem.available());
  }

  // ---------------------------------------------------------------- setLimit

  @Test
  void setLimit_growingAdmitsWaiters() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> f = sem.acquireAsync(1);
    sem.setLimit(2);
    assertEquals(2, sem.limit());
    f.get(10, TimeUnit.SECONDS).release();
    held.release();
    assertEquals(2, sem.available());
  }

  @Test
  void setLimit_shrinkingTakesEffectAsPermitsComeBack() throws Exception {
    Semaphore sem = newSemaphore(3);
    Permit a = sem.acquire(2);
    Permit b = sem.acquire(1);
    sem.setLimit(1);
    assertEquals(-2, sem.available(), "two permits too many are out");
    a.release();
    assertTrue(sem.tryAcquire(1).isEmpty());
    b.release();
    assertEquals(1, sem.available());
  }

  @Test
  void setLimit_belowAQueuedRequestFailsIt() throws Exception {
    Semaphore sem = newSemaphore(3);
    Permit held = sem.acquire(2);
    CompletableFuture<Permit> big = sem.acquireAsync(3);
    CompletableFuture<Permit> small = sem.acquireAsync(1);
    sem.setLimit(2);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> big.get(10, TimeUnit.SECONDS));
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    assertFalse(small.isDone());
    held.release();
    small.get(10, TimeUnit.SECONDS).release();
    assertEquals(2, sem.available());
  }

  @Test
  void setLimit_belowAQueuedBlockingRequestFailsIt() throws Exception {
    Semaphore sem = newSemaphore(2);
    Permit held = sem.acquire(1);
    BlockedAcquire waiter = blockedAcquire(sem, 2);
    awaitTrue(() -> sem.queueLength() == 1, "the request to queue");
    sem.setLimit(1);
    assertInstanceOf(IllegalArgumentException.class, waiter.failure());
    held.release();
  }

  // ---------------------------------------------------------------- close

  @Test
  void close_failsQueuedRequestsRefusesNewOnesAndKeepsHeldPermits() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> queued = sem.acquireAsync(1);
    BlockedAcquire blocked = blockedAcquire(sem, 1);
    awaitTrue(() -> sem.queueLength() == 2, "both requests to queue");
    sem.close();
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> queued.get(10, TimeUnit.SECONDS));
    assertInstanceOf(SemaphoreClosedException.class, e.getCause());
    assertInstanceOf(SemaphoreClosedException.class, blocked.failure());

    assertThrows(SemaphoreClosedException.class, () -> sem.acquire(1));
    assertThrows(SemaphoreClosedException.class, () -> sem.acquire(1, Duration.ofSeconds(1)));
    assertThrows(SemaphoreClosedException.class, () -> sem.tryAcquire(1));
    ExecutionException async =
        assertThrows(ExecutionException.class, () -> sem.acquireAsync(1).get(10, TimeUnit.SECONDS));
    assertInstanceOf(SemaphoreClosedException.class, async.getCause());

    CompletableFuture<Void> idle = sem.awaitIdle();
    assertFalse(idle.isDone(), "a held permit is still out");
    held.release();
    idle.get(10, TimeUnit.SECONDS);
    sem.close(); // twice is fine
  }

  @Test
  void close_refusesEvenWhenPermitsAreFree() {
    Semaphore sem = newSemaphore(2);
    sem.close();
    assertThrows(SemaphoreClosedException.class, () -> sem.acquire(1));
    assertThrows(SemaphoreClosedException.class, () -> sem.tryAcquire(1));
  }

  // ---------------------------------------------------------------- awaitIdle

  @Test
  void awaitIdle_completesAtOnceWhenNothingIsHeld() throws Exception {
    newSemaphore(2).awaitIdle().get(10, TimeUnit.SECONDS);
  }

  @Test
  void awaitIdle_completesWhenEveryPermitIsBack() throws Exception {
    Semaphore sem = newSemaphore(3);
    Permit a = sem.acquire(1);
    Permit b = sem.acquire(2);
    CompletableFuture<Void> idle = sem.awaitIdle();
    a.release();
    assertFalse(idle.isDone());
    b.release();
    idle.get(10, TimeUnit.SECONDS);
    assertEquals(3, sem.available(), "awaitIdle gives the permits straight back");
  }

  @Test
  void awaitIdle_queuesLikeARequestForTheWholeLimit() throws Exception {
    Semaphore sem = newSemaphore(2);
    Permit held = sem.acquire(1);
    CompletableFuture<Void> idle = sem.awaitIdle();
    assertTrue(sem.tryAcquire(1).isEmpty(), "requests after awaitIdle wait behind it");
    CompletableFuture<Permit> later = sem.acquireAsync(1);
    assertFalse(later.isDone());
    held.release();
    idle.get(10, TimeUnit.SECONDS);
    later.get(10, TimeUnit.SECONDS).release();
  }

  @Test
  void awaitIdle_cancelWithdrawsIt() throws Exception {
    Semaphore sem = newSemaphore(2);
    Permit held = sem.acquire(1);
    CompletableFuture<Void> idle = sem.awaitIdle();
    assertTrue(idle.cancel(false));
    assertEquals(0, sem.queueLength());
    sem.tryAcquire(1).orElseThrow().release();
    held.release();
  }

  // ---------------------------------------------------------------- memory consistency

  private int unguardedCounter; // deliberately plain: the semaphore must publish it

  @Test
  void memoryConsistency_writesBeforeReleaseAreSeenAfterAcquire() throws Exception {
    Semaphore sem = newSemaphore(1);
    int threadsCount = 4;
    int rounds = rounds(20_000);
    CountDownLatch done = new CountDownLatch(threadsCount);
    for (int t = 0; t < threadsCount; t++) {
      start(
          () -> {
            for (int i = 0; i < rounds; i++) {
              try (Permit p = sem.acquire(1)) {
                unguardedCounter++;
              }
            }
            done.countDown();
          });
    }
    assertTrue(done.await(60, TimeUnit.SECONDS));
    assertEquals(threadsCount * rounds, unguardedCounter);
  }

  // ---------------------------------------------------------------- task helpers

  @Test
  void call_runsTheTaskUnderPermitsAndReleasesThem() throws Exception {
    Semaphore sem = newSemaphore(2);
    int seen = sem.call(2, sem::available);
    assertEquals(0, seen);
    assertEquals(2, sem.available());
    assertThrows(
        IllegalStateException.class,
        () ->
            sem.call(
                1,
                () -> {
                  throw new IllegalStateException("boom");
                }));
    assertEquals(2, sem.available(), "released when the task throws");
  }

  @Test
  void callAsync_holdsPermitsUntilTheTaskStageCompletes() throws Exception {
    Semaphore sem = newSemaphore(1);
    CompletableFuture<String> work = new CompletableFuture<>();
    CompletableFuture<String> result = sem.callAsync(1, () -> work);
    assertEquals(0, sem.available());
    work.complete("done");
    assertEquals("done", result.get(10, TimeUnit.SECONDS));
    assertEquals(1, sem.available());
  }

  @Test
  void callAsync_cancelledWhileTheTaskRunsKeepsThePermitsUntilItFinishes() throws Exception {
    Semaphore sem = newSemaphore(1);
    CompletableFuture<String> work = new CompletableFuture<>();
    AtomicBoolean started = new AtomicBoolean();
    CompletableFuture<String> result = sem.callAsync(1, () -> startedWork(started, work));
    awaitTrue(started::get, "the task to start"); // a remote grant arrives a little later
    assertTrue(result.cancel(false));
    assertFalse(work.isDone(), "the task's own stage is not cancelled");
    assertEquals(0, sem.available(), "the task still runs, so its permit is still held");
    work.complete("late");
    assertEquals(1, sem.available());
  }

  @Test
  void callAsync_timedOutWhileTheTaskRunsKeepsThePermitsUntilItFinishes() throws Exception {
    Semaphore sem = newSemaphore(1);
    CompletableFuture<String> work = new CompletableFuture<>();
    AtomicBoolean started = new AtomicBoolean();
    CompletableFuture<String> result = sem.callAsync(1, () -> startedWork(started, work));
    awaitTrue(started::get, "the task to start");
    result.orTimeout(20, TimeUnit.MILLISECONDS);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> result.get(10, TimeUnit.SECONDS));
    assertInstanceOf(TimeoutException.class, e.getCause());
    assertEquals(0, sem.available());
    work.complete("late");
    assertEquals(1, sem.available());
  }

  @Test
  void callAsync_cancelledBeforeTheGrantNeverStartsTheTask() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    AtomicBoolean started = new AtomicBoolean();
    CompletableFuture<String> result =
        sem.callAsync(
            1,
            () -> {
              started.set(true);
              return CompletableFuture.completedFuture("x");
            });
    assertTrue(result.cancel(false));
    assertThrows(CancellationException.class, result::join);
    assertEquals(0, sem.queueLength());
    held.release();
    assertFalse(started.get());
    assertEquals(1, sem.available());
  }

  @Test
  void callAsync_releasesWhenTheTaskThrowsOrFails() throws Exception {
    Semaphore sem = newSemaphore(1);
    CompletableFuture<Object> thrown =
        sem.callAsync(
            1,
            () -> {
              throw new IllegalStateException("boom");
            });
    assertThrows(ExecutionException.class, () -> thrown.get(10, TimeUnit.SECONDS));
    CompletableFuture<Object> failed =
        sem.callAsync(1, () -> CompletableFuture.failedFuture(new IllegalStateException("boom")));
    assertThrows(ExecutionException.class, () -> failed.get(10, TimeUnit.SECONDS));
    assertEquals(1, sem.available());
  }

  @Test
  void wrapAsync_boundsConcurrentCalls() throws Exception {
    Semaphore sem = newSemaphore(2);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger peak = new AtomicInteger();
    List<CompletableFuture<Void>> gates = new ArrayList<>();
    Function<Integer, CompletableFuture<Integer>> wrapped =
        sem.wrapAsync(
            1,
            (Integer x) -> {
              peak.accumulateAndGet(running.incrementAndGet(), Math::max);
              CompletableFuture<Void> gate = new CompletableFuture<>();
              synchronized (gates) {
                gates.add(gate);
              }
              return gate.thenApply(
                  v -> {
                    running.decrementAndGet();
                    return x * 2;
                  });
            });
    List<CompletableFuture<Integer>> results = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      results.add(wrapped.apply(i));
    }
    for (int round = 0; round < 3; round++) {
      // Grants may reach their waiters a little after the release (a polling implementation).
      awaitTrue(
          () -> {
            synchronized (gates) {
              return gates.size() == 2;
            }
          },
          "two calls to run in round " + round);
      List<CompletableFuture<Void>> open;
      synchronized (gates) {
        open = new ArrayList<>(gates);
        gates.clear();
      }
      assertEquals(2, open.size());
      open.forEach(g -> g.complete(null));
    }
    for (int i = 0; i < 6; i++) {
      assertEquals(i * 2, results.get(i).get(10, TimeUnit.SECONDS));
    }
    assertEquals(2, peak.get());
  }

  // ---------------------------------------------------------------- helpers

  private static CompletableFuture<String> startedWork(
      AtomicBoolean started, CompletableFuture<String> work) {
    started.set(true);
    return work;
  }

  /** Something a test thread runs; may throw anything. */
  protected interface Body {
    void run() throws Exception;
  }

  /** Starts a daemon thread that runs {@code body}; it is interrupted and joined after the test. */
  protected Thread start(Body body) {
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

  /** A thread blocked in {@code acquire}, and what that call threw. */
  protected static final class BlockedAcquire {
    final Thread thread;
    final CompletableFuture<Throwable> thrown;

    BlockedAcquire(Thread thread, CompletableFuture<Throwable> thrown) {
      this.thread = thread;
      this.thrown = thrown;
    }

    /** What the acquire threw; fails the test if it returned a permit instead. */
    Throwable failure() throws Exception {
      return thrown.get(10, TimeUnit.SECONDS);
    }
  }

  /** Starts a thread that calls {@code acquire(permits)}, which the test expects to fail. */
  protected BlockedAcquire blockedAcquire(Semaphore sem, int permits) {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread thread =
        start(
            () -> {
              try {
                sem.acquire(permits).release();
                thrown.completeExceptionally(new AssertionError("the acquire succeeded"));
              } catch (Exception e) {
                thrown.complete(e);
              }
            });
    return new BlockedAcquire(thread, thrown);
  }

  /** Waits until {@code condition} holds, failing after 10 seconds with what was awaited. */
  protected static void awaitTrue(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.onSpinWait();
      Thread.yield();
    }
  }

  private static void assertMessageContains(String expected, Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    String message = String.valueOf(e.getMessage());
    assertTrue(
        message.contains(expected), () -> "message '" + message + "' should name " + expected);
  }
}
