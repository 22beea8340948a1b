package dev.jeton;

import static dev.jeton.TestThreads.awaitLatch;
import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.internal.engine.WaitQueue;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What sets the two modes of the semaphore and of the read-write lock apart ({@link Fairness}): a
 * newcomer may take permits ahead of a woken waiter only with bounded barging, never permits that
 * are too few for the waiter at the head, and only until a waiter has waited past the bound.
 * Everything else the modes share is in {@link FifoSemaphoreTest} and {@link
 * FifoReadWriteLockTest}, run in both.
 */
class SemaphoreFairnessTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  private static final Fairness NEVER_STARVING = Fairness.boundedBarging(Duration.ofHours(1));

  private static Semaphore semaphore(int limit, Fairness fairness) {
    return Semaphore.builder().limit(limit).fairness(fairness).build();
  }

  @Test
  void defaults_semaphoreStrictFifo_readWriteLockBoundedBarging() throws Exception {
    assertThrows(NullPointerException.class, () -> Semaphore.builder().fairness(null));
    assertThrows(NullPointerException.class, () -> ReadWriteLock.builder().fairness(null));
    assertFalse(((FifoSemaphore) Semaphore.create(1)).barges(), "the semaphore's default");
    assertTrue(((FifoReadWriteLock) ReadWriteLock.create()).barges(), "the lock's default");
    assertFalse(
        ((FifoReadWriteLock) ReadWriteLock.builder().fairness(Fairness.strictFifo()).build())
            .barges());
    Semaphore strict = Semaphore.create(1);
    Waiter waiter = new Waiter(strict, 1);
    waiter.queueBehind(strict.acquire(1));
    assertTrue(strict.tryAcquire(1).isEmpty(), "handed to the waiter at the release");
    waiter.finish();
  }

  /**
   * A waiter takes tens of microseconds to wake, so a tryAcquire right after the release finds the
   * permit free, ahead of it, nearly every time; each round that the waiter wins is another chance.
   */
  @Test
  void boundedBarging_aNewcomerMayTakeThePermitsAheadOfTheWokenWaiter() throws Exception {
    Semaphore sem = semaphore(1, NEVER_STARVING);
    boolean barged = false;
    for (int round = 0; round < 100 && !barged; round++) {
      Waiter waiter = new Waiter(sem, 1);
      waiter.queueBehind(sem.acquire(1));
      Optional<Permit> newcomer = sem.tryAcquire(1);
      if (newcomer.isPresent()) {
        barged = true;
        assertEquals(1, sem.queueLength(), "the woken waiter is still queued, at the head");
        newcomer.get().release(); // the waiter is awake (WOKEN): it takes the permit next
      }
      waiter.finish();
    }
    assertTrue(barged, "a tryAcquire never got ahead of a woken waiter in 100 rounds");
  }

  /**
   * The head waits for three permits and one is free: no newcomer may take it, however long the
   * bound, or small requests would starve a large one forever.
   */
  @Test
  void boundedBarging_neverTakesPermitsTooFewForTheHead() throws Exception {
    Semaphore sem = semaphore(3, NEVER_STARVING);
    Permit two = sem.acquire(2);
    Permit one = sem.acquire(1);
    Waiter large = new Waiter(sem, 3);
    large.queue();
    one.release(); // one free of the three the head waits for
    assertTrue(sem.tryAcquire(1).isEmpty(), "took a permit that the head waits for");
    CompletableFuture<Permit> later = sem.acquireAsync(1);
    assertFalse(later.isDone(), "an asynchronous newcomer queues behind the head too");
    two.release(); // covers the head: woken, it takes all three
    large.awaitHolding();
    assertFalse(later.isDone(), "served after the head, not beside it");
    large.finish();
    done(later).release();
    assertEquals(3, sem.available());
  }

  /**
   * With a bound of one nanosecond, the waiter is past it as soon as a release fails to cover it:
   * the queue turns to handoffs, so the release that covers it grants it directly, and a tryAcquire
   * in between finds nothing.
   */
  @Test
  void boundedBarging_aWaiterPastTheBound_isHandedThePermitsAtTheRelease() throws Exception {
    Semaphore sem = semaphore(2, Fairness.boundedBarging(Duration.ofNanos(1)));
    Permit first = sem.acquire(1);
    Permit second = sem.acquire(1);
    Waiter waiter = new Waiter(sem, 2);
    waiter.queue();
    first.release(); // does not cover the head, which has waited past the bound: STARVING
    second.release(); // covers it: handed over
    assertTrue(sem.tryAcquire(1).isEmpty(), "handed to the starving waiter at the release");
    waiter.finish();
    sem.tryAcquire(2).orElseThrow().release(); // the queue served: barging again
  }

  /**
   * Regression: a head still parked when its wait passes the bound was woken by the release that
   * covered it, like any other, so a tryAcquire could take the permit ahead of it once more; the
   * release now hands it the permit.
   */
  @Test
  void boundedBarging_aParkedWaiterPastTheBound_isHandedThePermitsAtTheNextRelease()
      throws Exception {
    Duration bound = Duration.ofMillis(50);
    Semaphore sem = semaphore(1, Fairness.boundedBarging(bound));
    Permit held = sem.acquire(1);
    long queuedAt = System.nanoTime();
    Waiter waiter = new Waiter(sem, 1);
    waiter.queue();
    LockSupport.parkNanos(bound.toNanos() * 2 - (System.nanoTime() - queuedAt));
    held.release();
    assertTrue(sem.tryAcquire(1).isEmpty(), "handed to the waiter past the bound at the release");
    waiter.finish();
  }

  /**
   * A writer's unlock covers every reader queued behind it: they are let in together, in the
   * unlock, not woken one after another (when a writer arriving meanwhile could barge in first).
   */
  @Test
  void readWriteLock_boundedBarging_aWritersUnlockLetsTheQueuedReadersInTogether()
      throws Exception {
    ReadWriteLock rw = ReadWriteLock.builder().fairness(NEVER_STARVING).build();
    ReadWriteLock.WriteGuard writing = rw.write();
    CountDownLatch readersIn = new CountDownLatch(3);
    CountDownLatch leave = new CountDownLatch(1);
    List<Thread> readers = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      int queuedBefore = i;
      Thread reader =
          threads.start(
              () -> {
                try (Guard g = rw.read()) {
                  readersIn.countDown();
                  awaitLatch(leave);
                }
              });
      awaitTrue(() -> rw.queueLength() == queuedBefore + 1, "reader " + i + " to queue");
      awaitParked(reader);
      readers.add(reader);
    }
    writing.unlock();
    assertEquals(0, rw.queueLength(), "every reader granted in the unlock");
    assertTrue(rw.tryWrite().isEmpty(), "a writer got in ahead of the readers");
    awaitLatch(readersIn);
    leave.countDown();
    for (Thread reader : readers) {
      reader.join();
    }
    assertEquals(0, rw.readers());
  }

  /**
   * Regression guard: a woken head that takes its permits, with permits left that cover the next
   * one, must wake that one too; else it stays parked beside free permits until some later release,
   * which may never come.
   */
  @Test
  void boundedBarging_aHeadThatTakesItsPermits_wakesTheNextIfTheRestCoverIt() throws Exception {
    for (int round = 0; round < 20; round++) {
      Semaphore sem = semaphore(2, NEVER_STARVING);
      Permit a = sem.acquire(1);
      Permit b = sem.acquire(1);
      Waiter first = new Waiter(sem, 1);
      first.queue();
      Waiter second = new Waiter(sem, 1);
      second.queue();
      a.release(); // wakes the first
      b.release(); // the first is awake: this one only adds the permit
      first.awaitHolding();
      second.awaitHolding(); // the first keeps its permit: no release but its own is to come
      first.finish();
      second.finish();
      assertEquals(2, sem.available(), "round " + round);
    }
  }

  /**
   * The woken head gives up (interrupted) while its permit is free: it must pass the permit on to
   * the next in line, here an asynchronous request that has no thread of its own to look.
   */
  @Test
  void boundedBarging_aWokenHeadThatGivesUp_handsThePermitsOn() throws Exception {
    for (int round = 0; round < 20; round++) {
      Semaphore sem = semaphore(1, NEVER_STARVING);
      Permit held = sem.acquire(1);
      CompletableFuture<Throwable> head = new CompletableFuture<>();
      Thread headThread =
          threads.start(
              () -> {
                try {
                  sem.acquire(1).release(); // won the race with its interrupt
                  Thread.interrupted();
                  head.complete(null);
                } catch (InterruptedException e) {
                  head.complete(e);
                }
              });
      awaitTrue(() -> sem.queueLength() == 1, "the head to queue");
      awaitParked(headThread);
      CompletableFuture<Permit> next = sem.acquireAsync(1);
      held.release(); // wakes the head...
      headThread.interrupt(); // ...which most often sees this first, and withdraws
      done(head);
      done(next).release();
      assertEquals(1, sem.available(), "round " + round + ": " + sem);
      assertEquals(0, sem.queueLength());
    }
  }

  @Test
  void readWriteLock_boundedBarging_readersQueueBehindAWriterThatWaitsForReaders()
      throws Exception {
    ReadWriteLock rw = ReadWriteLock.create();
    Guard reading = rw.read();
    CompletableFuture<ReadWriteLock.WriteGuard> writer = rw.writeAsync();
    assertTrue(rw.tryRead().isEmpty(), "a reader got in past the queued writer");
    CompletableFuture<Guard> reader = rw.readAsync();
    reading.unlock();
    done(writer).unlock();
    done(reader).unlock();
    assertEquals(0, rw.readers());
  }

  /** Waits until {@code thread} is parked in the engine's wait, not on the queue's own lock. */
  private static void awaitParked(Thread thread) {
    awaitTrue(
        () ->
            thread.getState() == Thread.State.WAITING
                && LockSupport.getBlocker(thread) instanceof WaitQueue,
        "the waiter to park in the semaphore's wait");
  }

  /** A thread that queues for permits, and holds them until told to finish. */
  private final class Waiter {
    private final Semaphore sem;
    private final int permits;
    private final CountDownLatch holding = new CountDownLatch(1);
    private final CountDownLatch finish = new CountDownLatch(1);
    private Thread thread;

    Waiter(Semaphore sem, int permits) {
      this.sem = sem;
      this.permits = permits;
    }

    /** Starts the waiter and waits until it is parked in the queue. */
    void queue() {
      int queuedBefore = sem.queueLength();
      thread =
          threads.start(
              () -> {
                try (Permit p = sem.acquire(permits)) {
                  holding.countDown();
                  awaitLatch(finish);
                }
              });
      awaitTrue(() -> sem.queueLength() == queuedBefore + 1, "the waiter to queue");
      awaitParked(thread);
    }

    /** Queues the waiter behind {@code held}, then releases {@code held}. */
    void queueBehind(Permit held) {
      queue();
      held.release();
    }

    void awaitHolding() {
      awaitLatch(holding);
    }

    /** Waits until the waiter holds its permits, lets it release them, and waits for its end. */
    void finish() throws InterruptedException {
      awaitLatch(holding);
      finish.countDown();
      thread.join();
    }
  }
}
