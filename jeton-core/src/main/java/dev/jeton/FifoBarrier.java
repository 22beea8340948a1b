package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.Timer;
import dev.jeton.internal.engine.WaitNode;
import dev.jeton.internal.engine.WaitQueue;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link Barrier}, on the {@link WaitQueue} engine: a party waiting for its
 * generation to trip is a queued node.
 *
 * <p>The contract is on {@link Barrier}; this comment explains how it is kept.
 */
final class FifoBarrier extends WaitQueue implements Barrier {
  /*
   * Overview
   *
   * The parties and the generation number are plain fields guarded by the queue's lock, and the
   * parties arrived are the queued nodes: arrived = queueLengthLocked(). An arrival takes the
   * lock; if it is not the last (arrived + 1 < parties) it appends its node and waits, else it
   * trips the generation, still under the lock: it unlinks every node as one chain with status
   * SETTLING (so none can be withdrawn any more) and increments the generation. Then, outside the
   * lock, it runs the action, gives each node of the chain its outcome (an Arrival whose index is
   * its place in the chain, or the one BarrierBrokenException of the generation) and its final
   * status, and delivers the chain. The last arriver is never queued: it takes the last index, or
   * throws the same exception. breakBarrier does the same with the break's cause and no action.
   *
   * arriveAndDeregister is an arrival that never waits: it trips the generation if the others
   * have all arrived (arrived + 1 == parties), and in any case drops parties by one.
   *
   * A future completed from outside is withdrawn before it completes (WaitQueue's
   * withdrawFromOutside), so its callbacks never meet its arrival. Whether it may be is decided
   * under the lock (mayGiveUp), as the trip is: a node still waiting is claimed as given up, and
   * counts as withdrawn from then on, before its withdrawal takes the lock again (an arrival that
   * may trip takes such nodes out, countArrivalsLocked, and arrived() skips them); a node the
   * trip took (SETTLING or final) refuses the completion from outside, so that a cancel returns
   * false and the future completes with the generation's outcome: its arrival counted.
   *
   * A blocked party interrupted after the trip gets the generation's outcome, with its interrupt
   * status set again (keepsOutcomeWhenInterrupted), as CyclicBarrier does: its arrival counted,
   * so throwing InterruptedException would tell it that it did not pass when the others did.
   *
   * Invariants (lock held, or at any moment the lock is free):
   *   B1. Every queued node belongs to the current generation: a trip or a break empties the
   *       queue in the same critical section that increments the generation.
   *   B2. arrived < parties, or parties == 0 and no one is queued: the arrival that would make
   *       them equal trips instead of queueing, and deregistering trips when it would.
   *   B3. A node's outcome is decided once, under the lock (the trip, a withdrawal), and a
   *       withdrawal takes the arrival back: it leaves arrived < parties, so afterWithdrawLocked
   *       has nothing to trip.
   *
   * The head (the first to arrive) spins before it parks only while every party can have a core
   * of its own (parties <= the processors): then the last arrival is moments away, and a park and
   * unpark per generation is the whole cost (2 parties on 2 cores: 1.2 us a generation spinning,
   * 22 us parking; BENCHMARKS.md). With more parties than cores, spinning would take the core the
   * others need to arrive. `spin` is that answer, rewritten under the lock when parties change.
   */

  private static final int PROCESSORS = Runtime.getRuntime().availableProcessors();

  /** The most parties a barrier has; one fewer than int's largest, so counts never overflow. */
  static final int MAX_PARTIES = Integer.MAX_VALUE - 1;

  private final @Nullable String name;
  private final @Nullable Runnable action;

  @GuardedBy("lock")
  private int parties;

  /** Whether the head spins: parties <= PROCESSORS. Written under the lock, read without it. */
  private volatile boolean spin;

  @GuardedBy("lock")
  private long generation;

  FifoBarrier(
      @Nullable String name,
      int parties,
      @Nullable Runnable action,
      @Nullable Executor completionExecutor) {
    this(name, parties, action, completionExecutor, Timer.shared());
  }

  /** With the timers of timed asynchronous requests: for tests. */
  FifoBarrier(
      @Nullable String name,
      int parties,
      @Nullable Runnable action,
      @Nullable Executor completionExecutor,
      Deadlines timers) {
    super(completionExecutor, null, timers, null, false);
    this.name = name;
    this.parties = checkParties(parties);
    this.spin = parties <= PROCESSORS;
    this.action = action;
  }

