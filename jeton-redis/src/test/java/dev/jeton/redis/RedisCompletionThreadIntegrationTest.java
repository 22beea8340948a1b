package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.Await;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Where the futures a handle gives out complete: never on the client's I/O threads, and on the
 * thread waiting in {@code get} when there is one (decision 21, and the one after the split).
 */
class RedisCompletionThreadIntegrationTest extends RedisServerPerTest {
  /** How the handles reach Redis: {@link RedisSemaphore.Builder#jedis()} or not. */
  boolean jedis() {
    return false;
  }

  /** Whether this thread is one that Redis's replies arrive on, Lettuce's or Jedis's. */
  static boolean onClientThread() {
    String name = Thread.currentThread().getName();
    return ThreadExecutorMap.currentExecutor() != null
        || name.equals("jeton-redis-commands")
        || name.equals("jeton-redis-wake-ups");
  }

  private RedisSemaphore open(RedisSemaphore.Builder builder) {
    builder.uri(server.uri());
    if (jedis()) {
      builder.jedis();
    }
    RedisSemaphore semaphore = builder.open();
    toClose.add(semaphore);
    return semaphore;
  }

  @Test
  void releaseAsync_callbacksNeverRunOnTheClientsThreads() throws Exception {
    RedisSemaphore sem = open(RedisSemaphore.builder("release-thread").limit(20));
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      leases.add(sem.acquire(1));
    }
    Queue<String> onEventLoop = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<Boolean>> released = new ArrayList<>();
    for (Lease lease : leases) {
      // Registered at once: the reply is a round trip away, so the callback waits for it.
      released.add(
          lease
              .releaseAsync()
              .thenApply(
                  answer -> {
                    if (onClientThread()) {
                      onEventLoop.add(Thread.currentThread().getName());
                    }
                    return answer;
                  }));
    }
    for (CompletableFuture<Boolean> release : released) {
      assertTrue(release.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    }
    assertEquals(List.of(), List.copyOf(onEventLoop), "callbacks run on the client's threads");
  }

  @Test
  void acquireLeaseAsync_get_completesOnTheWaitingThread() throws Exception {
    // An executor that never runs what it is given: only the thread in get() can complete it.
    Queue<Runnable> neverRun = new ConcurrentLinkedQueue<>();
    RedisSemaphore other = open(RedisSemaphore.builder("get-thread").limit(1));
    RedisSemaphore sem =
        open(RedisSemaphore.builder("get-thread").completionExecutor(neverRun::add));
    Lease held = other.acquire(1);
    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    var unused = waiter.thenRun(() -> ranOn.set(Thread.currentThread()));
    Await.until(() -> other.queueLength() == 1, "the waiter to queue");
    held.release(); // grants the waiter in Redis and wakes it up

    Lease lease = waiter.get(30, TimeUnit.SECONDS);
    assertSame(Thread.currentThread(), ranOn.get(), "the callback ran on the waiting thread");
    assertTrue(lease.releaseAsync().get(30, TimeUnit.SECONDS), "and so does a release's");
  }

  @Test
  void timedGet_racingAGrant_theGrantIsNeverLost() throws Exception {
    RedisSemaphore sem = open(RedisSemaphore.builder("get-race").limit(1));
    Random random = new Random(16);
    int timedOut = 0;
    for (int round = 0; round < 1000; round++) {
      Lease held = sem.acquire(1);
      CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
      held.release(); // sent after the acquire on the same connection: grants the waiter
      Lease lease;
      try {
        lease = waiter.get(random.nextInt(400), TimeUnit.MICROSECONDS);
      } catch (TimeoutException e) {
        timedOut++;
        // The grant still comes, to this get or to the executor, whoever is first.
        lease = waiter.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
      }
      assertTrue(lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    }
    assertEquals(1, sem.available(), "every permit back (" + timedOut + " gets timed out)");
    assertEquals(0, sem.queueLength());
  }
}
