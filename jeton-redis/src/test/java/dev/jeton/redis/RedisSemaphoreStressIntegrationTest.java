package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Permit;
import dev.jeton.SemaphoreClosedException;
import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisServer;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads over several handles of one Redis semaphore, with random weights, timeouts,
 * cancellations and tryAcquire: the permits held at once (counted here, by the holders) never
 * exceed the limit, every request ends, and at the end nothing is held or queued.
 */
class RedisSemaphoreStressIntegrationTest {
  private static final int LIMIT = 4;
  private static final int THREADS = 12;
  private static final int HANDLES = 3;
  private static final int ROUNDS = 60;

  @Test
  void randomTrafficNeverExceedsTheLimitAndLeavesNothingBehind() throws Exception {
    try (RedisServer server = RedisServer.start()) {
      RedisSemaphoreOptions options =
          RedisSemaphoreOptions.defaults().withPollInterval(Duration.ofMillis(200));
      List<RedisSemaphore> handles = new ArrayList<>();
      for (int i = 0; i < HANDLES; i++) {
        handles.add(
            RedisSemaphore.builder("stress")
                .uri(server.uri())
                .limitIfNew(LIMIT)
                .options(options)
                .open());
      }
      AtomicInteger inside = new AtomicInteger();
      AtomicInteger peak = new AtomicInteger();
      AtomicInteger granted = new AtomicInteger();
      AtomicInteger gaveUp = new AtomicInteger();
      List<Thread> threads = new ArrayList<>();
      List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        RedisSemaphore sem = handles.get(t % HANDLES);
        Thread thread =
            new Thread(
                () -> {
                  ThreadLocalRandom random = ThreadLocalRandom.current();
                  try {
                    for (int r = 0; r < ROUNDS; r++) {
                      int weight = 1 + random.nextInt(2);
                      Optional<Permit> permit = attempt(sem, weight, random);
                      if (permit.isEmpty()) {
                        gaveUp.incrementAndGet();
                        continue;
                      }
                      granted.incrementAndGet();
                      int now = inside.addAndGet(weight);
                      peak.accumulateAndGet(now, Math::max);
                      Thread.sleep(random.nextInt(3));
                      inside.addAndGet(-weight);
                      ((Lease) permit.get())
                          .releaseAsync()
                          .get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
                    }
                  } catch (Throwable e) {
                    failures.add(e);
                  }
                });
        threads.add(thread);
        thread.start();
      }
      for (Thread thread : threads) {
        thread.join(120_000);
        assertTrue(!thread.isAlive(), "every thread finishes");
      }
      assertEquals(List.of(), failures);
      assertTrue(peak.get() <= LIMIT, "peak " + peak + " within the limit " + LIMIT);
      assertTrue(granted.get() > THREADS * ROUNDS / 4, "most requests got through: " + granted);
      assertEquals(THREADS * ROUNDS, granted.get() + gaveUp.get());
      RedisSemaphore check = handles.get(0);
      Await.until(
          () -> check.available() == LIMIT && check.queueLength() == 0,
          "the semaphore to come back to free and empty");
      for (RedisSemaphore h : handles) {
        assertEquals(List.of(), List.copyOf(RedisSemaphores.waitingIds(h)), "nothing left waiting");
        assertEquals(List.of(), List.copyOf(RedisSemaphores.heldLeases(h)), "nothing left held");
        h.close();
      }
    }
  }

  /**
   * close() racing the grant of the handle's last request: whichever wins, the handle shuts down
   * (its wake-up subscription ends) and the permit comes back. A grant that arrived as close()
   * failed the request was once registered and dropped without telling the handle, which then
   * stayed open, subscribed, with its own client's threads alive.
   */
  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES) // a hang guard, above Await's (which says more)
  void closeRacingAGrant_alwaysShutsTheHandleDownAndGivesThePermitBack() throws Exception {
    int rounds = 300;
    try (RedisServer server = RedisServer.start()) {
      RedisClient client = RedisClient.create(server.uri());
      try (RedisSemaphore holder =
          RedisSemaphore.builder("close-race").client(client).limit(1).open()) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int r = 0; r < rounds; r++) {
          Lease held = holder.acquire(1);
          RedisSemaphore closing = RedisSemaphore.builder("close-race").client(client).open();
          CompletableFuture<Lease> request = closing.acquireLeaseAsync(1);
          Await.until(() -> holder.queueLength() == 1, "the request to queue");
          var released = held.releaseAsync(); // grants the request, which close() may yet fail
          // close() lands anywhere from before the grant reaches the handle to well after it
          long spinUntil = System.nanoTime() + random.nextInt(400_000);
          while (System.nanoTime() - spinUntil < 0) {
            Thread.onSpinWait();
          }
          closing.close();
          assertTrue(released.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
          String outcome;
          try {
            request.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).release(); // grant first
            outcome = "granted";
          } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof SemaphoreClosedException, e.toString());
            outcome = "closed";
          }
          String channel = RedisSemaphores.wakeChannel(closing);
          Await.until(
              () -> server.command("PUBSUB", "NUMSUB", channel).endsWith("\n0"),
              "the handle closed in round " + r + " (" + outcome + ") to end its subscription");
        }
        Await.until(() -> holder.available() == 1, "the permit to come back");
      } finally {
        client.shutdown();
      }
    }
  }

  /** One request of a random kind; empty if it gave up (timeout, cancel, busy). */
  private static Optional<Permit> attempt(RedisSemaphore sem, int weight, ThreadLocalRandom random)
      throws Exception {
    switch (random.nextInt(4)) {
      case 0:
        return Optional.of(sem.acquire(weight));
      case 1:
        try {
          return Optional.of(sem.acquire(weight, Duration.ofMillis(random.nextInt(20))));
        } catch (TimeoutException e) {
          return Optional.empty();
        }
      case 2:
        CompletableFuture<Permit> future = sem.acquireAsync(weight);
        Thread.sleep(random.nextInt(5));
        if (future.cancel(false)) {
          return Optional.empty();
        }
        try {
          return Optional.of(
              future.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS)); // the grant won the race
        } catch (CancellationException | ExecutionException e) {
          throw new AssertionError("cancel lost but the future did not hold a permit", e);
        }
      default:
        return sem.tryAcquire(weight);
    }
  }
}
