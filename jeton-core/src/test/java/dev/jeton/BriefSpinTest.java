package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A waiter's brief spin before parking: how long, how it ends, and how many spin at once. */
class BriefSpinTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  @Test
  void spinsItsStepsWhenNothingHappens_thenLeavesNoSpinnerCounted() {
    WaitNode w = WaitNode.blocking(1);
    assertEquals(BriefSpin.STEPS, BriefSpin.await(w));
    assertEquals(0, BriefSpin.spinners());
  }

  @Test
  void stopsAtOnce_forANodeNoLongerWaiting() {
    WaitNode w = WaitNode.blocking(1);
    w.status = WaitNode.GRANTED;
    assertEquals(0, BriefSpin.await(w));
  }

  @Test
  void stopsAtOnce_whenInterrupted_andKeepsTheInterrupt() {
    WaitNode w = WaitNode.blocking(1);
    Thread.currentThread().interrupt();
    try {
      assertEquals(0, BriefSpin.await(w));
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
    int threadCount = BriefSpin.MAX_SPINNERS + 3;
    AtomicInteger most = new AtomicInteger();
    AtomicInteger spun = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    for (int t = 0; t < threadCount; t++) {
      threads.start(
          () -> {
            go.await();
            for (int i = 0; i < 2_000; i++) {
              WaitNode w = WaitNode.blocking(1);
              if (BriefSpin.await(w) > 0) {
                spun.incrementAndGet();
              }
              most.accumulateAndGet(BriefSpin.spinners(), Math::max);
            }
          });
    }
    go.countDown();
    threads.joinAll();
    assertTrue(spun.get() > 0, "some spun");
    assertTrue(
        most.get() <= BriefSpin.MAX_SPINNERS, "at most " + BriefSpin.MAX_SPINNERS + ": " + most);
    assertEquals(0, BriefSpin.spinners());
  }

  // ---------------------------------------------------------------- the score (decision 55)

  @Test
  void score_spinsAtFirst_thenAfterSpinsThatRunOutOnlyProbes() {
    BriefSpin.Score score = uncrowded();
    assertTrue(score.spins(), "a new channel tries spinning");
    for (int i = 0; i < BriefSpin.Score.CAP; i++) {
      score.record(BriefSpin.STEPS);
    }
    assertEquals(0, score.score());
    int spun = 0;
    for (int i = 0; i < 4 * BriefSpin.Score.PROBE_EVERY; i++) {
      if (score.spins()) {
        spun++;
      }
    }
    assertEquals(4, spun, "one wait in PROBE_EVERY spins anyway");
  }

  @Test
  void score_aCatchRaisesIt_aSpinThatRunsOutLowersIt_withinItsBounds() {
    BriefSpin.Score score = uncrowded();
    score.record(BriefSpin.STEPS);
    score.record(BriefSpin.STEPS);
    assertEquals(BriefSpin.Score.CAP - 2, score.score(), "ran out twice");
    score.record(BriefSpin.STEPS - 1);
    assertEquals(BriefSpin.Score.CAP, score.score(), "caught on the last step, up to the cap");
    score.record(1);
    assertEquals(BriefSpin.Score.CAP, score.score(), "never above the cap");
    for (int i = 0; i < 2 * BriefSpin.Score.CAP; i++) {
      score.record(BriefSpin.STEPS);
    }
    assertEquals(0, score.score(), "never below 0");
    assertFalse(score.spins());
    score.record(1);
    assertEquals(BriefSpin.Score.UP, score.score());
  }

  @Test
  void score_aWaitThatDidNotSpinTellsNothing() {
    BriefSpin.Score score = uncrowded();
    score.record(BriefSpin.STEPS);
    score.record(0);
    assertEquals(BriefSpin.Score.CAP - 1, score.score());
  }

  /** A score whose census never finds threads outnumbering cores. */
  private static BriefSpin.Score uncrowded() {
    return new BriefSpin.Score(new ThreadCensus(Integer.MAX_VALUE, System::nanoTime));
  }

  @Test
  void yieldWhilePending_yieldsItsFewTimes_orNotAtAllForAnOutcomeThatIsThere() {
    WaitNode w = WaitNode.blocking(1);
    assertEquals(BriefSpin.YIELDS, BriefSpin.yieldWhilePending(w));
    w.status = WaitNode.GRANTED;
    assertEquals(0, BriefSpin.yieldWhilePending(w));
  }

  /**
   * Where threads outnumber cores, a waiter yields instead of spinning, and its wait tells the
   * score nothing (decision 56): a spin of a pending node would have run out and lowered it.
   */
  @Test
  void whenCrowded_aWaiterYieldsInsteadOfSpinning_andTheScoreIsUntouched() {
    ThreadCensus crowded = new ThreadCensus(0, System::nanoTime); // the caller alone outnumbers
    BriefSpin.Score score = new BriefSpin.Score(crowded);
    assertTrue(score.crowded());
    for (int i = 0; i < 2 * BriefSpin.Score.PROBE_EVERY; i++) {
      BriefSpin.await(WaitNode.blocking(1), score);
    }
    assertEquals(BriefSpin.Score.CAP, score.score());
    BriefSpin.Score roomy = new BriefSpin.Score(new ThreadCensus(1, System::nanoTime));
    assertFalse(roomy.crowded(), "the caller alone does not outnumber one core");
    BriefSpin.await(WaitNode.blocking(1), roomy);
    assertEquals(BriefSpin.Score.CAP - 1, roomy.score(), "spun, and ran out");
  }

  /** A channel's blocked receiver spins by its channel's score, and records its spin there. */
  @Test
  void aReceiverWhoseSpinRunsOut_lowersItsChannelsScore() throws Exception {
    FifoChannel<String> channel = (FifoChannel<String>) Channel.<String>rendezvous();
    Thread receiver = threads.start(() -> assertEquals("x", channel.receive()));
    awaitTrue(() -> receiver.getState() == Thread.State.WAITING, "the receiver to park");
    assertEquals(BriefSpin.Score.CAP - 1, channel.briefSpin.score());
    channel.send("x");
    threads.joinAll();
  }

  /** So does a blocked select, on each of its channels. */
  @Test
  void aSelectWhoseSpinRunsOut_lowersEachOfItsChannelsScores() throws Exception {
    FifoChannel<String> a = (FifoChannel<String>) Channel.<String>rendezvous();
    FifoChannel<String> b = (FifoChannel<String>) Channel.<String>rendezvous();
    Thread selecting =
        threads.start(
            () -> assertEquals("x", Select.select(a.onReceive(v -> v), b.onReceive(v -> v))));
    awaitTrue(() -> selecting.getState() == Thread.State.WAITING, "the select to park");
    assertEquals(BriefSpin.Score.CAP - 1, a.briefSpin.score());
    assertEquals(BriefSpin.Score.CAP - 1, b.briefSpin.score());
    b.send("x");
    threads.joinAll();
  }
}
