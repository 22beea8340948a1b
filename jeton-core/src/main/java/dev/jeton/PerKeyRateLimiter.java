package dev.jeton;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link KeyedRateLimiter}: a table of one {@link Gcra} schedule per key.
 *
 * <p>The contract is on {@link KeyedRateLimiter}; this comment explains how it is kept.
 */
final class PerKeyRateLimiter<K> implements KeyedRateLimiter<K> {
  /*
   * Overview
   *
   * The table is a ConcurrentHashMap from key to schedule (Gcra: the theoretical arrival time,
   * 32 bytes, all keys sharing one immutable Gcra.Rate). Every read and change of a key's
   * schedule runs inside a compute or computeIfPresent on that key, so under the lock of its bin:
   * no global lock, and the clock is read inside, so that one key's decisions see times in the
   * order they are made (a time read before the lock could be older than one already used, and
   * the bound would hold only up to that lag). A schedule is never touched outside its bin lock,
   * and a dropped one never again: giveBack finds it by identity in the table, or does nothing.
   *
   * Dropping. A schedule whose bucket is full at now (Gcra.fullAt: tat <= now) admits exactly
   * what a new one made at now would, now and later, so removing it loses nothing. Removal is
   * decided inside computeIfPresent, under the same lock as every admission, so an admission can
   * never land on a schedule that has just been dropped.
   *
   * The bound on keys. `reserved` counts the table's entries: a new key takes a slot (a CAS below
   * maxKeys) inside its compute before it is inserted, and a removal gives its slot back after
   * it. A new key that finds no slot sweeps: one thread at a time walks the table and drops every
   * schedule full at that moment, then the key tries once more; if there is still no slot it is
   * refused (its attempt says when to retry: at sweepNotBefore). A sweep costs a walk of the
   * table, so it never runs before sweepNotBefore: after a sweep that freed nothing, the earliest
   * moment one of the schedules it kept can be full (tats only move forward, except by giveBack,
   * which can only make that moment earlier: the refusal is then conservative); after one that
   * freed some, at once. And never within 16 times the last sweep's own duration after it, so
   * that a flood of new keys against a table full of busy ones spends at most about a
   * seventeenth of one thread's time walking it.
   *
   * Invariants:
   *   K1. table.size() <= reserved <= maxKeys.
   *   K2. For each key, the admissions not given back form a run of Gcra admissions at
   *       non-decreasing times on one schedule, or on a schedule that was full when dropped and a
   *       new one after it, which is the same run: over any window of length t, at most
   *       burst + t / T.
   *   K3. giveBack changes a schedule only if it still is at the tat its attempt left, so the
   *       attempt was the last admission on it: taking it back restores the state before it
   *       (max(tat before, time of the attempt), which admits the same as the tat before).
   */

  /** A sweep waits this many times its own duration before the next. */
  private static final int SWEEP_COST_FACTOR = 16;

  private final Gcra.Rate rate;
  private final int maxKeys;
  private final LongSupplier clock;
  private final ConcurrentHashMap<K, Gcra> table = new ConcurrentHashMap<>();
  private final AtomicInteger reserved = new AtomicInteger();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  private volatile long sweepNotBefore;

  PerKeyRateLimiter(Gcra.Rate rate, int maxKeys, LongSupplier clock) {
    this.rate = rate;
    this.maxKeys = maxKeys;
    this.clock = clock;
    this.sweepNotBefore = clock.getAsLong();
  }

  @Override
  public Attempt attempt(K key, int weight) {
    Objects.requireNonNull(key, "key");
    checkWeight(weight);
    Attempt attempt = attemptInTable(key, weight);
    if (attempt == null && sweep()) {
      attempt = attemptInTable(key, weight);
    }
    return attempt != null ? attempt : refusedNewKey(key, weight);
  }

  /** The attempt on {@code key}'s schedule, made if need be; null if the table had no room. */
  private @Nullable Attempt attemptInTable(K key, int weight) {
    Attempt[] made = new Attempt[1];
    table.compute(
        key,
        (k, schedule) -> {
          long now = clock.getAsLong();
          Gcra s = schedule;
          if (s == null) {
            if (!reserveSlot()) {
              return null; // no room: the caller sweeps or refuses
            }
            s = new Gcra(rate, now);
          }
          long at = s.admissibleAt(now, weight);
          boolean passed = at == now;
          if (passed) {
            s.admit(now, weight);
          }
          made[0] = attemptOn(k, s, now, passed, weight, at - now);
          return s;
        });
    return made[0];
  }

