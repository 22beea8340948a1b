package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Many runs of {@link Parallel} at once, with random limits, weights, failures, slow items and
 * cancellations: never more than the limit at work, every run completes, and when it does nothing
 * it started is still at work.
 */
class ParallelStressTest extends StressPools {
  private static final int RUNS = 400;

  @Test
  void manyRunsAtOnce_keepTheirLimitsAndAllComplete() throws Exception {
    Random random = new Random(42);
    List<CompletableFuture<?>> checks = new ArrayList<>();
    for (int r = 0; r < RUNS; r++) {
      long seed = random.nextLong();
      checks.add(CompletableFuture.runAsync(() -> oneRun(new Random(seed)), pool));
    }
    for (CompletableFuture<?> check : checks) {
      check.get(120, TimeUnit.SECONDS);
    }
  }

  private void oneRun(Random random) {
    int limit = 1 + random.nextInt(8);
    int count = random.nextInt(120);
    boolean weighted = random.nextInt(3) == 0;
    boolean blocking = random.nextBoolean();
    boolean collectAll = random.nextInt(4) == 0;
    double failRate = random.nextInt(3) == 0 ? 0.05 : 0;
    boolean cancelRun = random.nextInt(6) == 0;
    int[] weights = IntStream.range(0, count).map(i -> 1 + random.nextInt(limit)).toArray();
    boolean[] fails = new boolean[count];
    int[] delays = new int[count];
    for (int i = 0; i < count; i++) {
      fails[i] = random.nextDouble() < failRate;
      delays[i] = random.nextInt(3);
    }
    AtWork work = new AtWork();
    Parallel parallel = Parallel.limit(limit);
    if (weighted) {
      parallel = parallel.<Integer>weighted(i -> weights[i]);
    }
    if (collectAll) {
      parallel = parallel.collectingAllErrors();
    }
    List<Integer> items = IntStream.range(0, count).boxed().toList();
    CompletableFuture<List<Integer>> run;
    if (blocking) {
      run =
          parallel.map(
              items,
              pool,
              i -> {
                int w = weighted ? weights[i] : 1;
                work.begin(w);
                try {
                  if (delays[i] > 0) {
                    Thread.sleep(delays[i]);
                  }
                  if (fails[i]) {
                    throw new IllegalStateException("item " + i);
                  }
                  return i;
                } catch (InterruptedException e) {
                  throw new CancellationException("interrupted");
                } finally {
                  work.end(w);
                }
              });
    } else {
      run =
          parallel.mapAsync(
              items,
              i -> {
                int w = weighted ? weights[i] : 1;
                work.begin(w);
                CompletableFuture<Integer> f = new CompletableFuture<>();
                Runnable finish =
                    () -> {
                      // the work ends before its future says so
                      work.end(w);
                      if (fails[i]) {
                        f.completeExceptionally(new IllegalStateException("item " + i));
                      } else {
                        f.complete(i);
                      }
                    };
                if (delays[i] == 0) {
                  finish.run();
                } else {
                  timer.schedule(finish, delays[i], TimeUnit.MILLISECONDS);
                }
                return f;
              });
    }
    if (cancelRun) {
      timer.schedule(() -> run.cancel(false), random.nextInt(5), TimeUnit.MILLISECONDS);
    }
    boolean anyFails = false;
    for (boolean f : fails) {
      anyFails |= f;
    }
    try {
      List<Integer> out = run.get(60, TimeUnit.SECONDS);
      if (anyFails) {
        fail("a run with failing items succeeded");
      }
      assertEquals(items, out);
    } catch (CancellationException e) {
      assertTrue(cancelRun, "cancelled although nobody cancelled it");
    } catch (ExecutionException e) {
      assertTrue(anyFails, "failed without a failing item: " + e.getCause());
      assertTrue(e.getCause().getMessage().startsWith("item "), e.getCause().toString());
    } catch (TimeoutException e) {
      fail("a run did not complete: limit " + limit + ", " + count + " items");
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertTrue(
        work.worst.get() <= limit, "at work at once: " + work.worst.get() + ", limit " + limit);
    if (blocking && !cancelRun) {
      // a failed or finished blocking run completes only once its threads have left
      assertEquals(0, work.atWork.get(), "nothing at work once the run has completed");
    }
  }

  @Test
  void blockingItemsOnVirtualThreads_keepTheLimitAndAreInterruptedOnFailure() throws Exception {
    Assumptions.assumeTrue(
        Runtime.version().feature() >= 21,
        "virtual threads need JDK 21+; .ci/run runs this suite again on the newest JDK installed");
    ExecutorService virtualThreads = FifoSemaphoreStressTest.newVirtualThreadPerTaskExecutor();
    try {
      AtWork work = new AtWork();
      List<Integer> items = IntStream.range(0, 5_000).boxed().toList();
      List<Integer> out =
          Parallel.limit(64)
              .map(
                  items,
                  virtualThreads,
                  i -> {
                    work.begin(1);
                    try {
                      Thread.sleep(1);
                      return i;
                    } catch (InterruptedException e) {
                      throw new IllegalStateException(e);
                    } finally {
                      work.end(1);
                    }
                  })
              .get(60, TimeUnit.SECONDS);
      assertEquals(items, out);
      assertTrue(work.worst.get() <= 64, "at work at once: " + work.worst.get());
      assertTrue(work.worst.get() > 1, "it ran items side by side");

      // One item fails: the others, asleep, are interrupted, and the run fails only once every
      // one of them has left.
      AtWork failing = new AtWork();
      CompletableFuture<List<Integer>> run =
          Parallel.limit(64)
              .map(
                  items,
                  virtualThreads,
                  i -> {
                    failing.begin(1);
                    try {
                      if (i == 10) { // among the first 64, which start at once
                        throw new IllegalArgumentException("item 10");
                      }
                      Thread.sleep(60_000);
                      return i;
                    } catch (InterruptedException e) {
                      throw new CancellationException("interrupted");
                    } finally {
                      failing.end(1);
                    }
                  });
      ExecutionException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class, () -> run.get(30, TimeUnit.SECONDS));
      assertEquals("item 10", e.getCause().getMessage());
      assertEquals(0, failing.atWork.get(), "every interrupted item had left");
    } finally {
      virtualThreads.shutdownNow();
    }
  }
}
