package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.Gcra;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.StatsRecorder;
import dev.jeton.internal.engine.WaitNode;
import dev.jeton.internal.engine.WaitQueue;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link RateLimiter}, on the {@link WaitQueue} engine: a request that cannot pass
 * yet is a queued node of its weight.
 *
 * <p>The contract is on {@link RateLimiter}; this comment explains how it is kept.
 */
final class FifoRateLimiter extends WaitQueue implements RateLimiter {
  /*
   * Overview
   *
   * The schedule (Gcra: the theoretical arrival time, in exact fractions of a nanosecond) and the
   * queue change together under the queue's lock. A request passes at once if no one waits and
   * the schedule admits its weight now; otherwise it is queued. Passing is the whole grant:
   * nothing is held, nothing released.
   *
   * The pump (pumpLocked) admits queued nodes from the head, in order, while the schedule admits
   * each at `now`, unlinks them as one granted chain, and then sets the one wake-up timer for the
   * moment the new head can pass (Gcra.admissibleAt), if there is a head. Everything that can let
   * the head pass sooner or later runs the pump: the wake-up itself, a withdrawal (the head may
   * have left, or the new head be lighter), a give-back, a rate change. So the head never waits
   * past the moment it can pass by more than the timer's lateness, and no one spins.
   *
   * A grant that reaches no one (its future completed from outside as it passed, its thread
   * interrupted) gives its weight back (Gcra.giveBack) and pumps: the time it took goes to the
   * ones behind; but only if every admission since its own was at the same instant (the pump
   * stamps each node it admits with `now`, as the node's outcome, and lastAdmittedAt is the
   * latest admission's). Then taking w * T off tat gives the schedule it would have without that
   * grant. After an admission at a later instant it might not: the grant at 1 s, another at 5 s
   * whose tat started from 5 s, the first given back at 5 s, and a third would pass at 5 s beside
   * the second. Such a grant's weight stays spent, as a Redis limiter's middle instant does.
   *
   * Invariants (lock held, or whenever the lock is free):
   *   R1. If the queue is not empty, its head cannot pass now; a wake-up is set for when it can
   *       (wakeAt), unless a pump is about to run (a withdrawal or a timer under way).
   *   R2. The schedule admits only through passesNowLocked and pumpLocked, so over any window of
   *       length t the weight admitted is at most burst + t / T (Gcra's bound); a give-back only
   *       returns what was admitted and reached no one, and only when lastAdmittedAt is still
   *       that admission's instant.
   *   R3. No request passes while an older one waits (FIFO): the fast paths pass only with an
   *       empty queue, and the pump admits from the head in order.
   *
   * The clock is System.nanoTime, or a test's; the timers are the engine's, or a test's.
   */

  private final @Nullable String name;
  private final int burst; // the schedule's, which never changes
  private final LongSupplier clock;
  private final Deadlines timers;

  @GuardedBy("lock")
  private final Gcra schedule;

  /** The instant of the latest admission (see the give-back rule above). Lock held. */
  @GuardedBy("lock")
  private long lastAdmittedAt;

  /** The wake-up of the head, or null when no one waits. */
  @GuardedBy("lock")
  private @Nullable Future<?> wake;

  @GuardedBy("lock")
  private long wakeAt;

  FifoRateLimiter(
      @Nullable String name,
      long permits,
      Duration period,
      int burst,
      boolean statistics,
      @Nullable Executor completionExecutor,
      Deadlines timers,
      LongSupplier clock) {
    super(completionExecutor, statistics ? new StatsRecorder() : null, timers, null, false);
    this.name = name;
    this.clock = clock;
    this.timers = timers;
    this.schedule = new Gcra(permits, period, burst, clock.getAsLong());
    this.burst = burst;
  }

  // ---------------------------------------------------------------- requests

