package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every Jeton wait does inside a cancelled scope: a request queued by a task of the scope,
 * blocking or asynchronous, on a semaphore, mutex, read-write lock, barrier, keyed semaphore,
 * channel, or a select over channels, is withdrawn.
 */
class ScopeWaitsTest {
  private final ExecutorService executor = ScopeTest.executorOfThisJdk();

  @AfterEach
  void stopExecutor() {
    executor.shutdownNow();
  }

  /** A primitive made busy, so that each of its waits queues. */
  private interface Busy {
    CompletableFuture<?> waitAsync();

    void waitBlocking() throws Exception;

    int queued();
  }

  private static List<Busy> everyPrimitive() {
    Semaphore semaphore = Semaphore.create(1);
    Permit unusedPermit = semaphore.tryAcquire(1).orElseThrow();
    Mutex mutex = Mutex.create();
    Guard unusedLock = mutex.tryLock().orElseThrow();
    ReadWriteLock rw = ReadWriteLock.create();
    Guard unusedWrite = rw.tryWrite().orElseThrow();
    Barrier barrier = Barrier.create(2);
    Semaphore key = KeyedSemaphore.<String>create(1).forKey("tenant");
    Permit unusedKeyPermit = key.tryAcquire(1).orElseThrow();
    FifoChannel<String> empty = (FifoChannel<String>) Channel.<String>rendezvous();
    FifoChannel<String> alsoEmpty = (FifoChannel<String>) Channel.<String>rendezvous();
    return List.of(
        busy(
            "semaphore",
            () -> semaphore.acquireAsync(1),
            () -> semaphore.acquire(1),
            semaphore::queueLength),
        busy("mutex", mutex::lockAsync, mutex::lock, mutex::queueLength),
        busy("read-write lock", rw::readAsync, rw::read, rw::queueLength),
        busy("barrier", barrier::awaitAsync, barrier::await, barrier::arrived),
        busy("keyed semaphore", () -> key.acquireAsync(1), () -> key.acquire(1), key::queueLength),
        busy("channel", empty::receiveAsync, empty::receive, empty::queueLength),
        busy(
            "select",
            () -> Select.selectAsync(empty.onReceive(v -> v), alsoEmpty.onReceive(v -> v)),
            () -> Select.select(empty.onReceive(v -> v), alsoEmpty.onReceive(v -> v)),
            // A waiting select stands in both queues, and leaves both when withdrawn.
            () -> Math.max(empty.queueLength(), alsoEmpty.queueLength())));
  }

  @Test
  void asyncWaitsOfAnAsyncTask_areWithdrawn_whenTheScopeIsCancelled() throws Exception {
    for (Busy busy : everyPrimitive()) {
      try (Scope scope = Scope.builder().executor(executor).open()) {
        // The task's stage is a dependent of the wait: cancelling the stage alone would not
        // withdraw the wait; the scope cancels the wait itself.
        CompletableFuture<Object> task = scope.forkAsync(() -> busy.waitAsync().thenApply(x -> x));
        assertEquals(1, busy.queued(), busy + " queued");
        scope.cancel();
        assertEquals(0, busy.queued(), busy + " withdrawn");
        assertInstanceOf(CancellationException.class, ScopeTest.failure(task));
      }
    }
  }

  @Test
  void asyncWaitsOfABlockingTask_areWithdrawn_whenTheScopeIsCancelled() throws Exception {
    for (Busy busy : everyPrimitive()) {
      CountDownLatch queued = new CountDownLatch(1);
      try (Scope scope = Scope.builder().executor(executor).open()) {
        scope.fork(
            () -> {
              CompletableFuture<?> wait = busy.waitAsync();
              queued.countDown();
              return wait.get(); // an interrupt ends get(), but would leave the wait queued
            });
        TestThreads.awaitLatch(queued);
        scope.cancel();
        assertThrows(CancellationException.class, scope::join);
        assertEquals(0, busy.queued(), busy + " withdrawn");
      }
    }
  }

  @Test
  void blockingWaitsOfATask_areWithdrawn_byTheInterrupt() throws Exception {
    for (Busy busy : everyPrimitive()) {
      try (Scope scope = Scope.builder().executor(executor).open()) {
        CompletableFuture<Object> task =
            scope.fork(
                () -> {
                  busy.waitBlocking();
                  return null;
                });
        TestThreads.awaitTrue(() -> busy.queued() == 1, busy + " queued");
        scope.cancel();
        assertThrows(CancellationException.class, scope::join);
        assertEquals(0, busy.queued(), busy + " withdrawn");
        assertInstanceOf(CancellationException.class, ScopeTest.failure(task));
      }
    }
  }

  @Test
  void waitsQueuedOutsideTheScope_areLeftAlone() throws Exception {
    for (Busy busy : everyPrimitive()) {
      CompletableFuture<?> ownersWait;
      try (Scope scope = Scope.builder().executor(executor).open()) {
        ownersWait = busy.waitAsync(); // the opener is not a task of the scope
        scope.cancel();
      }
      assertFalse(ownersWait.isDone(), busy + ": the owner's wait stays queued");
      assertEquals(1, busy.queued());
      ownersWait.cancel(false);
    }
  }

