package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.contract.SemaphoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The in-process semaphore: the shared contract, and what only it has, in both modes (what sets
 * them apart is in {@link SemaphoreFairnessTest}).
 */
@ParameterizedClass
@MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
class FifoSemaphoreTest extends SemaphoreContract {
  @Parameter Fairness fairness;

  @Override
  protected Semaphore newSemaphore(int limit) {
    return Semaphore.builder().limit(limit).fairness(fairness).build();
  }

  private Semaphore.Builder builder() {
    return Semaphore.builder().fairness(fairness);
  }

  @Test
  void builder_rejectsBadSettingsAtOnce() {
    assertThrows(IllegalArgumentException.class, () -> Semaphore.builder().limit(-1));
    assertThrows(IllegalArgumentException.class, () -> Semaphore.builder().name(" "));
    assertThrows(IllegalArgumentException.class, () -> Semaphore.create(-5));
    IllegalStateException noLimit =
        assertThrows(IllegalStateException.class, () -> Semaphore.builder().build());
    assertTrue(noLimit.getMessage().contains("limit"));
  }

  @Test
  void limitZero_refusesEveryRequest() {
    Semaphore sem = Semaphore.create(0);
    assertThrows(IllegalArgumentException.class, () -> sem.acquire(1));
    assertEquals(0, sem.available());
  }

  @Test
  void toString_showsNameLimitAvailableAndQueue() throws Exception {
    Semaphore sem = builder().name("db").limit(3).build();
    Permit p = sem.acquire(3);
    CompletableFuture<Permit> queued = sem.acquireAsync(1);
    assertEquals("Semaphore[name=db, limit=3, available=0, queued=1]", sem.toString());
    queued.cancel(false);
    p.release();
    sem.close();
    assertEquals("Semaphore[name=db, limit=3, available=3, queued=0, closed]", sem.toString());
    assertEquals("Semaphore[limit=2, available=2, queued=0]", Semaphore.create(2).toString());
  }

  /**
   * Regression: deliveries share one trampoline per thread across all semaphores, and the outer
   * loop delivered a waiter of another semaphore as if it were its own, so a grant of {@code b}
   * came back as a permit of {@code a} (found by KeyedSemaphoreGlobalLincheckTest).
   */
  @Test
  void nestedDelivery_ofAnotherSemaphoresWaiter_grantsThatSemaphoresPermit() throws Exception {
    Semaphore a = builder().name("a").limit(1).build();
    Semaphore b = builder().name("b").limit(2).build();
    Permit heldA = a.acquire(1);
    Permit heldB = b.acquire(2);
    CompletableFuture<Permit> waitingForB = b.acquireAsync(2);
    CompletableFuture<Permit> waitingForA = a.acquireAsync(1);
    var unused = waitingForA.thenAccept(permit -> heldB.release()); // runs inside a's delivery
    heldA.release();
    Permit fromB = waitingForB.get(5, TimeUnit.SECONDS);
    assertEquals(0, b.available(), "b's waiter holds b's permits");
    fromB.release();
    assertEquals(2, b.available());
    waitingForA.join().release();
    assertEquals(1, a.available(), "a's count is untouched by b's permits");
  }

