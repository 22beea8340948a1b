package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jeton.Permit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The asynchronous requests: they return at once, whatever other processes do, and their waiting
 * shares a few threads. Jeton's own tools call them from callbacks.
 */
@Timeout(120) // a hang guard: every wait below is for an event
class HostSemaphoreAsyncTest {
  @TempDir Path directory;

  private HostSemaphore open(String name, int limit) throws IOException {
    return HostSemaphore.builder(name).directory(directory).limit(limit).open();
  }

  @Test
  void manyWaitingAsyncRequests_shareAFewThreadsAndAreGrantedInOrder() throws Exception {
    HostSemaphore sem = open("many", 1);
    Permit holder = sem.acquire(1);
    int before = hostThreads();
    ConcurrentLinkedQueue<Integer> order = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      int index = i;
      CompletableFuture<Permit> f =
          i % 2 == 0 ? sem.acquireAsync(1) : sem.acquireAsync(1, Duration.ofHours(1));
      done.add(
          f.thenAccept(
              permit -> {
                order.add(index);
                permit.release();
              }));
    }
    while (sem.queueLength() < 200) {
      Thread.sleep(5);
    }
    int during = hostThreads();
    assertTrue(
        during - before <= 3, "200 waiting requests use " + (during - before) + " more threads");
    holder.release();
    for (CompletableFuture<Void> f : done) {
      f.get(60, TimeUnit.SECONDS);
    }
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      expected.add(i);
    }
    assertEquals(expected, List.copyOf(order), "granted in the order asked");
    assertEquals(0, sem.queueLength());
  }

  @Test
  void asyncMethods_returnAndCancelWhileAnotherProcessHoldsTheQueueLock() throws Exception {
    HostSemaphore sem = open("frozen", 2);
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> queued = sem.acquireAsync(2);
    assertEquals(1, sem.queueLength(), "it has its place");
    CompletableFuture<Permit> cancelled;
    CompletableFuture<Permit> waiting;
    CompletableFuture<Permit> timed;
    CompletableFuture<Void> idle;
    try (FrozenLock stopped = FrozenLock.on(directory.resolve("frozen/meta.lock"))) {
      assertTrue(queued.cancel(false));
      assertEquals(0, sem.queueLength(), "withdrawn without meta.lock");
      cancelled = sem.acquireAsync(1);
      waiting = sem.acquireAsync(1);
      timed = sem.acquireAsync(2, Duration.ofHours(1));
      CompletableFuture<Permit> expiring = sem.acquireAsync(1, Duration.ofMillis(50));
      idle = sem.awaitIdle();
      assertFalse(waiting.isDone() || timed.isDone() || idle.isDone(), "no place can be taken");
      assertTrue(cancelled.cancel(false));

      ExecutionException e =
          assertThrows(ExecutionException.class, () -> expiring.get(60, TimeUnit.SECONDS));
      assertInstanceOf(TimeoutException.class, e.getCause(), "the deadline counts while queueing");
    } // the child dies, and its lock with it: the places are taken now
    Permit first = waiting.get(60, TimeUnit.SECONDS);
    assertTrue(cancelled.isCancelled());
    assertFalse(timed.isDone(), "needs both permits");
    held.release();
    first.release();
    timed.get(60, TimeUnit.SECONDS).release();
    idle.get(60, TimeUnit.SECONDS);
    assertEquals(0, sem.queueLength());
    assertEquals(2, sem.available());
  }

  @Test
  void asyncMethodsAndCancel_doNoFileIoOnTheCallersThread() throws Exception {
    Path io = Path.of("/proc/thread-self/io");
    assumeTrue(Files.isReadable(io), "needs Linux's per-thread I/O counts");
    HostSemaphore sem = open("io", 1);
    Permit holder = sem.acquire(1);
    for (int i = 0; i < 3; i++) { // loads the classes involved (class loading reads jars)
      sem.acquireAsync(1).cancel(false);
      sem.acquireAsync(1, Duration.ofHours(1)).cancel(false);
      sem.awaitIdle().cancel(false);
      sem.queueLength();
    }
    CompletableFuture<Permit> waiting = sem.acquireAsync(1);
    while (sem.queueLength() < 1) {
      Thread.sleep(5);
    }

    long baseline = -syscalls(io) + syscalls(io); // reading the counts is itself one read
    long start = syscalls(io);
    CompletableFuture<Permit> f = sem.acquireAsync(1);
    CompletableFuture<Permit> timed = sem.acquireAsync(1, Duration.ofHours(1));
    CompletableFuture<Void> idle = sem.awaitIdle();
    waiting.cancel(false);
    f.cancel(false);
    timed.cancel(false);
    idle.cancel(false);
    long used = syscalls(io) - start - baseline;
    assertEquals(0, used, "read and write calls made by the caller's thread");

    holder.release();
    // A cancelled request the driver granted in the same moment gives its permit back on the
    // driver's thread, after the queue has emptied (it failed so once in CI): wait for the
    // permit itself, with a deadline only as a hang guard.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while ((sem.queueLength() > 0 || sem.available() < 1) && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertEquals(0, sem.queueLength());
    assertEquals(1, sem.available());
  }

  @Test
  void completeFromOutside_withdrawsTheRequestLikeACancel() throws Exception {
    HostSemaphore sem = open("outside", 1);
    Permit held = sem.acquire(1);
    Permit stranger = dev.jeton.Semaphore.create(1).acquire(1); // not one of this semaphore's
    CompletableFuture<Permit> completed = sem.acquireAsync(1);
    CompletableFuture<Permit> failed = sem.acquireAsync(1, Duration.ofHours(1));
    CompletableFuture<Permit> timedOut = sem.acquireAsync(1);
    assertEquals(3, sem.queueLength());

    assertTrue(completed.complete(stranger));
    assertTrue(failed.completeExceptionally(new IllegalStateException("gave up")));
    timedOut.orTimeout(1, TimeUnit.MILLISECONDS);
    assertThrows(ExecutionException.class, () -> timedOut.get(60, TimeUnit.SECONDS));
    // The completion wakes get() before the driver has taken the withdrawal off the queue (it
    // did so only under load, in one CI run): wait for the queue to empty, the event itself.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // a hang guard only
    while (sem.queueLength() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertEquals(0, sem.queueLength(), "all three withdrawn");

    held.release();
    assertEquals(1, sem.available(), "none of them took the permit");
    assertEquals(stranger, completed.join(), "the value from outside stays");
  }

  @Test
  void cancelOrCompleteRacingWithAGrant_givesTheGrantBackAndKeepsTheCountExact() throws Exception {
    HostSemaphore sem = open("race", 2);
    Permit stranger = dev.jeton.Semaphore.create(1).acquire(1);
    java.util.Random random = new java.util.Random(42);
    int outsideWon = 0;
    for (int round = 0; round < 300; round++) {
      Permit held = sem.acquire(2);
      CompletableFuture<Permit> f = sem.acquireAsync(1 + round % 2);
      assertEquals(1, sem.queueLength(), "it has its place, round " + round);
      held.release(); // the driver grants it soon: race a completion from outside with that
      for (int spin = random.nextInt(20_000); spin > 0; spin--) {
        Thread.onSpinWait();
      }
      boolean won = round % 3 == 0 ? f.complete(stranger) : f.cancel(false);
      if (won) {
        outsideWon++;
        assertTrue(f.isCancelled() || f.join() == stranger, "the caller never sees the grant");
      } else {
        Permit granted = f.join();
        assertTrue(granted != stranger, "the grant won: the caller owns it");
        granted.release();
      }
      // A grant that lost is given back on the completion pool, soon after.
      long guard = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
      while (sem.available() != 2 || sem.queueLength() != 0) {
        assertTrue(System.nanoTime() - guard < 0, "the permits never came back, round " + round);
        Thread.sleep(1);
      }
    }
    // Both sides must have happened, or the loop did not test the race it claims to.
    assertTrue(outsideWon > 0 && outsideWon < 300, "completions from outside won " + outsideWon);
  }

  /** The read and write system calls this thread has made so far. */
  private static long syscalls(Path io) throws IOException {
    long calls = 0;
    for (String line : Files.readAllLines(io)) {
      if (line.startsWith("syscr:") || line.startsWith("syscw:")) {
        calls += Long.parseLong(line.substring(6).trim());
      }
    }
    return calls;
  }

  /** The live threads of jeton-host (they are all named jeton-host-something). */
  private static int hostThreads() {
    int count = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && t.getName().startsWith("jeton-host")) {
        count++;
      }
    }
    return count;
  }
}
