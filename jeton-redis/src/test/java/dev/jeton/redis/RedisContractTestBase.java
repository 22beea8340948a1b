package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Semaphore;
import dev.jeton.contract.SemaphoreContract;
import dev.jeton.redis.testing.Await;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The contract suite against the Redis semaphore, on whatever Redis {@link #uri()} names. */
abstract class RedisContractTestBase extends SemaphoreContract {
  private final List<RedisSemaphore> opened = new ArrayList<>();
  private static int created;

  /** Where the Redis under test is. */
  abstract String uri();

  /** How handles reach it: {@link RedisSemaphore.Builder#jedis()} or not. */
  boolean jedis() {
    return false;
  }

  @AfterEach
  void closeHandles() {
    opened.forEach(RedisSemaphore::close);
  }

  @Override
  protected Semaphore newSemaphore(int limit) {
    return open(RedisSemaphore.builder("contract-" + created++).limit(limit));
  }

  private RedisSemaphore open(RedisSemaphore.Builder builder) {
    builder.uri(uri());
    if (jedis()) {
      builder.jedis();
    }
    RedisSemaphore semaphore = builder.open();
    opened.add(semaphore);
    return semaphore;
  }

  /**
   * A fleet-wide limit of thousands: with 3,000 holders (on a cluster, all on the node that owns
   * the semaphore's hash tag) the limit, the queue and the hand-over to the oldest waiter hold, and
   * every permit comes back. The contract's other tests cannot run under holders of their own
   * semaphore that they do not know of (awaitIdle, for one, waits for none), so this case stands
   * beside them.
   */
  @Test
  void thousandsOfHolders_theLimitHoldsAndTheOldestWaiterIsHandedTheNextPermit() throws Exception {
    int holders = 3000;
    String name = "contract-many-" + created++;
    RedisSemaphore background = open(RedisSemaphore.builder(name).limit(holders + 1));
    RedisSemaphore sem = open(RedisSemaphore.builder(name));
    List<Lease> held = RedisSemaphores.takeLeases(background, holders);
    Lease last = sem.acquire(1);
    assertEquals(0, sem.available());
    assertTrue(sem.tryAcquire(1).isEmpty(), "the limit holds with thousands of holders");
    CompletableFuture<Lease> first = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 1, "the first waiter to queue");
    CompletableFuture<Lease> second = background.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 2, "the second waiter to queue");
    assertEquals(holders + 1, sem.status().holders().size());

    held.get(holders / 2).release();
    Lease handedOver = first.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    assertFalse(second.isDone(), "the younger waiter still waits");
    handedOver.release();
    second.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).release();
    last.release();
    List<CompletableFuture<Boolean>> released = new ArrayList<>();
    for (Lease lease : held) {
      if (lease.isHeld()) {
        released.add(lease.releaseAsync());
      }
    }
    for (CompletableFuture<Boolean> r : released) {
      assertTrue(r.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS), "held until released");
    }
    Await.until(() -> sem.available() == holders + 1, "every permit to come back");
    assertEquals(0, sem.queueLength());
  }

  @Override
  protected int rounds(int inProcessRounds) {
    return Math.max(20, inProcessRounds / 100); // every operation is a round trip
  }
}
