package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static dev.jeton.TestThreads.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Barrier.Arrival;
import dev.jeton.TestThreads.Blocked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The in-process barrier: every point of {@link Barrier}'s contract, one at a time. */
class FifoBarrierTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  // ---------------------------------------------------------------- tripping and reuse

  @Test
  void lastArrival_releasesEveryPartyWithItsIndexAndTheGeneration() throws Exception {
    Barrier barrier = Barrier.create(3);
    CompletableFuture<Arrival> first = barrier.awaitAsync();
    CompletableFuture<Arrival> second = barrier.awaitAsync();
    assertFalse(first.isDone() || second.isDone(), "two of three arrived: no one passes");
    assertEquals(2, barrier.arrived());

    assertEquals(new Arrival(2, 0), barrier.await());

    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(new Arrival(1, 0), done(second));
    assertEquals(1, barrier.generation());
    assertEquals(0, barrier.arrived());
  }

  @Test
  void blockingParties_overManyGenerations_eachPassWithDistinctIndices() throws Exception {
    int parties = 3;
    int generations = 300;
    Barrier barrier = Barrier.create(parties);
    ConcurrentHashMap<Long, Set<Integer>> indices = new ConcurrentHashMap<>();
    threads.runAll( // throws what a party threw
        parties,
        party -> {
          for (int g = 0; g < generations; g++) {
            Arrival a = barrier.await();
            assertEquals(g, a.generation(), "each party passes every generation in turn");
            indices
                .computeIfAbsent(a.generation(), k -> ConcurrentHashMap.newKeySet())
                .add(a.index());
          }
        });
    assertEquals(generations, barrier.generation());
    for (long g = 0; g < generations; g++) {
      assertEquals(Set.of(0, 1, 2), indices.get(g), "generation " + g);
    }
  }

  // ---------------------------------------------------------------- the action

  @Test
  void action_runsOnceOnTheLastArriver_beforeAnyoneIsReleased() throws Exception {
    List<CompletableFuture<Arrival>> waiting = new ArrayList<>();
    AtomicInteger runs = new AtomicInteger();
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    AtomicReference<String> seenByAction = new AtomicReference<>();
    Barrier barrier =
        Barrier.builder()
            .parties(3)
            .action(
                () -> {
                  runs.incrementAndGet();
                  ranOn.set(Thread.currentThread());
                  seenByAction.set(
                      waiting.stream().anyMatch(CompletableFuture::isDone) ? "released" : "held");
                })
            .build();
    waiting.add(barrier.awaitAsync());
    waiting.add(barrier.awaitAsync());
    assertEquals(0, runs.get());

    barrier.await();

    assertEquals(1, runs.get());
    assertSame(Thread.currentThread(), ranOn.get());
    assertEquals("held", seenByAction.get(), "the action runs before anyone is released");
    for (CompletableFuture<Arrival> f : waiting) {
      done(f);
    }
  }

  @Test
  void actionThatThrows_failsEveryPartyWithOneException_andTheNextGenerationIsClean()
      throws Exception {
    AtomicInteger runs = new AtomicInteger();
    IllegalStateException boom = new IllegalStateException("boom");
    Barrier barrier =
        Barrier.builder()
            .parties(3)
            .name("stage")
            .action(
                () -> {
                  if (runs.getAndIncrement() == 0) {
                    throw boom;
                  }
                })
            .build();
    CompletableFuture<Arrival> first = barrier.awaitAsync();
    CompletableFuture<Arrival> second = barrier.awaitAsync();

    BarrierBrokenException thrown = assertThrows(BarrierBrokenException.class, barrier::await);

    assertSame(boom, thrown.getCause());
    assertEquals(0, thrown.generation());
    assertTrue(thrown.getMessage().contains("barrier 'stage' generation 0"), thrown.getMessage());
    assertTrue(thrown.getMessage().contains("boom"), thrown.getMessage());
    assertSame(thrown, failureOf(first), "one exception for every party");
    assertSame(thrown, failureOf(second));
    assertEquals(1, barrier.generation());

    List<CompletableFuture<Arrival>> next = List.of(barrier.awaitAsync(), barrier.awaitAsync());
    assertEquals(new Arrival(2, 1), barrier.await());
    assertEquals(new Arrival(0, 1), done(next.get(0)));
    assertEquals(new Arrival(1, 1), done(next.get(1)));
    assertEquals(2, runs.get());
  }

  @Test
  void breakBarrier_failsEveryWaiter_andTheNextGenerationIsClean() throws Exception {
    Barrier barrier = Barrier.create(3);
    CompletableFuture<Arrival> first = barrier.awaitAsync();
    CompletableFuture<Arrival> second = barrier.awaitAsync();
    RuntimeException cause = new RuntimeException("shutting down");

    barrier.breakBarrier(cause);

    Throwable failed = failureOf(first);
    assertInstanceOf(BarrierBrokenException.class, failed);
    assertSame(cause, failed.getCause());
    assertSame(failed, failureOf(second));
    assertEquals(0, ((BarrierBrokenException) failed).generation());
    assertEquals(1, barrier.generation());
    assertEquals(0, barrier.arrived());

    barrier.breakBarrier(cause); // no one waiting: the generation ends all the same
    assertEquals(2, barrier.generation());

    CompletableFuture<Arrival> a = barrier.awaitAsync();
    CompletableFuture<Arrival> b = barrier.awaitAsync();
    assertEquals(new Arrival(2, 2), barrier.await());
    assertEquals(new Arrival(0, 2), done(a));
    assertEquals(new Arrival(1, 2), done(b));
  }

  @Test
  void breakBarrier_wakesABlockedParty() throws Exception {
    Barrier barrier = Barrier.create(2);
    Blocked party = threads.startBlocked(barrier::await);
    awaitTrue(() -> barrier.arrived() == 1, "the party to arrive");
    IllegalStateException cause = new IllegalStateException("stop");

    barrier.breakBarrier(cause);

    Throwable thrown = done(party.thrown());
    assertInstanceOf(BarrierBrokenException.class, thrown);
    assertSame(cause, thrown.getCause());
    party.thread().join();
  }

  // ---------------------------------------------------------------- giving up

  @Test
  void blockingTimeout_takesTheArrivalBack() throws Exception {
    Barrier barrier = Barrier.builder().parties(3).name("x").build();
    CompletableFuture<Arrival> first = barrier.awaitAsync();

    TimeoutException e =
        assertThrows(TimeoutException.class, () -> barrier.await(Duration.ofMillis(10)));

    assertEquals("timed out after PT0.01S waiting at barrier 'x' for 1 more party", e.getMessage());
    assertEquals(1, barrier.arrived());
    CompletableFuture<Arrival> second = barrier.awaitAsync();
    assertFalse(first.isDone() || second.isDone(), "the timed-out arrival does not count");
    assertEquals(new Arrival(2, 0), barrier.await());
    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(new Arrival(1, 0), done(second));
  }

  @Test
  void asyncTimeout_takesTheArrivalBack() throws Exception {
    Barrier barrier = Barrier.create(2);
    CompletableFuture<Arrival> timed = barrier.awaitAsync(Duration.ofMillis(10));

    Throwable failed = failureOf(timed);

    assertInstanceOf(TimeoutException.class, failed);
    assertTrue(failed.getMessage().contains("for 1 more party"), failed.getMessage());
    assertEquals(0, barrier.arrived());
    CompletableFuture<Arrival> next = barrier.awaitAsync();
    assertFalse(next.isDone(), "the timed-out arrival does not count");
    assertEquals(new Arrival(1, 0), barrier.await());
    assertEquals(new Arrival(0, 0), done(next));
  }

  @Test
  void cancel_takesTheArrivalBack_andTheOthersWaitForARealLastArrival() throws Exception {
    Barrier barrier = Barrier.create(3);
    CompletableFuture<Arrival> first = barrier.awaitAsync();
    CompletableFuture<Arrival> cancelled = barrier.awaitAsync();

    assertTrue(cancelled.cancel(false));

    assertEquals(1, barrier.arrived());
    CompletableFuture<Arrival> second = barrier.awaitAsync();
    assertFalse(first.isDone() || second.isDone());
    CompletableFuture<Arrival> last = barrier.awaitAsync();
    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(new Arrival(1, 0), done(second));
    assertEquals(new Arrival(2, 0), done(last));
  }

  /**
   * Regression: a future's callbacks run when it is cancelled, before its withdrawal reaches the
   * queue; a callback that arrives again tripped the generation with the cancelled arrival in it.
   */
  @Test
  void arrivingFromTheCallbackOfACancelledFuture_doesNotCountTheCancelledArrival()
      throws Exception {
    Barrier barrier = Barrier.create(2);
    CompletableFuture<Arrival> cancelled = barrier.awaitAsync();
    AtomicReference<CompletableFuture<Arrival>> again = new AtomicReference<>();
    var unused = cancelled.whenComplete((arrival, failure) -> again.set(barrier.awaitAsync()));

    assertTrue(cancelled.cancel(false));

    assertFalse(again.get().isDone(), "the cancelled arrival must not count");
    assertEquals(1, barrier.arrived());
    assertEquals(new Arrival(1, 0), barrier.await());
    assertEquals(new Arrival(0, 0), done(again.get()));
  }

  @Test
  void completingFromOutside_takesTheArrivalBack() throws Exception {
    Barrier barrier = Barrier.create(2);
    CompletableFuture<Arrival> f = barrier.awaitAsync();
    assertTrue(f.complete(new Arrival(7, 7)));
    assertEquals(0, barrier.arrived());
  }

  @Test
  void interrupt_whileWaiting_takesTheArrivalBack() throws Exception {
    Barrier barrier = Barrier.create(2);
    Blocked party = threads.startBlocked(barrier::await);
    awaitTrue(() -> barrier.arrived() == 1, "the party to arrive");

    party.thread().interrupt();

    assertInstanceOf(InterruptedException.class, done(party.thrown()));
    party.thread().join();
    assertEquals(0, barrier.arrived());
    assertEquals(0, barrier.generation());
  }

  @Test
  void interrupt_beforeArriving_throwsWithoutArriving() {
    Barrier barrier = Barrier.create(2);
    Thread.currentThread().interrupt();
    assertThrows(InterruptedException.class, barrier::await);
    assertEquals(0, barrier.arrived());
  }

  // ---------------------------------------------------------------- parties

  @Test
  void register_duringAGeneration_makesItWaitForTheNewParty() throws Exception {
    Barrier barrier = Barrier.create(2);
    CompletableFuture<Arrival> first = barrier.awaitAsync();

    assertEquals(0, barrier.register());

    assertEquals(3, barrier.parties());
    CompletableFuture<Arrival> second = barrier.awaitAsync();
    assertFalse(first.isDone() || second.isDone());
    assertEquals(new Arrival(2, 0), barrier.await());
    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(1, barrier.register(), "between generations: takes part in the next");
    assertEquals(4, barrier.parties());
  }

  @Test
  void arriveAndDeregister_ofTheLastMissingParty_tripsTheGeneration() throws Exception {
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    Barrier barrier =
        Barrier.builder().parties(3).action(() -> ranOn.set(Thread.currentThread())).build();
    CompletableFuture<Arrival> first = barrier.awaitAsync();
    CompletableFuture<Arrival> second = barrier.awaitAsync();

    assertEquals(0, barrier.arriveAndDeregister());

    assertSame(Thread.currentThread(), ranOn.get());
    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(new Arrival(1, 0), done(second));
    assertEquals(2, barrier.parties());
    assertEquals(1, barrier.generation());
  }

  @Test
  void arriveAndDeregister_withOthersMissing_onlyRemovesTheParty() throws Exception {
    Barrier barrier = Barrier.create(3);
    CompletableFuture<Arrival> first = barrier.awaitAsync();

    assertEquals(0, barrier.arriveAndDeregister());

    assertEquals(2, barrier.parties());
    assertFalse(first.isDone());
    assertEquals(new Arrival(1, 0), barrier.await());
    assertEquals(new Arrival(0, 0), done(first));
  }

  @Test
  void arriveAndDeregister_whenTheActionThrows_throwsAndStillRemovesTheParty() throws Exception {
    Barrier barrier =
        Barrier.builder()
            .parties(2)
            .action(
                () -> {
                  throw new IllegalStateException("boom");
                })
            .build();
    CompletableFuture<Arrival> first = barrier.awaitAsync();

    BarrierBrokenException e =
        assertThrows(BarrierBrokenException.class, barrier::arriveAndDeregister);

    assertSame(e, failureOf(first));
    assertEquals(1, barrier.parties());
    assertEquals(1, barrier.generation());
  }

  @Test
  void lastPartyDeregistering_withNoOneWaiting_leavesZeroParties() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    Barrier barrier = Barrier.builder().parties(1).action(runs::incrementAndGet).build();

    assertEquals(0, barrier.arriveAndDeregister());

    assertEquals(0, barrier.parties());
    assertEquals(0, barrier.generation(), "no generation trips with no one in it");
    assertEquals(0, runs.get());
    IllegalStateException e = assertThrows(IllegalStateException.class, barrier::await);
    assertTrue(e.getMessage().contains("no parties"), e.getMessage());
    assertThrows(IllegalStateException.class, barrier::awaitAsync);
    assertThrows(IllegalStateException.class, barrier::arriveAndDeregister);

    assertEquals(0, barrier.register());
    assertEquals(new Arrival(0, 0), barrier.await(), "a single party trips on its own");
    assertEquals(1, runs.get());
  }

  @Test
  void register_beyondTheMostParties_isRefused() {
    Barrier barrier = Barrier.create(Integer.MAX_VALUE - 1);
    IllegalStateException e = assertThrows(IllegalStateException.class, barrier::register);
    assertTrue(e.getMessage().contains(String.valueOf(Integer.MAX_VALUE - 1)), e.getMessage());
    assertEquals(Integer.MAX_VALUE - 1, barrier.parties());
  }

  // ---------------------------------------------------------------- settings and bad input

  @Test
  void badInput_isRefusedAtOnce_namingTheValue() {
    for (int parties : new int[] {0, -3, Integer.MAX_VALUE}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Barrier.create(parties));
      assertTrue(e.getMessage().contains("was " + parties), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> Barrier.builder().parties(0));
    IllegalStateException noParties =
        assertThrows(IllegalStateException.class, () -> Barrier.builder().build());
    assertTrue(noParties.getMessage().contains("parties"));
    assertThrows(NullPointerException.class, () -> Barrier.builder().action(null));
    assertThrows(NullPointerException.class, () -> Barrier.builder().completionExecutor(null));
    assertThrows(IllegalArgumentException.class, () -> Barrier.builder().name(" "));
    Barrier barrier = Barrier.create(2);
    assertThrows(NullPointerException.class, () -> barrier.breakBarrier(null));
    assertThrows(IllegalArgumentException.class, () -> barrier.await(Duration.ofSeconds(-1)));
    assertThrows(IllegalArgumentException.class, () -> barrier.awaitAsync(Duration.ofSeconds(-1)));
    assertEquals(0, barrier.arrived());
  }

  @Test
  void completionExecutor_completesTheFutures() throws Exception {
    AtomicInteger ran = new AtomicInteger();
    Executor counting =
        task -> {
          ran.incrementAndGet();
          task.run();
        };
    Barrier barrier = Barrier.builder().parties(2).completionExecutor(counting).build();
    CompletableFuture<Arrival> first = barrier.awaitAsync();
    barrier.await();
    assertEquals(new Arrival(0, 0), done(first));
    assertEquals(1, ran.get());
  }

  @Test
  void toString_showsNamePartiesArrivedAndGeneration() {
    Barrier barrier = Barrier.builder().name("stage").parties(3).build();
    CompletableFuture<Arrival> unused = barrier.awaitAsync();
    assertEquals("Barrier[name=stage, parties=3, arrived=1, generation=0]", barrier.toString());
    barrier.breakBarrier(new RuntimeException());
    assertEquals("Barrier[parties=2, arrived=0, generation=0]", Barrier.create(2).toString());
    assertEquals("Barrier[name=stage, parties=3, arrived=0, generation=1]", barrier.toString());
  }

  // ---------------------------------------------------------------- helpers

  @Test
  void spinAtHead_whileEveryPartyCanHaveACore_andFollowsRegisterAndDeregister() {
    int processors = Runtime.getRuntime().availableProcessors();
    FifoBarrier barrier = (FifoBarrier) Barrier.create(processors);
    org.junit.jupiter.api.Assertions.assertTrue(barrier.spinAtHead(), "parties == processors");
    var unused = barrier.register();
    org.junit.jupiter.api.Assertions.assertFalse(barrier.spinAtHead(), "one party more");
    var unused2 = barrier.arriveAndDeregister();
    org.junit.jupiter.api.Assertions.assertTrue(barrier.spinAtHead(), "back to processors");
  }
}
