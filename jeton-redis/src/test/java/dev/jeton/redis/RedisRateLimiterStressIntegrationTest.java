package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.RateLimiterStats;
import dev.jeton.redis.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Threads on two handles of one limiter, asking every way at once (blocking, timed, asynchronous
 * then cancelled at any moment, tries) while others interrupt them: no request is lost or counted
 * twice, none is left waiting, and no more weight passes than the bound allows on Redis's clock.
 */
class RedisRateLimiterStressIntegrationTest extends RedisServerPerTest {
  private static final int THREADS = 6;
  private static final int REQUESTS_PER_THREAD = 250;
  private static final int PERMITS = 2000; // a second, 500 µs apart
  private static final int BURST = 4;

  /** What the callers saw: requests made, and how they ended. */
  private static final class Seen {
    final LongAdder made = new LongAdder();
    final LongAdder passed = new LongAdder();
    final LongAdder passedWeight = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder gaveUp = new LongAdder(); // timed out, cancelled or interrupted
  }

  @Test
  void everyRequestEndsOnceAndTheBoundHolds() throws Exception {
    List<RedisRateLimiter> handles = new ArrayList<>();
    for (int h = 0; h < 2; h++) {
      RedisRateLimiter handle =
          RedisRateLimiter.builder("stress")
              .uri(server.uri())
              .rate(PERMITS, Duration.ofSeconds(1))
              .burst(BURST)
              .statistics(true)
              .open();
      toClose.add(handle);
      handles.add(handle);
    }
    Seen[] seen = {new Seen(), new Seen()};
    long startMicros = redisMicros();
    List<Thread> threads = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    AtomicLong running = new AtomicLong(THREADS);
    for (int t = 0; t < THREADS; t++) {
      int h = t % 2;
      CompletableFuture<Void> finished = new CompletableFuture<>();
      done.add(finished);
      long seed = 7 * t + 1;
      Thread thread =
          new Thread(
              () -> {
                try {
                  work(handles.get(h), seen[h], new SplittableRandom(seed));
                  finished.complete(null);
                } catch (Throwable e) {
                  finished.completeExceptionally(e);
                } finally {
                  running.decrementAndGet();
                }
              },
              "stress-" + t);
      threads.add(thread);
      thread.start();
    }
    SplittableRandom interrupts = new SplittableRandom(99);
    while (running.get() > 0) {
      threads.get(interrupts.nextInt(THREADS)).interrupt();
      TimeUnit.MILLISECONDS.sleep(3);
    }
    for (CompletableFuture<Void> finished : done) {
      finished.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    }
    long elapsedMicros = redisMicros() - startMicros;

    long weight = 0;
    for (int h = 0; h < 2; h++) {
      RedisRateLimiter handle = handles.get(h);
      Await.until(() -> handle.queueLength() == 0, "the handle's requests to leave");
      RateLimiterStats stats = handle.stats().orElseThrow();
      Seen s = seen[h];
      assertEquals(s.passed.sum(), stats.admitted(), "admitted, handle " + h);
      assertEquals(s.rejected.sum(), stats.rejected(), "rejected, handle " + h);
      assertEquals(s.gaveUp.sum(), stats.timedOut() + stats.cancelled(), "given up, handle " + h);
      assertEquals(s.made.sum(), s.passed.sum() + s.rejected.sum() + s.gaveUp.sum());
      weight += s.passedWeight.sum();
    }
    // every instant fell between the two readings of Redis's clock
    assertTrue(
        (weight - BURST) * 500 <= elapsedMicros,
        weight + " passed in " + elapsedMicros + " µs at one per 500 µs, burst " + BURST);
  }

  private static void work(RedisRateLimiter limiter, Seen seen, SplittableRandom random)
      throws Exception {
    for (int n = 0; n < REQUESTS_PER_THREAD; n++) {
      int weight = 1 + random.nextInt(2);
      seen.made.increment();
      boolean passed;
      switch (random.nextInt(4)) {
        case 0 -> passed = blocking(limiter, weight, null, seen);
        case 1 -> passed = blocking(limiter, weight, Duration.ofMillis(random.nextInt(5)), seen);
        case 2 -> {
          CompletableFuture<Void> f = limiter.acquireAsync(weight);
          if (random.nextBoolean()) {
            try {
              TimeUnit.MICROSECONDS.sleep(random.nextInt(2000));
            } catch (InterruptedException e) {
              // one of the interrupts meant for the requests: cancel now
            }
          }
          passed = !f.cancel(false);
          if (passed) {
            f.join();
          } else {
            seen.gaveUp.increment();
          }
        }
        default -> {
          passed = limiter.tryAcquire(weight);
          if (!passed) {
            seen.rejected.increment();
          }
        }
      }
      if (passed) {
        seen.passed.increment();
        seen.passedWeight.add(weight);
      }
    }
    Thread.interrupted(); // an interrupt that came after the last request
  }

  private static boolean blocking(
      RedisRateLimiter limiter, int weight, Duration timeout, Seen seen) {
    try {
      if (timeout == null) {
        limiter.acquire(weight);
      } else {
        limiter.acquire(weight, timeout);
      }
      return true;
    } catch (InterruptedException | TimeoutException e) {
      seen.gaveUp.increment();
      return false;
    }
  }

  private long redisMicros() {
    String[] time = server.command("TIME").split("\n");
    return Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
  }
}
