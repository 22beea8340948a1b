package dev.jeton.host;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Gcra;
import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One request of a {@link HostRateLimiter}, from its slot to its passing (the algorithm is in the
 * limiter's comment). Its lock makes passing and withdrawing exclusive, so a request that gives up
 * as its slot comes either passes or gives up, never both.
 */
final class RateRequest {
  /** What {@link #reserve} found. */
  enum Outcome {
    /** It passed at once. */
    PASSED,
    /** It has a slot ahead, and a place in the queue until then: {@link #slot()}. */
    WAITING,
    /** A tryAcquire that would have to wait: nothing was taken. */
    BUSY,
    /** Its slot would come after its deadline: nothing was taken. */
    TOO_LATE
  }

  /** How long withdraw() waits for meta.lock to give a slot back before it lets the slot go. */
  private static final long GIVE_BACK_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** The least and most a wake-up may come after its slot and still pass in it (see below). */
  static final long MIN_LATENESS_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  static final long MAX_LATENESS_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final HostRateLimiter limiter;
  final int weight;
  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private LockFiles.@Nullable Held place;

  /** The state before and after this request's admission: given back while it is still after. */
  @GuardedBy("lock")
  private @Nullable String before;

  @GuardedBy("lock")
  private @Nullable String after;

  private volatile long slot;
  private volatile long lateness;

  @GuardedBy("lock")
  private boolean finished;

  RateRequest(HostRateLimiter limiter, int weight) {
    this.limiter = limiter;
    this.weight = weight;
  }

  /** When it may pass ({@link System#nanoTime()}), once {@link #reserve} said WAITING. */
  long slot() {
    return slot;
  }

  /**
   * Takes the next slot under {@code meta.lock}, and a place in the queue if the slot is ahead.
   * Waits for the lock until {@code deadline} or until {@code giveUp}; a slot after {@code
   * deadline} is not taken.
   */
  Outcome reserve(boolean trying, long deadline, long lockDeadline, BooleanSupplier giveUp)
      throws IOException, InterruptedException, TimeoutException {
    String record = limiter.record(weight);
    lock.lock();
    try {
      Taken taken =
          limiter.queue.locked(lockDeadline, giveUp, () -> take(trying, deadline, record));
      if (taken.outcome == Outcome.PASSED || taken.outcome == Outcome.WAITING) {
        before = taken.before;
        after = taken.after;
        slot = taken.slot;
        lateness = taken.lateness;
        place = taken.place;
        finished = taken.place == null;
      }
      return taken.outcome;
    } finally {
      lock.unlock();
    }
  }

  /** What one reservation took: the schedule before and after it, its slot and its place. */
  private record Taken(
      Outcome outcome,
      @Nullable String before,
      @Nullable String after,
      long slot,
      long lateness,
      LockFiles.@Nullable Held place) {}

  /** The reservation, under meta.lock. */
  private Taken take(boolean trying, long deadline, String record) throws IOException {
    String text = limiter.readState();
    long now = System.nanoTime();
    Gcra schedule = limiter.parse(text, now);
    if (weight > schedule.burst()) {
      throw new IllegalArgumentException(
          "a weight of " + weight + " is above the burst " + schedule.burst() + limiter.named());
    }
    long at = schedule.admissibleAt(now, weight);
    if (at != now && trying) {
      return new Taken(Outcome.BUSY, null, null, 0, 0, null);
    }
    if (at != now && deadline != Long.MAX_VALUE && at - deadline > 0) {
      return new Taken(Outcome.TOO_LATE, null, null, 0, 0, null);
    }
    schedule.admit(at, weight);
    long last = RateState.lastSlot(text, now);
    String written = RateState.serialize(schedule, at - last > 0 ? at : last);
    LockFiles.Held held = at == now ? null : limiter.queue.placeLocked(record, false);
    try {
      limiter.writeState(written);
    } catch (IOException | RuntimeException e) {
      if (held != null) {
        leave(held); // nothing was taken: the schedule is as it was
      }
      throw e;
    }
    long interval = schedule.period().toNanos() / schedule.permits();
    long lateness = Math.min(MAX_LATENESS_NANOS, Math.max(MIN_LATENESS_NANOS, interval));
    return new Taken(
        held == null ? Outcome.PASSED : Outcome.WAITING, text, written, at, lateness, held);
  }

  /** Sleeps until the slot (never spinning), or until interrupted. */
  void sleepUntilSlot() throws InterruptedException {
    for (long left; (left = slot - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(this, left);
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }

  /**
   * Passes, at or after the slot: true, unless it was withdrawn, or woke too late to pass in its
   * slot (a stopped or starved process): then it gives the slot up and returns false, and the
   * caller queues again. A pass that is late by at most {@code lateness} keeps the bound within one
   * emission interval (at most 20 ms to 1 s) of the exact one: see the limiter's comment.
   */
  boolean pass() {
    lock.lock();
    try {
      if (finished) {
        return false;
      }
      finished = true;
      boolean late = System.nanoTime() - slot > lateness;
      if (late) {
        giveBackIfLast(); // no one came after it: the slot is free again for its next try
      }
      LockFiles.Held held = place;
      place = null;
      if (held != null) {
        leave(held);
      }
      return !late;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Gives up: leaves the queue, and gives the slot back if no one has taken one after it (else the
   * slot goes unused: the ones after it keep theirs, and the bound holds). Also after {@link
   * #pass}, for a pass that reached no one. Returns false if it had already given up.
   */
  boolean withdraw() {
    lock.lock();
    try {
      boolean passed = finished && after != null && place == null;
      if (finished && !passed) {
        return false;
      }
      finished = true;
      giveBackIfLast();
      LockFiles.Held held = place;
      place = null;
      if (held != null) {
        leave(held);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  @GuardedBy("lock")
  private void giveBackIfLast() {
    String mine = after;
    String previous = before;
    after = null;
    if (mine == null || previous == null) {
      return;
    }
    try {
      limiter.queue.<@Nullable Void>locked(
          System.nanoTime() + GIVE_BACK_NANOS,
          () -> false,
          () -> {
            if (limiter.readState().equals(mine)) {
              limiter.writeState(previous);
            }
            return null;
          });
    } catch (IOException | TimeoutException | RuntimeException e) {
      // the slot goes unused: never more than the bound, only less
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void leave(LockFiles.Held held) {
    try {
      Files.deleteIfExists(held.path);
    } catch (IOException ignored) {
      // an undeletable place is unlocked below, so it counts as dead and is swept later
    }
    LockFiles.closeQuietly(held);
  }
}