  @Test
  void messages_nameTheSemaphore() throws Exception {
    Semaphore sem = builder().name("uploads").limit(1).build();
    Permit held = sem.acquire(1);
    TimeoutException e =
        assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ofMillis(10)));
    assertTrue(e.getMessage().contains("uploads"), e.getMessage());
    held.release();
    sem.close();
    SemaphoreClosedException closed =
        assertThrows(SemaphoreClosedException.class, () -> sem.acquire(1));
    assertTrue(closed.getMessage().contains("uploads"), closed.getMessage());
  }

  @Test
  void stats_areEmptyWhenOff() {
    assertTrue(Semaphore.create(1).stats().isEmpty());
  }

  @Test
  void stats_countEveryOutcome() throws Exception {
    Semaphore sem = builder().limit(2).statistics(true).build();
    Permit a = sem.acquire(2); // acquired 1
    assertTrue(sem.tryAcquire(1).isEmpty()); // rejected 1
    assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ofMillis(5))); // timed out
    sem.acquireAsync(1).cancel(false); // cancelled
    CompletableFuture<Permit> waiting = sem.acquireAsync(2);
    CompletableFuture<Permit> alsoWaiting = sem.acquireAsync(1);
    Thread.sleep(5); // so that the queued requests wait a measurable time
    a.release(); // released 1; grants `waiting` (acquired 2)
    waiting.get(10, TimeUnit.SECONDS).release(); // released 2; grants alsoWaiting (acquired 3)
    alsoWaiting.get(10, TimeUnit.SECONDS).release(); // released 3

    SemaphoreStats stats = sem.stats().orElseThrow();
    assertEquals(3, stats.acquired());
    assertEquals(3, stats.released());
    assertEquals(1, stats.rejected());
    assertEquals(1, stats.timedOut());
    assertEquals(1, stats.cancelled());
    assertEquals(0, stats.queueLength());
    assertEquals(2, stats.peakQueueLength());
    assertTrue(stats.maxWait().compareTo(Duration.ofMillis(5)) >= 0, stats.toString());
    assertTrue(stats.totalWait().compareTo(stats.maxWait()) >= 0, stats.toString());
  }

  @Test
  void completionExecutor_completesFuturesOnTheExecutor() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "completions"));
    try {
      Semaphore sem = builder().limit(1).completionExecutor(executor).build();
      Permit held = sem.acquire(1);
      AtomicReference<String> completedOn = new AtomicReference<>();
      CompletableFuture<Void> seen =
          sem.acquireAsync(1)
              .thenAccept(
                  p -> {
                    completedOn.set(Thread.currentThread().getName());
                    p.release();
                  });
      held.release();
      seen.get(10, TimeUnit.SECONDS);
      assertEquals("completions", completedOn.get());
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void completionExecutor_thatRejectsFallsBackToTheReleasingThread() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    executor.shutdown();
    Semaphore sem = builder().limit(1).completionExecutor(executor).build();
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> f = sem.acquireAsync(1);
    held.release();
    assertTrue(f.isDone(), "completed inline when the executor rejected it");
    f.join().release();
  }

  @Test
  void completionExecutor_thatThrowsStillDeliversTheGrant() throws Exception {
    Semaphore sem =
        builder()
            .limit(1)
            .completionExecutor(
                task -> {
                  throw new IllegalStateException("broken executor");
                })
            .build();
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> f = sem.acquireAsync(1);
    held.release();
    assertTrue(f.isDone(), "delivered inline rather than stranded");
    f.join().release();
    assertEquals(1, sem.available());
  }

  @Test
  void completion_runsOutsideTheSemaphoresLock() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit held = sem.acquire(1);
    AtomicReference<Boolean> otherThreadGotIn = new AtomicReference<>();
    CompletableFuture<Void> callback =
        sem.acquireAsync(1)
            .thenAccept(
                permit -> {
                  // setLimit needs the lock: if the callback ran under it, this would block.
                  Thread other = new Thread(() -> sem.setLimit(1));
                  other.start();
                  try {
                    other.join(10_000);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  otherThreadGotIn.set(!other.isAlive());
                  permit.release();
                });
    held.release(); // completes the future, and runs the callback, on this thread
    callback.get(30, TimeUnit.SECONDS);
    assertTrue(otherThreadGotIn.get(), "another thread could take the lock during the callback");
  }

  @Test
  void asyncChain_ofAMillionAcquireReleaseStepsRunsInConstantStack() throws Exception {
    Semaphore sem = newSemaphore(1);
    Permit first = sem.acquire(1);
    int steps = 1_000_000;
    AtomicInteger ran = new AtomicInteger();
    List<CompletableFuture<Void>> chain = new ArrayList<>(steps);
    for (int i = 0; i < steps; i++) {
      chain.add(
          sem.acquireAsync(1)
              .thenAccept(
                  p -> {
                    ran.incrementAndGet();
                    p.release(); // grants, and so completes, the next future in the queue
                  }));
    }
    assertEquals(steps, sem.queueLength());
    first.release(); // on a 1 MB test stack: recursion would overflow long before a million
    CompletableFuture.allOf(chain.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    assertEquals(steps, ran.get());
    assertEquals(1, sem.available());
  }
}