  @Override
  public void acquire(int weight) throws InterruptedException {
    try {
      acquire(weight, Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public void acquire(int weight, Duration timeout) throws InterruptedException, TimeoutException {
    acquire(weight, Arguments.toNanos(timeout), timeout);
  }

  private void acquire(int weight, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    checkWeight(weight);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    WaitNode w = WaitNode.blocking(weight);
    if (passOrQueue(w)) {
      awaitBlocking(w, nanos, timeout); // returns only when it passed
    }
  }

  @Override
  public boolean tryAcquire(int weight) {
    checkWeight(weight);
    lock.lock();
    try {
      if (passesNowLocked(weight)) {
        return true;
      }
    } finally {
      lock.unlock();
    }
    StatsRecorder s = stats;
    if (s != null) {
      s.countRejected();
    }
    return false;
  }

  @Override
  public CompletableFuture<Void> acquireAsync(int weight) {
    return acquireAsync(weight, Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<Void> acquireAsync(int weight, Duration timeout) {
    return acquireAsync(weight, Arguments.toNanos(timeout), timeout);
  }

  private CompletableFuture<Void> acquireAsync(int weight, long nanos, @Nullable Duration timeout) {
    checkWeight(weight);
    WaitNode.NodeFuture<Void> f =
        WaitNode.async(this, WaitNode.Grant::nothing, weight, nanos != Long.MAX_VALUE);
    WaitNode w = f.node();
    boolean queued = passOrQueue(w);
    return futureOf(f, queued, nanos, () -> timeoutException(w, Objects.requireNonNull(timeout)));
  }

  /** Lets {@code w} pass now (granted, never queued) and returns false, or queues it: true. */
  private boolean passOrQueue(WaitNode w) {
    lock.lock();
    try {
      if (passesNowLocked(w.weight())) {
        w.setStatus(WaitNode.GRANTED);
        return false;
      }
      append(w);
      if (head() == w) {
        wakeHeadLocked(clock.getAsLong());
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Admits {@code weight} now if no one waits and the schedule allows it (R3). */
  @GuardedBy("lock")
  private boolean passesNowLocked(int weight) {
    if (head() != null) {
      return false;
    }
    long now = clock.getAsLong();
    if (schedule.admissibleAt(now, weight) != now) {
      return false;
    }
    schedule.admit(now, weight);
    lastAdmittedAt = now;
    StatsRecorder s = stats;
    if (s != null) {
      s.countAcquired();
    }
    return true;
  }

  // ---------------------------------------------------------------- the pump

  /** The wake-up timer fired: admits whom it can. */
  private void wakeUp() {
    WaitNode passed;
    lock.lock();
    try {
      wake = null;
      passed = pumpLocked();
    } finally {
      lock.unlock();
    }
    deliver(passed);
  }

  /**
   * Admits the queued requests that can pass now, from the head in order; returns them, unlinked
   * and chained, and sets the wake-up of the new head (R1).
   */
  @GuardedBy("lock")
  private @Nullable WaitNode pumpLocked() {
    long now = clock.getAsLong();
    WaitNode w = head();
    while (w != null && schedule.admissibleAt(now, w.weight()) == now) {
      schedule.admit(now, w.weight());
      lastAdmittedAt = now;
      w.setOutcome(now); // its instant, for a give-back (the value it completes with is null)
      w = w.next();
    }
    WaitNode passed = unlinkRun(w, WaitNode.GRANTED);
    wakeHeadLocked(now);
    return passed;
  }

  /** Sets the wake-up for the moment the head can pass, or stops it if no one waits. */
  @GuardedBy("lock")
  private void wakeHeadLocked(long now) {
    WaitNode h = head();
    Future<?> old = wake;
    if (h == null) {
      if (old != null) {
        old.cancel(false);
        wake = null;
      }
      return;
    }
    long at = schedule.admissibleAt(now, h.weight());
    if (old != null) {
      if (at == wakeAt) {
        return; // already set for then
      }
      old.cancel(false);
    }
    wakeAt = at;
    wake = timers.schedule(this::wakeUp, at - now);
  }

  // ---------------------------------------------------------------- the engine's hooks

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode afterWithdrawLocked() {
    return pumpLocked(); // the head may have left, or a lighter one be head now
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode giveBackLocked(WaitNode node) {
    Object admittedAt = node.outcome();
    if (admittedAt instanceof Long && (Long) admittedAt == lastAdmittedAt) {
      schedule.giveBack(node.weight()); // no admission at a later instant since: exact
    }
    return pumpLocked();
  }

  @Override
  protected RuntimeException failure(WaitNode node) {
    return new IllegalStateException(describe() + ": a request ended with status " + node.status());
  }

  @Override
  protected TimeoutException timeoutException(WaitNode node, Duration timeout) {
    return new TimeoutException(
        "timed out after "
            + Arguments.format(timeout)
            + " waiting for "
            + node.weight()
            + " to pass "
            + describe());
  }

  // ---------------------------------------------------------------- the rate

  @Override
  public void setRate(long permits, Duration period) {
    Objects.requireNonNull(period, "period");
    WaitNode passed;
    lock.lock();
    try {
      schedule.setRate(permits, period, clock.getAsLong());
      passed = pumpLocked(); // the head may pass sooner, or later
    } finally {
      lock.unlock();
    }
    deliver(passed);
  }

  @Override
  public long permits() {
    lock.lock();
    try {
      return schedule.permits();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Duration period() {
    lock.lock();
    try {
      return schedule.period();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int burst() {
    return burst;
  }

  @Override
  public int queueLength() {
    return super.queueLength();
  }

  @Override
  public Duration timeToAdmit(int weight) {
    checkWeight(weight);
    lock.lock();
    try {
      long now = clock.getAsLong();
      Gcra projected = schedule.copy();
      long at = now;
      for (WaitNode w = head(); w != null; w = w.next()) {
        at = projected.admissibleAt(at, w.weight());
        projected.admit(at, w.weight());
      }
      return Duration.ofNanos(projected.admissibleAt(at, weight) - now);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public Optional<RateLimiterStats> stats() {
    StatsRecorder s = stats;
    if (s == null) {
      return Optional.empty();
    }
    lock.lock();
    try {
      return Optional.of(
          s.snapshot(
              queueLengthLocked(),
              (admitted, released, timedOut, cancelled, rejected, queued, peak, total, max) ->
                  new RateLimiterStats(
                      admitted, timedOut, cancelled, rejected, queued, peak, total, max)));
    } finally {
      lock.unlock();
    }
  }

  private void checkWeight(int weight) {
    if (weight < 1) {
      throw new IllegalArgumentException("weight must be 1 or more, was " + weight);
    }
    if (weight > burst) {
      throw new IllegalArgumentException(
          "weight "
              + weight
              + " exceeds the burst "
              + burst
              + " of "
              + describe()
              + ": it could never pass");
    }
  }

  private String describe() {
    return name != null ? "rate limiter '" + name + "'" : "rate limiter";
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "RateLimiter["
          + (name != null ? name + ", " : "")
          + schedule
          + ", queued="
          + queueLengthLocked()
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