  @Override
  public Attempt peek(K key, int weight) {
    Objects.requireNonNull(key, "key");
    checkWeight(weight);
    Attempt[] seen = new Attempt[1];
    table.computeIfPresent(
        key,
        (k, s) -> {
          long now = clock.getAsLong();
          long at = s.admissibleAt(now, weight);
          seen[0] =
              new Attempt(
                  this, k, at == now, weight, s.available(now), at - now, untilFull(s, now), null);
          return s;
        });
    Attempt a = seen[0];
    return a != null ? a : new Attempt(this, key, true, weight, rate.burst, 0, 0, null);
  }

  @Override
  public boolean giveBack(Attempt attempt) {
    if (attempt.limiter() != this) {
      throw new IllegalArgumentException("not an attempt of this limiter: " + attempt);
    }
    Gcra moved = attempt.schedule;
    if (!attempt.passed() || moved == null) {
      return false;
    }
    boolean[] given = new boolean[2]; // given back; and dropped, being full again
    @SuppressWarnings("unchecked") // the limiter is this one, so the key is a K
    K key = (K) attempt.key();
    table.computeIfPresent(
        key,
        (k, s) -> {
          if (s != moved || attempt.givenBack || !s.isAt(attempt.tatNanos, attempt.tatFraction)) {
            return s; // dropped and made again, given back already, or admitted since: K3
          }
          attempt.givenBack = true;
          given[0] = true;
          s.giveBack(attempt.weight());
          given[1] = s.fullAt(clock.getAsLong());
          return given[1] ? null : s;
        });
    if (given[1]) {
      reserved.decrementAndGet(); // after the removal: K1
    }
    return given[0];
  }

  private Attempt attemptOn(K key, Gcra s, long now, boolean passed, int weight, long wait) {
    return new Attempt(
        this, key, passed, weight, s.available(now), wait, untilFull(s, now), passed ? s : null);
  }

  private static long untilFull(Gcra s, long now) {
    return Math.max(0, s.fullAtNanos() - now);
  }

  /** A new key the full table has no room for: refused until the next sweep may run. */
  private Attempt refusedNewKey(K key, int weight) {
    long wait = Math.max(0, sweepNotBefore - clock.getAsLong());
    return new Attempt(this, key, false, weight, 0, wait, wait, null);
  }

  private boolean reserveSlot() {
    while (true) {
      int n = reserved.get();
      if (n >= maxKeys) {
        return false;
      }
      if (reserved.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /**
   * Drops every schedule full now, if no sweep runs and none is due later; returns whether it freed
   * a slot (a new key should try again).
   */
  private boolean sweep() {
    long start = clock.getAsLong();
    if (start - sweepNotBefore < 0 || !sweeping.compareAndSet(false, true)) {
      return false;
    }
    try {
      long[] earliestFull = {Long.MAX_VALUE}; // as an offset from start, of the schedules kept
      int[] freed = {0};
      for (K key : table.keySet()) {
        table.computeIfPresent(
            key,
            (k, s) -> {
              if (s.fullAt(clock.getAsLong())) {
                freed[0]++;
                return null;
              }
              earliestFull[0] = Math.min(earliestFull[0], s.fullAtNanos() - start);
              return s;
            });
      }
      reserved.addAndGet(-freed[0]); // after the removals: K1
      long end = clock.getAsLong();
      long next = end + SWEEP_COST_FACTOR * (end - start);
      if (freed[0] == 0 && earliestFull[0] != Long.MAX_VALUE) {
        next = Math.max(next - start, earliestFull[0]) + start;
      }
      sweepNotBefore = next;
      return freed[0] > 0;
    } finally {
      sweeping.set(false);
    }
  }

  private void checkWeight(int weight) {
    if (weight < 1 || weight > rate.burst) {
      throw new IllegalArgumentException(
          "weight must be from 1 to the burst, " + rate.burst + ", was " + weight);
    }
  }

  @Override
  public long permits() {
    return rate.permits;
  }

  @Override
  public Duration period() {
    return rate.period;
  }

  @Override
  public int burst() {
    return rate.burst;
  }

  @Override
  public int maxKeys() {
    return maxKeys;
  }

  @Override
  public int keys() {
    return table.size();
  }

  @Override
  public String toString() {
    return "KeyedRateLimiter["
        + rate.permits
        + " per "
        + rate.period
        + ", burst "
        + rate.burst
        + ", keys "
        + table.size()
        + " of "
        + maxKeys
        + "]";
  }
}
