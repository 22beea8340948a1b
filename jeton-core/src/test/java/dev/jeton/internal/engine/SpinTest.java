package dev.jeton.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.TestThreads;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The brief spin before parking: how long, how it ends, how many spin at once, its score. */
class SpinTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  @Test
  void spinsItsStepsWhenNothingHappens_thenLeavesNoSpinnerCounted() {
    WaitNode w = WaitNode.blocking(1);
    assertEquals(Spin.STEPS, Spin.await(w));
    assertEquals(0, Spin.spinners());
  }

  @Test
  void stopsAtOnce_forANodeNoLongerWaiting() {
    WaitNode w = WaitNode.blocking(1);
    w.setStatus(WaitNode.GRANTED);
    assertEquals(0, Spin.await(w));
  }

  @Test
  void stopsAtOnce_whenInterrupted_andKeepsTheInterrupt() {
    WaitNode w = WaitNode.blocking(1);
    Thread.currentThread().interrupt();
    try {
      assertEquals(0, Spin.await(w));
      assertTrue(Thread.currentThread().isInterrupted(), "the wait loop must still see it");
    } finally {
      Thread.interrupted();
    }
  }

  /**
   * Many threads spinning at once, repeatedly: never more than MAX_SPINNERS inside the loop (a
   * spinner's node watches the count while it spins), and none left counted at the end.
   */
  @Test
  void neverMoreSpinnersThanAllowed() throws Exception {
    int threadCount = Spin.MAX_SPINNERS + 3;
    AtomicInteger most = new AtomicInteger();
    AtomicInteger spun = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    for (int t = 0; t < threadCount; t++) {
      threads.start(
          () -> {
            go.await();
            for (int i = 0; i < 2_000; i++) {
              WaitNode w = WaitNode.blocking(1);
              if (Spin.await(w) > 0) {
                spun.incrementAndGet();
              }
              most.accumulateAndGet(Spin.spinners(), Math::max);
            }
          });
    }
    go.countDown();
    threads.joinAll();
    assertTrue(spun.get() > 0, "some spun");
    assertTrue(most.get() <= Spin.MAX_SPINNERS, "at most " + Spin.MAX_SPINNERS + ": " + most);
    assertEquals(0, Spin.spinners());
  }

  // ------------------------------------------------------- the newcomer spin (decision 105)

  /** A take that succeeds at its {@code succeedAt}-th call (never if 0), counting its calls. */
  private static final class CountedTake implements Spin.Barge<String> {
    final int succeedAt;
    int calls;

    CountedTake(int succeedAt) {
      this.succeedAt = succeedAt;
    }

    @Override
    public @Nullable String tryTake() {
      calls++;
      return calls == succeedAt ? "taken" : null;
    }
  }

  @Test
  void newcomer_returnsWhatItTook_atTheFirstTakeThatSucceeds() {
    CountedTake take = new CountedTake(3);
    if (Spin.MULTICORE) {
      assertEquals("taken", Spin.beforeQueueing(take));
      assertEquals(3, take.calls, "stops at the take that succeeds");
    } else {
      assertNull(Spin.beforeQueueing(take), "on one core a spin cannot see the holder's work");
      assertEquals(0, take.calls);
    }
    assertEquals(0, Spin.spinners());
  }

  @Test
  void newcomer_triesItsStepsAndNoMore_thenQueues() {
    CountedTake take = new CountedTake(0);
    assertNull(Spin.beforeQueueing(take));
    assertEquals(Spin.MULTICORE ? Spin.NEWCOMER_STEPS : 0, take.calls);
    assertEquals(0, Spin.spinners());
  }

  @Test
  void newcomer_withTheGateFull_queuesAtOnce() {
    int entered = 0;
    while (Spin.tryEnter()) {
      entered++;
    }
    try {
      assertEquals(Spin.MAX_SPINNERS, entered, "no one else spins in this test");
      CountedTake take = new CountedTake(1);
      assertNull(Spin.beforeQueueing(take));
      assertEquals(0, take.calls, "a full gate turns the newcomer away before any take");
    } finally {
      for (int i = 0; i < entered; i++) {
        Spin.exit();
      }
    }
    assertEquals(0, Spin.spinners());
  }

  @Test
  void newcomer_whoseTakeThrows_leavesTheGate() {
    IllegalArgumentException bad = new IllegalArgumentException("the limit was lowered");
    Spin.Barge<String> take =
        () -> {
          throw bad;
        };
    if (Spin.MULTICORE) {
      assertSame(
          bad, assertThrows(IllegalArgumentException.class, () -> Spin.beforeQueueing(take)));
    }
    assertEquals(0, Spin.spinners());
  }

  // ---------------------------------------------------------------- the score (decision 55)

  @Test
  void score_spinsAtFirst_thenAfterSpinsThatRunOutOnlyProbes() {
    Spin.Score score = uncrowded();
    assertTrue(score.spins(), "a new channel tries spinning");
    for (int i = 0; i < Spin.Score.CAP; i++) {
      score.record(Spin.STEPS);
    }
    assertEquals(0, score.score());
    int spun = 0;
    for (int i = 0; i < 4 * Spin.Score.PROBE_EVERY; i++) {
      if (score.spins()) {
        spun++;
      }
    }
    assertEquals(4, spun, "one wait in PROBE_EVERY spins anyway");
  }

  @Test
  void score_aCatchRaisesIt_aSpinThatRunsOutLowersIt_withinItsBounds() {
    Spin.Score score = uncrowded();
    score.record(Spin.STEPS);
    score.record(Spin.STEPS);
    assertEquals(Spin.Score.CAP - 2, score.score(), "ran out twice");
    score.record(Spin.STEPS - 1);
    assertEquals(Spin.Score.CAP, score.score(), "caught on the last step, up to the cap");
    score.record(1);
    assertEquals(Spin.Score.CAP, score.score(), "never above the cap");
    for (int i = 0; i < 2 * Spin.Score.CAP; i++) {
      score.record(Spin.STEPS);
    }
    assertEquals(0, score.score(), "never below 0");
    assertFalse(score.spins());
    score.record(1);
    assertEquals(Spin.Score.UP, score.score());
  }

  @Test
  void score_aWaitThatDidNotSpinTellsNothing() {
    Spin.Score score = uncrowded();
    score.record(Spin.STEPS);
    score.record(0);
    assertEquals(Spin.Score.CAP - 1, score.score());
  }

  /** A score whose census never finds threads outnumbering cores. */
  private static Spin.Score uncrowded() {
    return new Spin.Score(new ThreadCensus(Integer.MAX_VALUE, System::nanoTime));
  }

  @Test
  void yieldWhilePending_yieldsItsFewTimes_orNotAtAllForAnOutcomeThatIsThere() {
    WaitNode w = WaitNode.blocking(1);
    assertEquals(Spin.YIELDS, Spin.yieldWhilePending(w));
    w.setStatus(WaitNode.GRANTED);
    assertEquals(0, Spin.yieldWhilePending(w));
  }

  /**
   * Where threads outnumber cores, a waiter yields instead of spinning, and its wait tells the
   * score nothing (decision 56): a spin of a pending node would have run out and lowered it.
   */
  @Test
  void whenCrowded_aWaiterYieldsInsteadOfSpinning_andTheScoreIsUntouched() {
    ThreadCensus crowded = new ThreadCensus(0, System::nanoTime); // the caller alone outnumbers
    Spin.Score score = new Spin.Score(crowded);
    assertTrue(score.crowded());
    for (int i = 0; i < 2 * Spin.Score.PROBE_EVERY; i++) {
      Spin.await(WaitNode.blocking(1), score);
    }
    assertEquals(Spin.Score.CAP, score.score());
    Spin.Score roomy = new Spin.Score(new ThreadCensus(1, System::nanoTime));
    assertFalse(roomy.crowded(), "the caller alone does not outnumber one core");
    Spin.await(WaitNode.blocking(1), roomy);
    assertEquals(Spin.Score.CAP - 1, roomy.score(), "spun, and ran out");
  }
}
