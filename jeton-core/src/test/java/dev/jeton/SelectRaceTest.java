package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A select that gives up (its future cancelled, its thread interrupted, its timeout passing)
 * racing, round after round, with a send that claims it (to the channel it receives from): exactly
 * one of them wins, and both sides agree which; a win after an interrupt keeps the interrupt
 * status. The select's send clause never delivers its value, the undelivered hook sees nothing, and
 * nothing is left queued.
 *
 * <p>Each round starts both sides together, the one that won the last round a little later (see
 * {@link Race}; the interrupt's race keeps its own clock), so that each side wins about half the
 * rounds on any machine, and many rounds land in the few instructions where both are under way.
 */
class SelectRaceTest {
  private static final int ROUNDS = 400;

  /**
   * The interrupt's race has the narrowest window (the select sees its interrupt while it is open,
   * and a claim lands before its own CAS to give up): a few rounds in a thousand.
   */
  private static final int INTERRUPT_ROUNDS = 2_000;

  @RegisterExtension final TestThreads threads = new TestThreads();

  private final Queue<Object> undelivered = new ConcurrentLinkedQueue<>();
  private final Channel<Integer> a =
      Channel.<Integer>builder().onUndelivered(undelivered::add).build();
  private final Channel<Integer> b =
      Channel.<Integer>builder().onUndelivered(undelivered::add).build();
  private final Race race = new Race();
  private final List<String> violations = new ArrayList<>();

  @AfterEach
  void stopSender() {
    race.sender.shutdownNow();
  }

  @Test
  void aCancel_racingWithAClaim_oneWins() throws Exception {
    for (int round = 0; round < ROUNDS; round++) {
      CompletableFuture<Integer> f =
          Select.selectAsync(a.onReceive(v -> v), b.onSend(-1, () -> -1));
      Future<Boolean> send = race.start(round);
      boolean cancelled = f.cancel(false);
      boolean delivered = race.sent(send);
      if (cancelled == delivered) {
        violations.add("round " + round + ": cancel " + cancelled + ", send " + delivered);
      } else if (delivered && done(f) != round) {
        violations.add("round " + round + ": got " + done(f));
      }
      checkAfterEachRound(round);
    }
    finish(race.sends, ROUNDS);
  }

  @Test
  void anInterrupt_racingWithAClaim_oneWins_andAWinKeepsTheInterrupt() throws Exception {
    List<AtomicBoolean> started = new ArrayList<>();
    List<AtomicBoolean> interruptIssued = new ArrayList<>();
    List<CompletableFuture<Object>> outcomes = new ArrayList<>();
    for (int round = 0; round < INTERRUPT_ROUNDS; round++) {
      started.add(new AtomicBoolean());
      interruptIssued.add(new AtomicBoolean());
      outcomes.add(new CompletableFuture<>());
    }
    Thread selecting =
        threads.start(
            () -> {
              for (int round = 0; round < INTERRUPT_ROUNDS; round++) {
                awaitSet(started.get(round)); // the last round's send is over: not this one's
                try {
                  int got = Select.select(a.onReceive(v -> v), b.onSend(-1, () -> -1));
                  awaitSet(interruptIssued.get(round)); // keeps the interrupt for the check
                  outcomes
                      .get(round)
                      .complete(
                          Thread.interrupted() ? got : "returned " + got + ", not interrupted");
                } catch (InterruptedException e) {
                  outcomes.get(round).complete(e);
                }
              }
            });
    // The send is this thread's, a moment after the interrupt: the later the send, the likelier
    // the select gives up first; the moment moves, round by round, against the last winner.
    int sendDelay = 0;
    int sends = 0;
    for (int round = 0; round < INTERRUPT_ROUNDS; round++) {
      started.get(round).set(true);
      awaitTrue(() -> waiting(a) == 1 && waiting(b) == 1, "the select to wait");
      selecting.interrupt();
      interruptIssued.get(round).set(true);
      for (int i = sendDelay + race.random.nextInt(Race.JITTER); i > 0; i--) {
        Thread.onSpinWait(); // no yield: this is the race's clock
      }
      boolean delivered = a.trySend(round);
      if (delivered) {
        sends++;
        sendDelay += Race.STEP;
      } else {
        sendDelay = Math.max(0, sendDelay - Race.STEP);
      }
      Object got = done(outcomes.get(round));
      if (delivered
          ? !Integer.valueOf(round).equals(got)
          : !(got instanceof InterruptedException)) {
        violations.add("round " + round + ": send " + delivered + ", the select " + got);
      }
      checkAfterEachRound(round);
    }
    finish(sends, INTERRUPT_ROUNDS);
  }

  @Test
  void aTimeout_racingWithAClaim_oneWins() throws Exception {
    Duration[] timeouts = {Duration.ZERO, Duration.ofNanos(10_000), Duration.ofNanos(100_000)};
    for (int round = 0; round < ROUNDS; round++) {
      Duration timeout = timeouts[round % timeouts.length];
      AtomicBoolean over = new AtomicBoolean();
      Future<Boolean> send = race.startOnceQueued(round, over);
      CompletableFuture<Integer> f =
          round % 2 == 0
              ? CompletableFuture.completedFuture(
                  Select.select(
                      a.onReceive(v -> v),
                      b.onSend(-1, () -> -1),
                      Select.onTimeout(timeout, () -> -2)))
              : Select.selectAsync(
                  a.onReceive(v -> v), b.onSend(-1, () -> -1), Select.onTimeout(timeout, () -> -2));
      int got = done(f);
      over.set(true);
      boolean delivered = race.sent(send);
      if (delivered ? got != round : got != -2) {
        violations.add("round " + round + ": send " + delivered + ", the select " + got);
      }
      checkAfterEachRound(round);
    }
    finish(race.sends, ROUNDS);
  }

  private void checkAfterEachRound(int round) {
    if (waiting(a) + waiting(b) != 0) {
      violations.add("round " + round + ": left queued, a " + waiting(a) + ", b " + waiting(b));
    }
    if (!undelivered.isEmpty()) {
      violations.add("round " + round + ": reported " + undelivered);
      undelivered.clear();
    }
  }

  private void finish(int sends, int rounds) {
    TestThreads.assertNoViolations(violations);
    assertTrue(sends > 0 && sends < rounds, sends + " of " + rounds + " rounds sent: no race");
  }

  private static int waiting(Channel<?> channel) {
    return ((FifoChannel<?>) channel).queueLength();
  }

  /**
   * Waits until {@code flag} is set, yielding the core to the thread that sets it; an interrupt
   * neither stops the wait nor is consumed.
   */
  @SuppressWarnings("ThreadPriorityCheck") // yield: two shared cores
  private static void awaitSet(AtomicBoolean flag) {
    while (!flag.get()) {
      Thread.yield();
    }
  }

  /** Spins {@code steps} steps, yielding now and then in case the other side has no core. */
  @SuppressWarnings("ThreadPriorityCheck") // yield: two shared cores
  private static void spin(int steps) {
    for (int i = 1; i <= steps; i++) {
      if (i % 64 == 0) {
        Thread.yield();
      } else {
        Thread.onSpinWait();
      }
    }
  }

  /**
   * The sending side of each round, on its own thread. {@code lead} moves, round by round, against
   * whichever side won the last one, by delaying it: so each side wins about half the rounds on any
   * machine, and many rounds land where both sides are under way at once.
   */
  private final class Race {
    static final int STEP = 16;
    static final int JITTER = 16;

    final ExecutorService sender = Executors.newSingleThreadExecutor();
    final SplittableRandom random = new SplittableRandom(15);

    /** Positive: the test thread waits this many steps after go; negative: the sender does. */
    int lead;

    int sends;

    /**
     * Starts a send of {@code round} to {@code a} together with what the caller does next: the
     * sender spins until the caller says go, then each waits its part of the lead.
     */
    Future<Boolean> start(int round) {
      AtomicBoolean ready = new AtomicBoolean();
      AtomicBoolean go = new AtomicBoolean();
      int senderDelay = Math.max(0, -lead) + random.nextInt(JITTER);
      Future<Boolean> send =
          sender.submit(
              () -> {
                ready.set(true);
                while (!go.get()) {
                  Thread.onSpinWait(); // the test thread is about to say go: start with it
                }
                spin(senderDelay);
                return a.trySend(round);
              });
      awaitSet(ready);
      go.set(true);
      spin(Math.max(0, lead) + random.nextInt(JITTER));
      return send;
    }

    /**
     * Starts a send of {@code round} to {@code a} that waits until the caller's select is queued
     * there (or {@code over}), then the lead (here never negative): the later the send, the
     * likelier a timeout wins.
     */
    Future<Boolean> startOnceQueued(int round, AtomicBoolean over) {
      int delay = Math.max(0, -lead) + random.nextInt(JITTER);
      return sender.submit(
          () -> {
            while (waiting(a) == 0 && !over.get()) {
              Thread.onSpinWait();
            }
            spin(delay);
            return a.trySend(round);
          });
    }

    /** Whether the send won; the side that won waits a little longer in the next round. */
    boolean sent(Future<Boolean> send) throws Exception {
      boolean sent = done(send);
      if (sent) {
        sends++;
        lead -= STEP;
      } else {
        lead += STEP;
      }
      return sent;
    }
  }
}