  /**
   * A callback of code outside the scope, which a task's release or send runs on the task's thread
   * (completions run on the thread that grants), is not the task's: a wait it queues is left alone
   * when the scope is cancelled.
   */
  @Test
  void waitsQueuedByOutsideCallbacksThatATaskRuns_areLeftAlone() throws Exception {
    for (Busy busy : everyPrimitive()) {
      Semaphore semaphore = Semaphore.create(1);
      Permit held = semaphore.tryAcquire(1).orElseThrow();
      assertOutsideCallbackLeftAlone(
          busy, semaphore.acquireAsync(1), held::release); // grants on the task's thread
      Channel<String> channel = Channel.rendezvous();
      assertOutsideCallbackLeftAlone(
          busy, channel.receiveAsync(), () -> channel.send("handed over on the task's thread"));
    }
  }

  /** {@code outside} completes when the task runs {@code trigger}; its callback queues a wait. */
  private void assertOutsideCallbackLeftAlone(
      Busy busy, CompletableFuture<?> outside, TestThreads.Body trigger) throws Exception {
    CompletableFuture<CompletableFuture<?>> outsidersWait =
        outside.thenApply(unused -> busy.waitAsync());
    CountDownLatch triggered = new CountDownLatch(1);
    try (Scope scope = Scope.builder().executor(executor).open()) {
      scope.fork(
          () -> {
            trigger.run();
            triggered.countDown();
            new CountDownLatch(1).await(); // until the scope's cancel
            return null;
          });
      TestThreads.awaitLatch(triggered);
      scope.cancel();
    }
    CompletableFuture<?> wait = outsidersWait.join();
    assertFalse(wait.isDone(), busy + ": the outsider's wait stays queued");
    assertEquals(1, busy.queued(), busy::toString);
    wait.cancel(false);
    assertEquals(0, busy.queued(), busy::toString);
  }

  @Test
  void aWaitThatEnds_isNoLongerTrackedByItsTask() throws Exception {
    Semaphore semaphore = Semaphore.create(1);
    Permit held = semaphore.tryAcquire(1).orElseThrow();
    try (Scope scope = Scope.builder().executor(executor).open()) {
      CompletableFuture<Integer> tracked =
          scope.forkAsync(
              () -> {
                ScopeTask<?> task = ScopeTask.current();
                CompletableFuture<Permit> granted = semaphore.acquireAsync(1);
                CompletableFuture<Permit> withdrawn = semaphore.acquireAsync(1);
                int whileQueued = task.trackedCount();
                withdrawn.cancel(false);
                held.release();
                granted.join().release();
                return CompletableFuture.completedFuture(whileQueued * 10 + task.trackedCount());
              });
      scope.join();
      assertEquals(20, tracked.join(), "two tracked while queued, none once they left");
    }
  }

  private static Busy busy(
      String name, AsyncWait async, BlockingWait blocking, IntSupplier queued) {
    return new Busy() {
      @Override
      public CompletableFuture<?> waitAsync() {
        return async.start();
      }

      @Override
      public void waitBlocking() throws Exception {
        blocking.await();
      }

      @Override
      public int queued() {
        return queued.getAsInt();
      }

      @Override
      public String toString() {
        return name;
      }
    };
  }

  private interface AsyncWait {
    CompletableFuture<?> start();
  }

  private interface BlockingWait {
    Object await() throws Exception;
  }

  /**
   * A channel's waits are the engine's too: a send withdrawn by the scope's cancel gives its value
   * to onUndelivered (never delivered later), and a withdrawn receive takes nothing.
   */
  @Test
  void channelWaitsOfAnAsyncTask_areWithdrawn_whenTheScopeIsCancelled() throws Exception {
    List<String> undelivered = new java.util.concurrent.CopyOnWriteArrayList<>();
    Channel<String> full =
        Channel.<String>builder().capacity(1).onUndelivered(undelivered::add).build();
    assertTrue(full.trySend("a"));
    Channel<String> empty = Channel.rendezvous();
    try (Scope scope = Scope.builder().executor(executor).open()) {
      CompletableFuture<Void> send = scope.forkAsync(() -> full.sendAsync("b"));
      CompletableFuture<String> receive = scope.forkAsync(empty::receiveAsync);
      assertFalse(send.isDone() || receive.isDone(), "both wait");
      scope.cancel();
      assertInstanceOf(CancellationException.class, ScopeTest.failure(send));
      assertInstanceOf(CancellationException.class, ScopeTest.failure(receive));
    }
    assertEquals(List.of("b"), undelivered, "the withdrawn send's value, reported once");
    assertEquals("a", full.tryReceive().orElseThrow());
    assertTrue(full.tryReceive().isEmpty(), "b is never delivered");
    assertFalse(empty.trySend("x"), "no receiver waits any more");
  }
}
