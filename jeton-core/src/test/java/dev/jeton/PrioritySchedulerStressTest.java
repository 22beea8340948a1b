package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Many producers submitting blocking and async tasks to one {@link PriorityScheduler}, with random
 * priorities, failures and cancellations (before and after the tasks start), then a shutdown: never
 * more than the limit at work, every future completes, a task cancelled before it could start never
 * runs, and at the end nothing is queued or running and the scheduler has terminated.
 */
class PrioritySchedulerStressTest extends StressPools {
  private static final int LIMIT = 4;

  @Test
  void manyProducers_randomPrioritiesFailuresAndCancellations_keepTheLimitAndAllComplete()
      throws Exception {
    run(pool, 8, 1500);
  }

  @Test
  void blockingTasksOnVirtualThreads_keepTheLimitAndAllComplete() throws Exception {
    Assumptions.assumeTrue(
        Runtime.version().feature() >= 21,
        "virtual threads need JDK 21+; .ci/run runs this suite again on the newest JDK installed");
    ExecutorService virtualThreads = FifoSemaphoreStressTest.newVirtualThreadPerTaskExecutor();
    try {
      run(virtualThreads, 16, 400);
    } finally {
      virtualThreads.shutdownNow();
    }
  }

  private void run(ExecutorService executor, int producers, int perProducer) throws Exception {
    AtWork work = new AtWork();
    PriorityScheduler scheduler =
        PriorityScheduler.builder()
            .limit(LIMIT)
            .executor(executor)
            .aging(Duration.ofMillis(1))
            .build();
    List<CompletableFuture<List<CompletableFuture<Integer>>>> submitted = new ArrayList<>();
    for (int p = 0; p < producers; p++) {
      long seed = p;
      submitted.add(
          CompletableFuture.supplyAsync(
              () -> produce(scheduler, work, new SplittableRandom(seed), perProducer), pool));
    }
    List<CompletableFuture<Integer>> futures = new ArrayList<>();
    for (var s : submitted) {
      futures.addAll(s.get(60, TimeUnit.SECONDS));
    }
    scheduler.shutdown();
    scheduler.terminated().get(60, TimeUnit.SECONDS);
    int cancelled = 0;
    for (CompletableFuture<Integer> f : futures) {
      assertTrue(f.isDone(), "every future completes");
      try {
        f.get();
      } catch (CancellationException e) {
        cancelled++;
      } catch (ExecutionException e) {
        assertTrue(e.getCause().getMessage().startsWith("task "), e.getCause().toString());
      }
    }
    assertTrue(work.worst.get() <= LIMIT, "at work at once: " + work.worst.get());
    assertTrue(work.worst.get() > 1, "tasks ran side by side");
    assertEquals(0, work.atWork.get(), "nothing at work after termination");
    assertTrue(cancelled > 0 && work.ran.get() < futures.size(), "some were cancelled first");
    assertEquals(0, scheduler.queued());
    assertEquals(0, scheduler.running());
    assertTrue(scheduler.isTerminated());
  }

  private List<CompletableFuture<Integer>> produce(
      PriorityScheduler scheduler, AtWork work, SplittableRandom random, int count) {
    List<CompletableFuture<Integer>> futures = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int id = i;
      int priority = random.nextInt(5) - 2;
      boolean fails = random.nextInt(10) == 0;
      int delayMicros = random.nextInt(300);
      CompletableFuture<Integer> f;
      if (random.nextBoolean()) {
        f =
            scheduler.submit(
                priority,
                () -> {
                  work.begin();
                  try {
                    TimeUnit.MICROSECONDS.sleep(delayMicros);
                    if (fails) {
                      throw new IllegalStateException("task " + id);
                    }
                    return id;
                  } finally {
                    work.end();
                  }
                });
      } else {
        f =
            scheduler.submitAsync(
                priority,
                () -> {
                  work.begin();
                  CompletableFuture<Integer> stage = new CompletableFuture<>();
                  timer.schedule(
                      () -> {
                        work.end(); // the work ends before its stage says so
                        if (fails) {
                          stage.completeExceptionally(new IllegalStateException("task " + id));
                        } else {
                          stage.complete(id);
                        }
                      },
                      delayMicros,
                      TimeUnit.MICROSECONDS);
                  return stage;
                });
      }
      switch (random.nextInt(8)) {
        case 0 -> f.cancel(random.nextBoolean()); // most often before it starts
        case 1 ->
            timer.schedule(
                () -> f.cancel(random.nextBoolean()), // before or after it starts
                random.nextInt(500),
                TimeUnit.MICROSECONDS);
        default -> {}
      }
      futures.add(f);
      if (random.nextInt(20) == 0) {
        Thread.yield();
      }
    }
    return futures;
  }

  @Test
  void cancelledWhileEverySlotIsTaken_neverRun_underConcurrentProducers() throws Exception {
    AtWork work = new AtWork();
    PriorityScheduler scheduler = PriorityScheduler.builder().limit(LIMIT).executor(pool).build();
    CountDownLatch release = new CountDownLatch(1);
    for (int i = 0; i < LIMIT; i++) {
      scheduler.submit(Priority.CRITICAL, () -> release.await(30, TimeUnit.SECONDS));
    }
    // Every slot is taken, and stays taken until `release`: whatever is cancelled meanwhile is
    // cancelled before it could start.
    List<CompletableFuture<List<Boolean>>> producers = new ArrayList<>();
    List<List<AtomicInteger>> ran = new ArrayList<>();
    for (int p = 0; p < 6; p++) {
      SplittableRandom random = new SplittableRandom(p);
      List<AtomicInteger> runs = new ArrayList<>();
      ran.add(runs);
      producers.add(
          CompletableFuture.supplyAsync(
              () -> {
                List<Boolean> cancelled = new ArrayList<>();
                for (int i = 0; i < 300; i++) {
                  AtomicInteger runCount = new AtomicInteger();
                  runs.add(runCount);
                  CompletableFuture<Integer> f =
                      random.nextBoolean()
                          ? scheduler.submit(
                              random.nextInt(4),
                              () -> {
                                work.begin();
                                runCount.incrementAndGet();
                                work.end();
                                return 1;
                              })
                          : scheduler.submitAsync(
                              random.nextInt(4),
                              () -> {
                                work.begin();
                                runCount.incrementAndGet();
                                work.end();
                                return CompletableFuture.completedFuture(1);
                              });
                  cancelled.add(random.nextInt(3) == 0 && f.cancel(random.nextBoolean()));
                }
                return cancelled;
              },
              pool));
    }
    List<List<Boolean>> cancelled = new ArrayList<>();
    for (var p : producers) {
      cancelled.add(p.get(30, TimeUnit.SECONDS));
    }
    assertEquals(0, work.ran.get(), "nothing ran while every slot was taken");
    release.countDown();
    scheduler.close();
    int withdrawn = 0;
    for (int p = 0; p < cancelled.size(); p++) {
      for (int i = 0; i < cancelled.get(p).size(); i++) {
        int runs = ran.get(p).get(i).get();
        if (cancelled.get(p).get(i)) {
          withdrawn++;
          assertEquals(0, runs, "a task cancelled before it started ran");
        } else {
          assertEquals(1, runs, "a task not cancelled ran once");
        }
      }
    }
    assertTrue(withdrawn > 0);
    assertTrue(work.worst.get() <= LIMIT, "at work at once: " + work.worst.get());
    assertEquals(0, scheduler.queued());
  }
}
