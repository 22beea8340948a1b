package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code obtrudeValue} and {@code obtrudeException} on a future that Jeton hands out are refused
 * (issue 29): obtruding sets the result without the completion hooks that withdraw a request, so a
 * waiting request obtruded stayed queued and its grant, when it came, reached no one: a 1-permit
 * semaphore acquired async while held, its waiting future obtruded, kept its permit for ever once
 * released. Each case is a request that waits; after both refusals it is still waiting, and gets
 * its grant when the holder lets go.
 */
class ObtrudeRefusedTest {

  /** A primitive held by someone else, and a request of the caller's that waits for it. */
  interface Waiting {
    CompletableFuture<?> future();

    /** Lets the holder go: the waiting request is granted. */
    void letGo();

    /** Lets the waiting request's grant go. */
    void release(@Nullable Object grant);

    /** Nothing held, nothing queued. */
    boolean isFree();
  }

  static List<Arguments> futures() {
    return List.of(
        Arguments.of("semaphore", (Supplier<Waiting>) ObtrudeRefusedTest::semaphore),
        Arguments.of("semaphore callAsync", (Supplier<Waiting>) ObtrudeRefusedTest::callAsync),
        Arguments.of("mutex", (Supplier<Waiting>) ObtrudeRefusedTest::mutex),
        Arguments.of("read lock", (Supplier<Waiting>) () -> readWriteLock(true)),
        Arguments.of("write lock", (Supplier<Waiting>) () -> readWriteLock(false)),
        Arguments.of("keyed semaphore", (Supplier<Waiting>) ObtrudeRefusedTest::keyedSemaphore),
        Arguments.of("channel receive", (Supplier<Waiting>) () -> channelReceive(false)),
        Arguments.of("select", (Supplier<Waiting>) () -> channelReceive(true)),
        Arguments.of("channel send", (Supplier<Waiting>) ObtrudeRefusedTest::channelSend),
        Arguments.of("barrier", (Supplier<Waiting>) ObtrudeRefusedTest::barrier),
        Arguments.of("priority scheduler", (Supplier<Waiting>) ObtrudeRefusedTest::scheduler),
        Arguments.of("scope fork", (Supplier<Waiting>) ObtrudeRefusedTest::scopeFork));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("futures")
  @SuppressWarnings("unchecked")
  void obtrudeIsRefused_andTheRequestStillGetsItsGrant(String name, Supplier<Waiting> cases)
      throws Exception {
    Waiting waiting = cases.get();
    CompletableFuture<@Nullable Object> future =
        (CompletableFuture<@Nullable Object>) waiting.future();
    assertFalse(future.isDone(), "the request waits");

    assertThrows(
        UnsupportedOperationException.class,
        () -> future.obtrudeException(new IllegalStateException("obtruded")));
    assertThrows(UnsupportedOperationException.class, () -> future.obtrudeValue(null));

    assertFalse(future.isDone(), "still waiting");
    waiting.letGo();
    Object grant = future.get(); // its grant reached it: hang guard is the build's timeout
    waiting.release(grant);
    assertTrue(waiting.isFree(), "nothing held or queued");
    assertThrows(UnsupportedOperationException.class, () -> future.obtrudeValue(null));
    assertEquals(grant, future.join(), "a completed future keeps its outcome too");
  }

  /**
   * The attack as found: whatever obtrude does, the permit is not stranded. (Before, the obtruded
   * future stayed queued, the release granted it, and the permit went to no one: a later request
   * never got it.)
   */
  @org.junit.jupiter.api.Test
  void anObtrudedWaiter_strandsNoPermit() {
    Semaphore semaphore = Semaphore.create(1);
    Permit held = semaphore.tryAcquire(1).orElseThrow();
    CompletableFuture<Permit> waiting = semaphore.acquireAsync(1);
    try {
      waiting.obtrudeException(new IllegalStateException("obtruded"));
    } catch (UnsupportedOperationException refused) {
      // what the fix does; the assertions below hold either way
    }
    held.release();
    if (waiting.isDone() && !waiting.isCompletedExceptionally()) {
      waiting.join().release();
    }
    CompletableFuture<Permit> later = semaphore.acquireAsync(1);
    assertTrue(later.isDone(), "a later request gets the permit: " + semaphore);
    later.join().release();
    assertEquals(1, semaphore.available());
  }

  private static Waiting semaphore() {
    Semaphore semaphore = Semaphore.create(1);
    Permit held = semaphore.tryAcquire(1).orElseThrow();
    return waiting(
        semaphore.acquireAsync(1),
        held::release,
        grant -> ((Permit) grant).release(),
        () -> semaphore.available() == 1 && semaphore.queueLength() == 0);
  }

  private static Waiting callAsync() {
    Semaphore semaphore = Semaphore.create(1);
    Permit held = semaphore.tryAcquire(1).orElseThrow();
    return waiting(
        semaphore.callAsync(1, () -> CompletableFuture.completedFuture("ran")),
        held::release,
        grant -> assertEquals("ran", grant), // the task's permit went back as its stage completed
        () -> semaphore.available() == 1 && semaphore.queueLength() == 0);
  }

  private static Waiting mutex() {
    Mutex mutex = Mutex.create();
    Guard held = mutex.tryLock().orElseThrow();
    return waiting(
        mutex.lockAsync(),
        held::unlock,
        grant -> ((Guard) grant).unlock(),
        () -> !mutex.isLocked() && mutex.queueLength() == 0);
  }

  private static Waiting readWriteLock(boolean read) {
    ReadWriteLock lock = ReadWriteLock.create();
    Guard held = (read ? lock.tryWrite() : lock.tryRead()).orElseThrow();
    return waiting(
        read ? lock.readAsync() : lock.writeAsync(),
        held::unlock,
        grant -> ((Guard) grant).unlock(),
        () -> {
          Guard free = lock.tryWrite().orElse(null);
          if (free == null) {
            return false;
          }
          free.unlock();
          return lock.queueLength() == 0;
        });
  }

  private static Waiting keyedSemaphore() {
    KeyedSemaphore<String> keyed = KeyedSemaphore.builder().limitPerKey(1).build();
    Semaphore key = keyed.forKey("k");
    Permit held = key.tryAcquire(1).orElseThrow();
    return waiting(
        key.acquireAsync(1),
        held::release,
        grant -> ((Permit) grant).release(),
        () -> keyed.keyCount() == 0);
  }

  private static Waiting channelReceive(boolean inASelect) {
    FifoChannel<String> channel = (FifoChannel<String>) Channel.<String>rendezvous();
    return waiting(
        inASelect ? Select.selectAsync(channel.onReceive(v -> v)) : channel.receiveAsync(),
        () -> assertTrue(channel.trySend("v")),
        grant -> assertEquals("v", grant),
        () -> channel.queueLength() == 0);
  }

  private static Waiting channelSend() {
    FifoChannel<String> channel = (FifoChannel<String>) Channel.<String>rendezvous();
    return waiting(
        channel.sendAsync("v"),
        () -> assertEquals("v", channel.tryReceive().orElseThrow()),
        grant -> {},
        () -> channel.queueLength() == 0);
  }

  private static Waiting barrier() {
    Barrier barrier = Barrier.create(2);
    return waiting(
        barrier.awaitAsync(),
        () -> barrier.awaitAsync().join(),
        grant -> {},
        () -> barrier.arrived() == 0);
  }

  private static Waiting scheduler() {
    PriorityScheduler scheduler = PriorityScheduler.builder().limit(1).build();
    CompletableFuture<String> holding = new CompletableFuture<>();
    var unused = scheduler.submitAsync(Priority.NORMAL, () -> holding);
    return waiting(
        scheduler.submitAsync(Priority.NORMAL, () -> CompletableFuture.completedFuture("ran")),
        () -> holding.complete("held"),
        grant -> assertEquals("ran", grant),
        () -> scheduler.running() == 0 && scheduler.queued() == 0);
  }

  private static Waiting scopeFork() {
    Scope scope = Scope.open();
    CompletableFuture<String> stage = new CompletableFuture<>();
    return waiting(
        scope.forkAsync(() -> stage),
        () -> stage.complete("done"),
        grant -> scope.close(),
        () -> !scope.isCancelled() || scope.failures().isEmpty());
  }

  private static Waiting waiting(
      CompletableFuture<?> future,
      Runnable letGo,
      java.util.function.Consumer<@Nullable Object> release,
      java.util.function.BooleanSupplier isFree) {
    return new Waiting() {
      @Override
      public CompletableFuture<?> future() {
        return future;
      }

      @Override
      public void letGo() {
        letGo.run();
      }

      @Override
      public void release(@Nullable Object grant) {
        release.accept(grant);
      }

      @Override
      public boolean isFree() {
        return isFree.getAsBoolean();
      }
    };
  }
}
