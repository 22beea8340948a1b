package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Barrier.Arrival;
import dev.jeton.internal.engine.WaitNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Parties that each pass a fixed number of generations, arriving every way there is (blocking,
 * asynchronous, timed so short that many give up, cancelled at once), while the action throws now
 * and then: every generation releases its parties exactly once each, with indices 0 to {@code
 * parties - 1} or one shared exception, the action runs once per generation, every future
 * completes, and nothing is left queued.
 *
 * <p>A party that gives up must arrive again in the same generation; whether it gave up in time
 * (its arrival taken back) or too late (its arrival counted) is read from its node's final status.
 * Each run is bounded by its count of generations; the seeds are fixed per party.
 */
class FifoBarrierStressTest {

  /** Every generation whose action throws: one in this many. */
  private static final int BREAK_EVERY = 37;

  @RegisterExtension final TestThreads threads = new TestThreads();

  @Test
  void platformThreads_mixingEveryKindOfArrival_passEveryGenerationWhole() throws Exception {
    Run run = new Run(8, 5000);
    threads.runAll(run.parties, run::party);
    run.check();
  }

  @Test
  void virtualThreads_mixingEveryKindOfArrival_passEveryGenerationWhole() throws Exception {
    ExecutorService executor = TestThreads.virtualThreadPerTaskExecutor();
    Run run = new Run(200, 500);
    List<Future<?>> parties = new ArrayList<>();
    try {
      for (int p = 0; p < run.parties; p++) {
        int party = p;
        parties.add(executor.submit(() -> run.party(party)));
      }
    } finally {
      executor.shutdown();
    }
    assertTrue(executor.awaitTermination(5, TimeUnit.MINUTES), "the parties finished");
    for (Future<?> f : parties) {
      f.get();
    }
    run.check();
  }

  /** One run: the barrier, and what each generation gave its parties. */
  private static final class Run {
    final int parties;
    final int generations;
    final AtomicInteger actions = new AtomicInteger();
    final Barrier barrier;
    final Map<Long, Set<Integer>> indices = new ConcurrentHashMap<>();
    final Map<Long, Set<BarrierBrokenException>> failures = new ConcurrentHashMap<>();
    final Map<Long, AtomicInteger> passed = new ConcurrentHashMap<>();
    final Queue<CompletableFuture<Arrival>> futures = new ConcurrentLinkedQueue<>();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final AtomicInteger gaveUpInTime = new AtomicInteger();
    final AtomicInteger gaveUpTooLate = new AtomicInteger();

    Run(int parties, int generations) {
      this.parties = parties;
      this.generations = generations;
      this.barrier =
          Barrier.builder()
              .parties(parties)
              .action(
                  () -> {
                    if (actions.incrementAndGet() % BREAK_EVERY == 0) {
                      throw new IllegalStateException("the action fails on purpose");
                    }
                  })
              .build();
    }

    /** Passes every generation, arriving again each time it gave up in time. */
    void party(int party) {
      SplittableRandom random = new SplittableRandom(party);
      try {
        for (long g = 0; g < generations; g++) {
          while (!arrive(random)) {
            // gave up in time: the arrival was taken back, so this party arrives again
          }
        }
      } catch (Throwable e) {
        violations.add("party " + party + ": " + e);
      }
    }

    /** Arrives once; true if the arrival counted (its outcome recorded), false if taken back. */
    private boolean arrive(SplittableRandom random) throws InterruptedException {
      switch (random.nextInt(5)) {
        case 0 -> {
          try {
            record(barrier.await());
          } catch (BarrierBrokenException e) {
            record(e);
          }
          return true;
        }
        case 1 -> {
          try {
            record(barrier.await(Duration.ofNanos(random.nextInt(200_000))));
          } catch (BarrierBrokenException e) {
            record(e);
          } catch (TimeoutException e) {
            gaveUpInTime.incrementAndGet(); // the contract: a timeout takes the arrival back
            return false;
          }
          return true;
        }
        case 2 -> {
          CompletableFuture<Arrival> f = barrier.awaitAsync();
          futures.add(f);
          try {
            record(f.join());
          } catch (CompletionException e) {
            record((BarrierBrokenException) e.getCause());
          }
          return true;
        }
        case 3 -> {
          CompletableFuture<Arrival> f =
              barrier.awaitAsync(Duration.ofNanos(random.nextInt(200_000)));
          futures.add(f);
          try {
            f.join();
          } catch (CompletionException e) {
            // a timeout, in time or too late, or the generation broke: the node tells
          }
          return settled(f, WaitNode.TIMED_OUT);
        }
        default -> {
          CompletableFuture<Arrival> f = barrier.awaitAsync();
          futures.add(f);
          f.cancel(false);
          return settled(f, WaitNode.CANCELLED);
        }
      }
    }

    /** Records the outcome of a future that may have given up, from its node. */
    @SuppressWarnings("ThreadPriorityCheck") // yield: see below
    private boolean settled(CompletableFuture<Arrival> f, int withdrawn) {
      WaitNode node = ((WaitNode.NodeFuture<?>) f).node();
      while (!node.isFinal()) { // settling: the action is running
        Thread.yield(); // lets a virtual thread running the action have the carrier
      }
      // CANCELLED too for a timed-out one, if an arrival took it out before its withdrawal came
      if (node.status() == withdrawn || node.status() == WaitNode.CANCELLED) {
        gaveUpInTime.incrementAndGet();
        return false;
      }
      if (f.isCancelled() || (f.isCompletedExceptionally() && node.status() == WaitNode.GRANTED)) {
        gaveUpTooLate.incrementAndGet();
      }
      if (node.status() == WaitNode.GRANTED) {
        record((Arrival) node.outcome());
      } else {
        record((BarrierBrokenException) node.outcome());
      }
      return true;
    }

    private void record(Arrival a) {
      passed.computeIfAbsent(a.generation(), g -> new AtomicInteger()).incrementAndGet();
      if (!indices
          .computeIfAbsent(a.generation(), g -> ConcurrentHashMap.newKeySet())
          .add(a.index())) {
        violations.add("index given twice: " + a);
      }
    }

    private void record(BarrierBrokenException e) {
      passed.computeIfAbsent(e.generation(), g -> new AtomicInteger()).incrementAndGet();
      failures.computeIfAbsent(e.generation(), g -> ConcurrentHashMap.newKeySet()).add(e);
    }

    void check() throws Exception {
      for (CompletableFuture<Arrival> f : futures) {
        assertTrue(f.isDone(), "every future completed");
      }
      TestThreads.assertNoViolations(violations);
      assertEquals(generations, barrier.generation());
      assertEquals(generations, actions.get(), "the action ran once per generation");
      assertEquals(0, barrier.arrived(), "nothing left queued: " + barrier);
      Set<Integer> all = IntStream.range(0, parties).boxed().collect(Collectors.toSet());
      for (long g = 0; g < generations; g++) {
        assertEquals(parties, passed.get(g).get(), "generation " + g + " passed each party once");
        if ((g + 1) % BREAK_EVERY == 0) {
          assertEquals(1, failures.get(g).size(), "one exception for generation " + g);
          assertEquals(null, indices.get(g));
        } else {
          assertEquals(all, indices.get(g), "generation " + g);
          assertEquals(null, failures.get(g));
        }
      }
      assertTrue(gaveUpInTime.get() > 0, "parties really gave up in time");
    }
  }
}