  static int checkParties(int parties) {
    if (parties < 1 || parties > MAX_PARTIES) {
      throw new IllegalArgumentException(
          "parties must be from 1 to " + MAX_PARTIES + ", was " + parties);
    }
    return parties;
  }

  // ---------------------------------------------------------------- arriving

  @Override
  public Arrival await() throws InterruptedException {
    try {
      return await(Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Arrival await(Duration timeout) throws InterruptedException, TimeoutException {
    return await(Arguments.toNanos(timeout), timeout);
  }

  private Arrival await(long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    WaitNode w = WaitNode.blocking(1);
    Trip trip = arrive(w);
    if (trip == null) {
      awaitBlocking(w, nanos, timeout); // returns only when granted
    } else {
      trip.release(w);
      if (w.status() != WaitNode.GRANTED) {
        throw failure(w);
      }
    }
    return arrivalOf(w);
  }

  @Override
  public CompletableFuture<Arrival> awaitAsync() {
    return awaitAsync(Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<Arrival> awaitAsync(Duration timeout) {
    return awaitAsync(Arguments.toNanos(timeout), timeout);
  }

  private CompletableFuture<Arrival> awaitAsync(long nanos, @Nullable Duration timeout) {
    WaitNode.NodeFuture<Arrival> f =
        WaitNode.async(this, FifoBarrier::arrivalOf, 1, nanos != Long.MAX_VALUE);
    WaitNode w = f.node();
    Trip trip = arrive(w);
    if (trip != null) {
      trip.release(w);
    }
    return futureOf(
        f, trip == null, nanos, () -> timeoutException(w, Objects.requireNonNull(timeout)));
  }

  /** Queues {@code w} and returns null, or, if it is the last arrival, trips the generation. */
  private @Nullable Trip arrive(WaitNode w) {
    lock.lock();
    try {
      if (parties == 0) {
        throw noParties();
      }
      if (countArrivalsLocked() + 1 < parties) {
        append(w);
        return null;
      }
      return tripLocked(null);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public long register() {
    lock.lock();
    try {
      if (parties == MAX_PARTIES) {
        throw new IllegalStateException(describe() + " already has " + MAX_PARTIES + " parties");
      }
      parties++;
      spin = parties <= PROCESSORS;
      return generation;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public long arriveAndDeregister() {
    long arrivedIn;
    Trip trip = null;
    lock.lock();
    try {
      if (parties == 0) {
        throw noParties();
      }
      arrivedIn = generation;
      int waiting = countArrivalsLocked();
      if (waiting > 0 && waiting + 1 == parties) { // with no one waiting, there is none to trip
        trip = tripLocked(null);
      }
      parties--;
      spin = parties <= PROCESSORS;
    } finally {
      lock.unlock();
    }
    if (trip != null) {
      BarrierBrokenException broken = trip.release(null);
      if (broken != null) {
        throw broken;
      }
    }
    return arrivedIn;
  }

  @Override
  public void breakBarrier(Throwable cause) {
    Objects.requireNonNull(cause, "cause");
    Trip trip;
    lock.lock();
    try {
      trip = tripLocked(cause);
    } finally {
      lock.unlock();
    }
    var unused = trip.release(null); // breakBarrier itself does not fail
  }

  /**
   * The arrivals that count, when the next one may trip the generation. A future completed from
   * outside (cancelled, timed out) is claimed before its withdrawal takes the lock: an arrival made
   * in between must not trip the generation with the given-up arrival in it. So here such nodes
   * leave as their withdrawal would have them leave (which then finds them gone). Lock held.
   */
  @GuardedBy("lock")
  private int countArrivalsLocked() {
    if (queueLengthLocked() + 1 >= parties) {
      var unused = removeLocked(FifoBarrier::givenUp, WaitNode.CANCELLED); // or timed out
    }
    return queueLengthLocked();
  }

  private static boolean givenUp(WaitNode w) {
    return w.isGivenUp();
  }

  /** Ends the current generation: takes every waiter out of the queue, for {@link Trip#release}. */
  @GuardedBy("lock")
  private Trip tripLocked(@Nullable Throwable breakCause) {
    Trip trip = new Trip(unlinkRun(null, WaitNode.SETTLING), generation, breakCause);
    generation++;
    return trip;
  }

  /** A generation that has ended, whose parties are yet to be released. */
  private final class Trip {
    private final @Nullable WaitNode chain;
    private final long generation;
    private final @Nullable Throwable breakCause;

    Trip(@Nullable WaitNode chain, long generation, @Nullable Throwable breakCause) {
      this.chain = chain;
      this.generation = generation;
      this.breakCause = breakCause;
    }

    /**
     * Runs the action unless the barrier was broken, settles the chain and {@code last} (the last
     * arriver's own node, never queued, not delivered) and delivers the chain. Without the lock.
     * Returns the generation's exception if it broke.
     */
    @Nullable BarrierBrokenException release(@Nullable WaitNode last) {
      BarrierBrokenException broken = null;
      if (breakCause != null) {
        broken = broken("was broken: " + breakCause, breakCause);
      } else if (action != null) {
        try {
          action.run();
        } catch (Throwable t) { // an Error too: the parties must not be left waiting forever
          broken = broken("is broken: its action threw " + t, t);
        }
      }
      int index = 0;
      for (WaitNode w = chain; w != null; w = w.next()) {
        settle(w, index++, broken);
      }
      if (last != null) {
        settle(last, index, broken);
      }
      deliver(chain);
      return broken;
    }

    private void settle(WaitNode w, int index, @Nullable BarrierBrokenException broken) {
      if (broken == null) {
        w.setOutcome(new Arrival(index, generation));
        w.setStatus(WaitNode.GRANTED);
      } else {
        w.setOutcome(broken);
        w.setStatus(WaitNode.FAILED_BROKEN);
      }
    }

    private BarrierBrokenException broken(String why, Throwable cause) {
      return new BarrierBrokenException(
          describe() + " generation " + generation + " " + why, cause, generation);
    }
  }

  // ---------------------------------------------------------------- the engine's hooks

  @Override
  protected boolean spinAtHead() {
    return spin;
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode afterWithdrawLocked() {
    return null; // fewer arrived now: nothing can trip (B3)
  }

  /**
   * A passed party's arrival: a node's outcome is its Arrival when it passed (Trip.settle), its
   * failure when it failed, which is why this cast holds.
   */
  private static Arrival arrivalOf(WaitNode node) {
    return (Arrival) Objects.requireNonNull(node.outcome());
  }

  /**
   * Decided under the lock, as the trip is, so that an arrival is either given up before the trip
   * (and never counted) or counted by it (and the completion from outside refused: the future
   * completes with the generation's outcome).
   */
  @Override
  protected boolean mayGiveUp(WaitNode node) {
    lock.lock();
    try {
      return node.isGivenUp() || (node.status() == WaitNode.WAITING && node.claimForWithdrawal());
    } finally {
      lock.unlock();
    }
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode giveBackLocked(WaitNode node) {
    return null; // an arrival that reached no one still counted: there is nothing to give back
  }

  /**
   * A party interrupted after its generation tripped gets the generation's outcome: its arrival
   * counted, and the others passed (or failed) with it, as {@code CyclicBarrier} does.
   */
  @Override
  protected boolean keepsOutcomeWhenInterrupted(WaitNode node) {
    return true;
  }

  @Override
  protected RuntimeException failure(WaitNode node) {
    return (BarrierBrokenException) Objects.requireNonNull(node.outcome());
  }

  @Override
  protected TimeoutException timeoutException(WaitNode node, Duration timeout) {
    int missing;
    lock.lock();
    try {
      // A timed-out future's node may still be queued here; a blocked one's is withdrawn.
      int others = queueLengthLocked() - (node.status() == WaitNode.WAITING ? 1 : 0);
      missing = Math.max(1, parties - others - 1);
    } finally {
      lock.unlock();
    }
    return new TimeoutException(
        "timed out after "
            + timeout
            + " waiting at "
            + describe()
            + " for "
            + missing
            + (missing == 1 ? " more party" : " more parties"));
  }

  // ---------------------------------------------------------------- inspection

  @Override
  public int parties() {
    lock.lock();
    try {
      return parties;
    } finally {
      lock.unlock();
    }
  }

  /** Takes the lock, and leaves out the futures given up whose withdrawal is on its way. */
  @Override
  public int arrived() {
    lock.lock();
    try {
      int arrived = 0;
      for (WaitNode w = head(); w != null; w = w.next()) {
        arrived += givenUp(w) ? 0 : 1;
      }
      return arrived;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public long generation() {
    lock.lock();
    try {
      return generation;
    } finally {
      lock.unlock();
    }
  }

  private String describe() {
    return name != null ? "barrier '" + name + "'" : "barrier";
  }

  private IllegalStateException noParties() {
    return new IllegalStateException(describe() + " has no parties: register() one first");
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "Barrier["
          + (name != null ? "name=" + name + ", " : "")
          + "parties="
          + parties
          + ", arrived="
          + arrived()
          + ", generation="
          + generation
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
