package dev.jeton;

import static dev.jeton.TestThreads.awaitLatch;
import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Barrier.Arrival;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A party that gives up after its generation tripped (issue 29): its arrival counted, so it gets
 * the generation's outcome, as {@code CyclicBarrier} does. Interrupted, it returns its arrival (or
 * throws the broken generation's exception) with its interrupt status set again; its future's
 * cancel and timeout are refused. Before, an interrupted party threw {@code InterruptedException}
 * although the others passed with its arrival, and a cancelled future said cancelled.
 */
class FifoBarrierAfterTheTripTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  /** What a blocked party's await gave: its arrival or what it threw, and its interrupt status. */
  private record Outcome(
      @Nullable Arrival arrival, @Nullable Throwable thrown, boolean interrupted) {}

  /** A party's thread, and its outcome once it has one. */
  private record Party(Thread thread, CompletableFuture<Outcome> outcome) {}

  /** Starts a party that arrives and waits, and records its outcome. */
  private Party startParty(Barrier barrier) {
    CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    Thread thread =
        threads.start(
            () -> {
              try {
                Arrival a = barrier.await();
                outcome.complete(new Outcome(a, null, Thread.currentThread().isInterrupted()));
              } catch (Exception e) {
                outcome.complete(new Outcome(null, e, Thread.currentThread().isInterrupted()));
              }
            });
    return new Party(thread, outcome);
  }

  /**
   * The party waits; the last arrival trips the generation and pauses in the action; the party is
   * interrupted then, with its node settling; then the action ends. Returns the party's outcome and
   * the last arrival's.
   */
  private List<CompletableFuture<?>> interruptWhileTheActionRuns(boolean actionThrows)
      throws Exception {
    CountDownLatch actionStarted = new CountDownLatch(1);
    CountDownLatch finishAction = new CountDownLatch(1);
    Barrier barrier = twoPartiesPausingInTheAction(actionStarted, finishAction, actionThrows);
    Party party = startParty(barrier);
    awaitTrue(() -> barrier.arrived() == 1, "the party to arrive");
    CompletableFuture<Object> last = new CompletableFuture<>();
    threads.start(
        () -> {
          try {
            last.complete(barrier.await());
          } catch (BarrierBrokenException e) {
            last.complete(e);
          }
        });
    awaitLatch(actionStarted);
    awaitTrue(
        () -> party.thread().getState() == Thread.State.WAITING, "the party to park, settling");
    party.thread().interrupt();
    assertFalse(party.outcome().isDone(), "no outcome before the action has finished");
    finishAction.countDown();
    return List.of(party.outcome(), last);
  }

  @Test
  void interruptedAfterTheTrip_returnsItsArrival_withItsInterruptStatusSet() throws Exception {
    List<CompletableFuture<?>> outcomes = interruptWhileTheActionRuns(false);
    Outcome party = (Outcome) done(outcomes.get(0));
    assertEquals(new Outcome(new Arrival(0, 0), null, true), party);
    assertEquals(new Arrival(1, 0), done(outcomes.get(1)));
  }

  @Test
  void interruptedAfterABreakingTrip_throwsTheGenerationsException_withItsInterruptStatusSet()
      throws Exception {
    List<CompletableFuture<?>> outcomes = interruptWhileTheActionRuns(true);
    Outcome party = (Outcome) done(outcomes.get(0));
    assertInstanceOf(BarrierBrokenException.class, party.thrown());
    assertTrue(party.interrupted(), "the interrupt status is set again");
    assertEquals(party.thrown(), done(outcomes.get(1)), "one exception for the generation");
  }

  @Test
  void cancelAfterTheTrip_isRefused_theFutureCompletesWithTheArrival() throws Exception {
    CountDownLatch actionStarted = new CountDownLatch(1);
    CountDownLatch finishAction = new CountDownLatch(1);
    Barrier barrier = twoPartiesPausingInTheAction(actionStarted, finishAction, false);
    CompletableFuture<Arrival> first = barrier.awaitAsync();
    CompletableFuture<CompletableFuture<Arrival>> last =
        CompletableFuture.supplyAsync(barrier::awaitAsync);
    awaitLatch(actionStarted);

    assertFalse(first.cancel(false), "the arrival counted: too late to take it back");
    assertFalse(first.completeExceptionally(new IllegalStateException("given up")));
    finishAction.countDown();

    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(new Arrival(1, 0), done(done(last)));
    assertEquals(1, barrier.generation());
    assertEquals(0, barrier.arrived());
  }

  @Test
  void timeoutAfterTheTrip_doesNotFire_theFutureCompletesWithTheArrival() throws Exception {
    CountDownLatch actionStarted = new CountDownLatch(1);
    CountDownLatch finishAction = new CountDownLatch(1);
    Queue<Runnable> timeouts = new ConcurrentLinkedQueue<>();
    FifoBarrier barrier =
        new FifoBarrier(
            null,
            2,
            () -> {
              actionStarted.countDown();
              awaitLatch(finishAction);
            },
            null,
            (onTimeout, nanos) -> {
              timeouts.add(onTimeout);
              return new CompletableFuture<Void>();
            });
    CompletableFuture<Arrival> first = barrier.awaitAsync(Duration.ofSeconds(1));
    CompletableFuture<CompletableFuture<Arrival>> last =
        CompletableFuture.supplyAsync(barrier::awaitAsync);
    awaitLatch(actionStarted);

    timeouts.forEach(Runnable::run); // the timer fires while the action runs
    assertFalse(first.isDone());
    finishAction.countDown();

    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(new Arrival(1, 0), done(done(last)));
  }

  /**
   * Four parties pass 2,000 generations while an interrupter interrupts them at random. A party
   * whose await throws InterruptedException arrives again, in the same generation: so every
   * generation must be passed by every party, and each party must pass the generations one after
   * the other. An arrival that counted although its await threw would leave its generation short of
   * that party (about 3.5% of parties did before the fix).
   */
  @Test
  void interruptStorm_noGenerationIsShortOfAParty_andCountedArrivalsKeepTheirInterrupt()
      throws Exception {
    int parties = 4;
    int generations = 2_000;
    Barrier barrier = Barrier.create(parties);
    Map<Long, Set<Integer>> passedBy = new ConcurrentHashMap<>();
    Queue<String> violations = new ConcurrentLinkedQueue<>();
    AtomicInteger takenBack = new AtomicInteger();
    AtomicInteger keptTheirInterrupt = new AtomicInteger();
    List<Thread> workers = new ArrayList<>();
    for (int p = 0; p < parties; p++) {
      int party = p;
      workers.add(
          threads.start(
              () -> {
                long next = 0;
                while (next < generations && barrier.generation() < generations) {
                  Arrival a;
                  try {
                    a = barrier.await();
                  } catch (InterruptedException e) {
                    takenBack.incrementAndGet(); // its arrival taken back: it arrives again
                    continue;
                  } catch (BarrierBrokenException e) {
                    return; // broken by the test, to release a party left waiting at the end
                  }
                  if (Thread.interrupted()) {
                    keptTheirInterrupt.incrementAndGet(); // interrupted after its arrival counted
                  }
                  if (a.generation() != next) {
                    violations.add(
                        "party "
                            + party
                            + " passed generation "
                            + a.generation()
                            + " next, not "
                            + next
                            + ": an arrival counted although await threw");
                  }
                  passedBy
                      .computeIfAbsent(a.generation(), g -> ConcurrentHashMap.newKeySet())
                      .add(party);
                  next = a.generation() + 1;
                }
              }));
    }
    AtomicBoolean stop = new AtomicBoolean();
    threads.start(
        () -> {
          SplittableRandom random = new SplittableRandom(29);
          while (!stop.get()) {
            workers.get(random.nextInt(parties)).interrupt();
            LockSupport.parkNanos(random.nextInt(5_000, 50_000));
          }
        });
    awaitTrue(() -> barrier.generation() >= generations || !violations.isEmpty(), "the run");
    stop.set(true);
    for (Thread worker : workers) {
      while (worker.isAlive()) { // one may wait alone in a generation the others never start
        barrier.breakBarrier(new IllegalStateException("the run is over"));
        worker.join(TimeUnit.MILLISECONDS.toMillis(10));
      }
    }
    threads.joinAll();
    TestThreads.assertNoViolations(violations);
    Set<Integer> all = IntStream.range(0, parties).boxed().collect(Collectors.toSet());
    for (long g = 0; g < generations; g++) {
      assertEquals(all, passedBy.get(g), "generation " + g + " passed by every party");
    }
    assertTrue(takenBack.get() > 0, "some interrupts took arrivals back");
    assertTrue(keptTheirInterrupt.get() > 0, "some came after the trip, and were kept");
  }

  /**
   * A barrier of two parties whose action signals {@code started}, waits for {@code finish}, and
   * then throws if {@code throwing}.
   */
  private static Barrier twoPartiesPausingInTheAction(
      CountDownLatch started, CountDownLatch finish, boolean throwing) {
    return Barrier.builder()
        .parties(2)
        .action(
            () -> {
              started.countDown();
              awaitLatch(finish);
              if (throwing) {
                throw new IllegalStateException("the action fails on purpose");
              }
            })
        .build();
  }
}
