package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.Await;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A request's future completed from outside (cancel, complete, completeExceptionally) withdraws the
 * request, and a grant that loses to it is given back: the rule of every Jeton future.
 */
class RedisRequestWithdrawalIntegrationTest extends RedisServerPerTest {
  private RedisSemaphore open(RedisSemaphore.Builder builder) {
    RedisSemaphore semaphore = builder.uri(server.uri()).open();
    toClose.add(semaphore);
    return semaphore;
  }

  @Test
  void completeFromOutside_ofAQueuedRequest_withdrawsIt() throws Exception {
    RedisSemaphore sem = open(RedisSemaphore.builder("outside").limit(1));
    Lease held = sem.acquire(1);
    CompletableFuture<Lease> completed = sem.acquireLeaseAsync(1);
    CompletableFuture<Lease> failed = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 2, "both requests to queue");

    assertTrue(completed.complete(held)); // any value: the caller decided it
    assertTrue(failed.completeExceptionally(new IllegalStateException("gave up")));
    assertEquals(0, sem.queueLength(), "withdrawn before complete returned");

    assertTrue(held.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    assertEquals(1, sem.available(), "neither took the permit");
    assertSame(held, completed.join(), "the value from outside stays");
  }

  @Test
  void cancelOrComplete_afterTheGrantIsSeenButBeforeItIsDelivered_givesTheGrantBack()
      throws Exception {
    // Holds each completion until the test runs it: a grant seen but not yet delivered.
    LinkedBlockingQueue<Runnable> deliveries = new LinkedBlockingQueue<>();
    RedisSemaphore sem =
        open(RedisSemaphore.builder("late").limit(2).completionExecutor(deliveries::add));
    for (boolean cancel : new boolean[] {true, false}) {
      Lease held = sem.acquire(2); // blocking: delivered on the replying thread, not held up
      CompletableFuture<Lease> f = sem.acquireLeaseAsync(1);
      Await.until(() -> sem.queueLength() == 1, "the request to queue");
      held.release();
      Runnable delivery = deliveries.poll(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
      assertTrue(delivery != null, "the grant to be seen");
      assertFalse(f.isDone(), "not delivered yet");

      // The grant is decided here but the future is not done: the caller's completion wins.
      assertTrue(cancel ? f.cancel(false) : f.complete(held), "the first completion wins");
      assertEquals(2, sem.available(), "the grant was given back before cancel returned");
      delivery.run(); // the late delivery loses, and gives nothing to anyone
      if (cancel) {
        assertThrows(CancellationException.class, f::join);
      } else {
        assertSame(held, f.join());
      }
      assertEquals(2, sem.available());
      assertEquals(0, sem.queueLength());
    }
  }

  @Test
  void cancelRacingWithAGrant_manyTimes_givesTheGrantBackAndKeepsTheCountExact() throws Exception {
    RedisSemaphore sem = open(RedisSemaphore.builder("race").limit(2));
    Random random = new Random(7);
    int cancelled = 0;
    int rounds = 200;
    for (int round = 0; round < rounds; round++) {
      Lease held = sem.acquire(2);
      int weight = 1 + round % 2;
      CompletableFuture<Lease> f =
          round % 3 == 0
              ? sem.acquireLeaseAsync(weight)
              : sem.acquireLeaseAsync(weight, Duration.ofHours(1)); // a timer to stop too
      if (round % 2 == 0) {
        Await.until(() -> sem.queueLength() == 1, "the request to queue, round " + round);
      }
      var released = held.releaseAsync(); // grants f in the same call
      for (int spin = random.nextInt(50_000); spin > 0; spin--) {
        Thread.onSpinWait();
      }
      boolean won = round % 4 == 0 ? f.complete(held) : f.cancel(false);
      assertTrue(f.isDone(), "once cancel or complete returns the future is done");
      if (won) {
        cancelled++;
        // Whatever raced with it, the withdrawal or the grant's return was sent before.
        assertTrue(released.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
        assertEquals(2, sem.available(), "the caller gave up, yet permits are held: " + round);
      } else {
        Lease granted;
        try {
          granted = f.get();
        } catch (ExecutionException e) {
          throw new AssertionError("round " + round, e);
        }
        assertTrue(granted != held, "the grant won: the caller holds it");
        assertTrue(granted.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
        assertEquals(2, sem.available(), "round " + round);
      }
      assertEquals(0, sem.queueLength(), "round " + round);
    }
    assertTrue(cancelled > 0, "no completion from outside won in " + rounds + " rounds");
  }
}
