package dev.jeton;

import static dev.jeton.TestThreads.GUARD_SECONDS;
import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static dev.jeton.TestThreads.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.ReadWriteLock.WriteGuard;
import dev.jeton.TestThreads.Blocked;
import dev.jeton.TestThreads.CancelRace;
import dev.jeton.TestThreads.HeldAndQueued;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The in-process read-write lock: one test per point of {@link ReadWriteLock}'s contract, in both
 * modes, and one named test for each bug that other read-write locks shipped.
 */
@ParameterizedClass
@MethodSource("dev.jeton.FifoMutexStressTest#fairnesses")
class FifoReadWriteLockTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  @Parameter Fairness fairness;

  private ReadWriteLock newLock() {
    return ReadWriteLock.builder().fairness(fairness).build();
  }

  // ---------------------------------------------------------------- sharing and exclusion

  @Test
  void read_manyReadersHoldTheLockAtOnce() throws Exception {
    ReadWriteLock rw = newLock();
    Guard a = rw.read();
    Guard b = rw.readAsync().join();
    Guard c = rw.tryRead().orElseThrow();
    Guard d = rw.read(Duration.ZERO);
    assertEquals(4, rw.readers());
    assertFalse(rw.isWriteLocked());
    a.unlock();
    b.unlock();
    c.unlock();
    d.unlock();
    assertEquals(0, rw.readers());
  }

  @Test
  void read_manyBlockedThreadsAllEnterTogether() throws Exception {
    ReadWriteLock rw = newLock();
    int readers = 5;
    CountDownLatch allIn = new CountDownLatch(readers);
    CountDownLatch leave = new CountDownLatch(1);
    for (int i = 0; i < readers; i++) {
      threads.start(
          () -> {
            try (Guard g = rw.read()) {
              allIn.countDown();
              leave.await();
            }
          });
    }
    assertTrue(allIn.await(GUARD_SECONDS, TimeUnit.SECONDS), "every reader in at once");
    assertEquals(readers, rw.readers());
    leave.countDown();
    awaitTrue(() -> rw.readers() == 0, "the readers to leave");
  }

  @Test
  void write_excludesReadersAndWriters() throws Exception {
    ReadWriteLock rw = newLock();
    WriteGuard w = rw.write();
    assertTrue(rw.isWriteLocked());
    assertEquals(0, rw.readers());
    assertTrue(rw.tryRead().isEmpty());
    assertTrue(rw.tryWrite().isEmpty());
    assertThrows(TimeoutException.class, () -> rw.read(Duration.ofMillis(10)));
    assertThrows(TimeoutException.class, () -> rw.write(Duration.ofMillis(10)));
    w.unlock();
    assertFalse(rw.isWriteLocked());
    Guard r = rw.read();
    assertTrue(rw.tryWrite().isEmpty(), "a reader keeps writers out");
    assertThrows(TimeoutException.class, () -> rw.write(Duration.ofMillis(10)));
    r.unlock();
    rw.tryWrite().orElseThrow().unlock();
    assertFalse(rw.isWriteLocked());
    assertEquals(0, rw.queueLength());
  }

  // ---------------------------------------------------------------- fairness

  @Test
  void fifo_queuedWriterHoldsBackLaterReaders() throws Exception {
    ReadWriteLock rw = newLock();
    Guard reader = rw.read();
    CompletableFuture<WriteGuard> writer = rw.writeAsync();
    CompletableFuture<Guard> lateReader = rw.readAsync();
    assertFalse(writer.isDone());
    assertFalse(lateReader.isDone(), "a reader holds it, but a writer is queued ahead");
    assertTrue(rw.tryRead().isEmpty(), "tryRead never jumps the queued writer");
    reader.unlock();
    WriteGuard w = done(writer);
    assertFalse(lateReader.isDone());
    w.unlock();
    done(lateReader).unlock();
    assertEquals(0, rw.readers());
  }

  @Test
  void fifo_readersBehindAWriterAllEnterTogether_upToTheNextWriter() throws Exception {
    ReadWriteLock rw = newLock();
    WriteGuard first = rw.write();
    CompletableFuture<Guard> r1 = rw.readAsync();
    CompletableFuture<Guard> r2 = new CompletableFuture<>();
    threads.start(() -> r2.complete(rw.read())); // a blocking reader in the same run
    awaitTrue(() -> rw.queueLength() == 2, "the blocking reader to queue");
    CompletableFuture<Guard> r3 = rw.readAsync();
    CompletableFuture<WriteGuard> w2 = rw.writeAsync();
    CompletableFuture<Guard> r4 = rw.readAsync();
    assertEquals(5, rw.queueLength());
    first.unlock();
    Guard g1 = done(r1);
    Guard g2 = done(r2);
    Guard g3 = done(r3);
    assertEquals(3, rw.readers(), "the whole run of readers entered");
    assertFalse(w2.isDone());
    assertFalse(r4.isDone(), "the reader behind the next writer waits for it");
    assertEquals(2, rw.queueLength());
    g1.unlock();
    g2.unlock();
    assertFalse(w2.isDone());
    g3.unlock();
    WriteGuard second = done(w2);
    assertFalse(r4.isDone());
    second.unlock();
    done(r4).unlock();
    assertEquals(0, rw.readers());
  }

  @Test
  void tryReadAndTryWrite_neverJumpTheQueue() throws Exception {
    ReadWriteLock rw = newLock();
    Guard reader = rw.read();
    CompletableFuture<WriteGuard> writer = rw.writeAsync();
    assertTrue(rw.tryRead().isEmpty(), "readers hold it, but a writer is queued");
    reader.unlock();
    WriteGuard w = writer.join();
    CompletableFuture<Guard> queuedReader = rw.readAsync();
    CompletableFuture<WriteGuard> queuedWriter = rw.writeAsync();
    w.unlock(); // the reader enters; the writer stays queued
    Guard r = done(queuedReader);
    assertTrue(rw.tryRead().isEmpty(), "a reader could share, but the writer is queued");
    r.unlock(); // the writer enters
    assertTrue(rw.tryWrite().isEmpty());
    done(queuedWriter).unlock();
    CompletableFuture<Guard> headReader = rw.readAsync();
    assertTrue(headReader.isDone(), "free and no one queued");
    CompletableFuture<WriteGuard> waitingWriter = rw.writeAsync();
    headReader.join().unlock();
    assertTrue(rw.tryWrite().isEmpty(), "the queued writer got it first");
    waitingWriter.join().unlock();
    rw.tryWrite().orElseThrow().unlock();
    rw.tryRead().orElseThrow().unlock();
  }

  // ---------------------------------------------------------------- the bugs other locks shipped

  /**
   * A writer queued behind a reader holds back the readers behind it; when it times out, they must
   * come in at once, not when the reader ahead unlocks. The timeout is on the clock, so if it
   * expires before the reader queues behind it, the round proves nothing and runs again with a
   * longer timeout.
   */
  @Test
  void writerGivingUp_byTimeout_letsQueuedReadersInAtOnce() throws Exception {
    ReadWriteLock rw = newLock();
    Guard reader = rw.read();
    for (long millis = 50; ; millis *= 2) {
      Duration timeout = Duration.ofMillis(millis);
      CompletableFuture<Throwable> writerFailed =
          threads.startBlocked(() -> rw.write(timeout).unlock()).thrown();
      awaitTrue(() -> rw.queueLength() == 1 || writerFailed.isDone(), "the writer to queue");
      CompletableFuture<Guard> behind = rw.readAsync();
      if (behind.isDone()) { // the writer had already gone: try again, with more time
        assertInstanceOf(TimeoutException.class, done(writerFailed));
        behind.join().unlock();
        assertTrue(millis < 60_000, "the reader never queued behind the writer");
        continue;
      }
      assertInstanceOf(TimeoutException.class, done(writerFailed));
      // The withdrawal grants the readers behind before the writer's thread throws.
      assertTrue(behind.isDone(), "the reader behind the timed-out writer got in at once");
      assertEquals(2, rw.readers());
      behind.join().unlock();
      break;
    }
    reader.unlock();
    assertEquals(0, rw.readers());
    assertEquals(0, rw.queueLength());
  }

  @Test
  void writerGivingUp_byAsyncTimeout_letsQueuedReadersInAtOnce() throws Exception {
    ReadWriteLock rw = newLock();
    Guard reader = rw.read();
    for (long millis = 50; ; millis *= 2) {
      CompletableFuture<WriteGuard> writer = rw.writeAsync(Duration.ofMillis(millis));
      CompletableFuture<Guard> behind = rw.readAsync();
      if (behind.isDone()) { // the writer's timer fired first: try again, with more time
        behind.join().unlock();
        assertTrue(millis < 60_000, "the reader never queued behind the writer");
        continue;
      }
      assertInstanceOf(TimeoutException.class, failureOf(writer));
      // The timer's thread completes the writer's future, then withdraws it and grants.
      done(behind).unlock();
      break;
    }
    assertEquals(1, rw.readers(), "the first reader still holds, and no one else");
    reader.unlock();
    assertEquals(0, rw.queueLength());
  }

  @Test
  void writerGivingUp_byCancel_letsQueuedReadersInAtOnce() throws Exception {
    ReadWriteLock rw = newLock();
    Guard reader = rw.read();
    CompletableFuture<WriteGuard> writer = rw.writeAsync();
    CompletableFuture<Guard> behind1 = rw.readAsync();
    CompletableFuture<Guard> behind2 = rw.readAsync();
    CompletableFuture<WriteGuard> laterWriter = rw.writeAsync();
    assertFalse(behind1.isDone());
    assertTrue(writer.cancel(false));
    assertTrue(behind1.isDone() && behind2.isDone(), "the readers behind entered at once");
    assertEquals(3, rw.readers());
    assertFalse(laterWriter.isDone(), "up to the next writer");
    reader.unlock();
    behind1.join().unlock();
    behind2.join().unlock();
    done(laterWriter).unlock();
    assertTrue(writer.isCancelled());
    assertEquals(0, rw.readers());
    assertFalse(rw.isWriteLocked());
  }

  @Test
  void writerGivingUp_byInterrupt_letsQueuedReadersInAtOnce() throws Exception {
    ReadWriteLock rw = newLock();
    Guard reader = rw.read();
    Blocked writer = threads.startBlocked(() -> rw.write().unlock());
    awaitTrue(() -> rw.queueLength() == 1, "the writer to queue");
    CompletableFuture<Guard> behind = rw.readAsync();
    assertFalse(behind.isDone());
    writer.thread().interrupt();
    assertInstanceOf(InterruptedException.class, done(writer.thrown()));
    assertTrue(behind.isDone(), "the reader behind entered as the writer left");
    assertEquals(2, rw.readers());
    behind.join().unlock();
    reader.unlock();
    assertEquals(0, rw.readers());
    assertEquals(0, rw.queueLength());
  }

  @Test
  void cancelledWaiter_neverEndsUpHoldingTheLock() throws Exception {
    ReadWriteLock rw = newLock();
    WriteGuard held = rw.write();
    CompletableFuture<Guard> reader = rw.readAsync();
    CompletableFuture<WriteGuard> writer = rw.writeAsync();
    CompletableFuture<Guard> timedReader = rw.readAsync(Duration.ofMillis(5));
    assertTrue(reader.cancel(false));
    assertTrue(writer.completeExceptionally(new IllegalStateException("gave up")));
    failureOf(timedReader);
    held.unlock();
    assertFalse(rw.isWriteLocked(), "no cancelled writer holds it: " + rw);
    assertEquals(0, rw.readers(), "no cancelled reader holds it: " + rw);
    awaitTrue(() -> rw.queueLength() == 0, "the timed-out reader to leave");
    rw.tryWrite().orElseThrow().unlock();
  }

  /**
   * A cancel racing with the unlock that grants that very request: whichever wins, the lock is
   * handed on. Both kinds race: a writer with readers behind it, and a reader with a writer behind
   * it.
   */
  @Test
  void grantRacingWithCancel_isNeverLost() throws Exception {
    ReadWriteLock rw = newLock();
    TestThreads.raceCancelsWithGrants(
        2_000,
        round -> {
          boolean writerRaces = round % 2 == 0;
          WriteGuard held = rw.write();
          return writerRaces
              ? new CancelRace(held, rw.writeAsync(), rw.readAsync())
              : new CancelRace(held, rw.readAsync(), rw.writeAsync());
        },
        (next, round) -> {
          boolean writerRaces = round % 2 == 0;
          assertEquals(0, rw.queueLength(), "round " + round);
          assertEquals(writerRaces ? 1 : 0, rw.readers(), "round " + round + ": " + rw);
          assertEquals(!writerRaces, rw.isWriteLocked(), "round " + round + ": " + rw);
          next.unlock();
          assertEquals(0, rw.readers(), "round " + round + ": " + rw);
          assertFalse(rw.isWriteLocked(), "round " + round + ": " + rw);
        });
  }

  // ---------------------------------------------------------------- downgrading

  @Test
  void downgrade_isAtomic_noWriterInBetweenEvenWithAWriterQueuedRightBehind() throws Exception {
    ReadWriteLock rw = newLock();
    WriteGuard w = rw.write();
    CompletableFuture<WriteGuard> writerBehind = rw.writeAsync();
    Guard r = w.downgrade();
    assertFalse(writerBehind.isDone(), "the queued writer must not get in");
    assertFalse(rw.isWriteLocked());
    assertEquals(1, rw.readers());
    assertTrue(rw.tryWrite().isEmpty());
    r.unlock();
    WriteGuard next = done(writerBehind);
    next.unlock();
    assertEquals(0, rw.readers());
  }

  /**
   * Downgrades while other threads try and queue for the write lock: a writer that gets in while
   * the downgraded read lock is held, or while another writer is in, is counted.
   */
  @Test
  void downgrade_racingWithWriters_neverLetsOneInWhileTheReadLockIsHeld() throws Exception {
    ReadWriteLock rw = newLock();
    AtomicBoolean readHeld = new AtomicBoolean();
    AtomicBoolean writing = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    Queue<String> violations = new ConcurrentLinkedQueue<>();
    TestThreads.Body contender =
        () -> {
          while (!stop.get()) {
            WriteGuard g = rw.tryWrite().orElse(null);
            if (g == null) {
              g = rw.writeAsync().join();
            }
            if (readHeld.get() || !writing.compareAndSet(false, true)) {
              violations.add("a writer got in beside a reader or a writer");
            }
            writing.set(false);
            g.unlock();
          }
        };
    Thread a = threads.start(contender);
    Thread b = threads.start(contender);
    for (int i = 0; i < 2_000; i++) {
      WriteGuard w = rw.write();
      if (!writing.compareAndSet(false, true)) {
        violations.add("the downgrader got in beside a writer");
      }
      writing.set(false);
      Guard r = w.downgrade();
      readHeld.set(true);
      LockSupport.parkNanos(1_000); // hold the read lock while the contenders try
      readHeld.set(false);
      r.unlock();
    }
    stop.set(true);
    a.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
    b.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
    assertEquals(List.of(), List.copyOf(violations));
    assertEquals(0, rw.readers());
    assertFalse(rw.isWriteLocked());
  }

  @Test
  void downgrade_letsTheReadersQueuedAtTheHeadIn() throws Exception {
    ReadWriteLock rw = newLock();
    WriteGuard w = rw.write();
    CompletableFuture<Guard> r1 = rw.readAsync();
    CompletableFuture<Guard> r2 = rw.readAsync();
    CompletableFuture<WriteGuard> w2 = rw.writeAsync();
    CompletableFuture<Guard> r3 = rw.readAsync();
    Guard mine = w.downgrade();
    assertTrue(r1.isDone() && r2.isDone(), "the readers at the head entered");
    assertEquals(3, rw.readers());
    assertFalse(w2.isDone());
    assertFalse(r3.isDone(), "behind the next writer");
    mine.unlock();
    r1.join().unlock();
    r2.join().unlock();
    done(w2).unlock();
    done(r3).unlock();
    assertEquals(0, rw.readers());
  }

  @Test
  void downgrade_twiceOrAfterUnlock_throwsIllegalState_andUnlockAfterItDoesNothing()
      throws Exception {
    ReadWriteLock rw = newLock();
    WriteGuard w = rw.write();
    Guard r = w.downgrade();
    assertThrows(IllegalStateException.class, w::downgrade);
    w.unlock(); // unlocked by the downgrade already: does nothing
    w.close();
    assertEquals(1, rw.readers(), "the read lock is still held");
    r.unlock();
    r.unlock();
    assertEquals(0, rw.readers());
    WriteGuard unlocked = rw.write();
    unlocked.unlock();
    assertThrows(IllegalStateException.class, unlocked::downgrade);
    assertEquals(0, rw.readers());
    assertFalse(rw.isWriteLocked());
  }

  // ---------------------------------------------------------------- inspection

  @Test
  void readersIsWriteLockedAndQueueLength_followTheHoldersAndWaiters() throws Exception {
    ReadWriteLock rw = newLock();
    assertEquals(0, rw.readers());
    assertFalse(rw.isWriteLocked());
    assertEquals(0, rw.queueLength());
    Guard r1 = rw.read();
    Guard r2 = rw.read();
    assertEquals(2, rw.readers());
    CompletableFuture<WriteGuard> w = rw.writeAsync();
    CompletableFuture<Guard> r3 = rw.readAsync();
    assertEquals(2, rw.queueLength());
    r1.unlock();
    r2.unlock();
    WriteGuard wg = w.join();
    assertTrue(rw.isWriteLocked());
    assertEquals(0, rw.readers());
    assertEquals(1, rw.queueLength());
    wg.unlock();
    assertEquals(1, rw.readers());
    assertEquals(0, rw.queueLength());
    r3.join().unlock();
    assertEquals(0, rw.readers());
  }

  @Test
  void toString_showsNameStateAndQueue() throws Exception {
    ReadWriteLock rw = ReadWriteLock.builder().fairness(fairness).name("cache").build();
    assertEquals("ReadWriteLock[name=cache, readers=0, queued=0]", rw.toString());
    Guard r = rw.read();
    CompletableFuture<WriteGuard> w = rw.writeAsync();
    assertEquals("ReadWriteLock[name=cache, readers=1, queued=1]", rw.toString());
    r.unlock();
    WriteGuard wg = w.join();
    assertEquals("ReadWriteLock[name=cache, write-locked, queued=0]", rw.toString());
    wg.unlock();
    assertEquals("ReadWriteLock[readers=0, queued=0]", ReadWriteLock.create().toString());
  }

  @Test
  void builder_blankName_throwsIllegalArgumentException() {
    assertThrows(IllegalArgumentException.class, () -> ReadWriteLock.builder().name(""));
    assertThrows(IllegalArgumentException.class, () -> ReadWriteLock.builder().name(" "));
  }

  @Test
  void completionExecutor_completesFuturesOnTheExecutor() throws Exception {
    String completedOn =
        TestThreads.completingThread(
            "rw-completions",
            executor -> {
              ReadWriteLock rw =
                  ReadWriteLock.builder().fairness(fairness).completionExecutor(executor).build();
              return new HeldAndQueued(rw.write(), rw.readAsync());
            });
    assertEquals("rw-completions", completedOn);
  }

  // ---------------------------------------------------------------- tasks

  @Test
  void callReadAndCallWrite_holdTheLockForTheTask() throws Exception {
    ReadWriteLock rw = newLock();
    assertEquals(1, rw.callRead(rw::readers));
    assertTrue(rw.callWrite(rw::isWriteLocked));
    assertThrows(
        IllegalStateException.class,
        () ->
            rw.callWrite(
                () -> {
                  throw new IllegalStateException("boom");
                }));
    assertFalse(rw.isWriteLocked(), "unlocked when the task throws");
    assertEquals(0, rw.readers());
  }

  @Test
  void callReadAsyncAndCallWriteAsync_holdTheLockUntilTheStageCompletes() throws Exception {
    ReadWriteLock rw = newLock();
    CompletableFuture<String> reading = new CompletableFuture<>();
    CompletableFuture<String> read = rw.callReadAsync(() -> reading);
    assertEquals(1, rw.readers());
    CompletableFuture<String> writing = new CompletableFuture<>();
    CompletableFuture<String> write = rw.callWriteAsync(() -> writing);
    assertEquals(1, rw.queueLength(), "the writer waits for the reader's stage");
    reading.complete("r");
    assertEquals("r", done(read));
    assertTrue(rw.isWriteLocked());
    writing.complete("w");
    assertEquals("w", done(write));
    assertFalse(rw.isWriteLocked());
  }

  @Test
  void callWriteAsync_cancelledBeforeTheGrant_neverRunsTheTask() throws Exception {
    ReadWriteLock rw = newLock();
    Guard reader = rw.read();
    AtomicBoolean ran = TestThreads.cancelledBeforeTheGrant(rw::callWriteAsync);
    assertEquals(0, rw.queueLength());
    reader.unlock();
    assertFalse(ran.get());
    assertFalse(rw.isWriteLocked());
  }

  // ---------------------------------------------------------------- timeouts and interrupts

  @Test
  void timedRequests_ofBothKinds_throwOrFailWithTimeoutAndLeaveTheQueue() throws Exception {
    ReadWriteLock rw = ReadWriteLock.builder().fairness(fairness).name("cache").build();
    WriteGuard w = rw.write();
    TimeoutException readTimeout =
        assertThrows(TimeoutException.class, () -> rw.read(Duration.ofMillis(10)));
    assertTrue(readTimeout.getMessage().contains("read lock"), readTimeout.getMessage());
    TimeoutException writeTimeout =
        assertThrows(TimeoutException.class, () -> rw.write(Duration.ofMillis(10)));
    assertTrue(writeTimeout.getMessage().contains("write lock"), writeTimeout.getMessage());
    assertTrue(writeTimeout.getMessage().contains("cache"), writeTimeout.getMessage());
    CompletableFuture<Guard> readAsync = rw.readAsync(Duration.ofMillis(10));
    CompletableFuture<WriteGuard> writeAsync = rw.writeAsync(Duration.ofMillis(10));
    for (CompletableFuture<?> f : List.of(readAsync, writeAsync)) {
      assertInstanceOf(TimeoutException.class, failureOf(f));
    }
    awaitTrue(() -> rw.queueLength() == 0, "the timed-out requests to leave");
    w.unlock();
    assertFalse(rw.isWriteLocked());
    assertEquals(0, rw.readers());
    assertThrows(IllegalArgumentException.class, () -> rw.read(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> rw.writeAsync(Duration.ofMillis(-1)));
  }

  @Test
  void timedRequests_grantedInTime_holdTheLock() throws Exception {
    ReadWriteLock rw = newLock();
    WriteGuard w = rw.write();
    CompletableFuture<Guard> r = rw.readAsync(Duration.ofMinutes(10));
    CompletableFuture<WriteGuard> w2 = rw.writeAsync(Duration.ofMinutes(10));
    w.unlock();
    Guard rg = done(r);
    assertEquals(1, rw.readers());
    rg.unlock();
    done(w2).unlock();
    assertFalse(rw.isWriteLocked());
  }

  @Test
  void interruptBeforeLocking_throwsAtOnceEvenWhenFree() {
    ReadWriteLock rw = newLock();
    for (TestThreads.Body call :
        List.<TestThreads.Body>of(rw::read, rw::write, () -> rw.write(Duration.ofMinutes(1)))) {
      Thread.currentThread().interrupt();
      try {
        assertThrows(InterruptedException.class, call::run);
      } finally {
        Thread.interrupted();
      }
    }
    assertEquals(0, rw.readers());
    assertFalse(rw.isWriteLocked());
  }

  private int unguarded; // deliberately plain: the lock must publish it

  @Test
  void memoryVisibility_writesUnderTheWriteLockAreSeenByLaterReadersAndWriters() throws Exception {
    ReadWriteLock rw = newLock();
    int workers = 4;
    int rounds = 5_000;
    Queue<String> violations = new ConcurrentLinkedQueue<>();
    threads.runAll(
        workers,
        t -> {
          for (int i = 0; i < rounds; i++) {
            int seen;
            try (Guard r = rw.read()) {
              seen = unguarded;
            }
            try (Guard w = rw.write()) {
              if (unguarded < seen) {
                violations.add("the writer saw " + unguarded + " after a reader saw " + seen);
              }
              unguarded++;
            }
          }
        });
    assertEquals(workers * rounds, rw.callRead(() -> unguarded));
    assertEquals(List.of(), List.copyOf(violations));
  }
}
