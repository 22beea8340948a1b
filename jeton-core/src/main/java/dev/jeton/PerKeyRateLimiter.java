package dev.jeton;

import dev.jeton.internal.Gcra;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

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
   * 32 bytes, all keys sharing one immutable Gcra.Rate). A key's schedule is read and changed only
   * under its own monitor, with the clock read inside, so that one key's decisions see times in
   * the order they are made (a time read before the lock could be older than one already used,
   * and the bound would hold only up to that lag). No global lock: a lookup is a lock-free get,
   * and keys contend only on the map's insertions.
   *
   * Dropping. A schedule whose bucket is full at now (Gcra.fullAt: tat <= now) admits exactly
   * what a new one made at now would, now and later, so removing it loses nothing. It is dropped
   * under its monitor: retired (Gcra.retire), then removed from the table. A thread that found it
   * before and takes its monitor after sees it retired and looks the key up again, so no
   * admission ever lands on a dropped schedule.
   *
   * The bound on keys. `reserved` counts the table's entries: a new key takes a slot (a CAS below
   * maxKeys) before it is inserted (and gives it back if another thread inserted the key first),
   * and a drop gives its slot back after the removal. A new key that finds no slot sweeps: one
   * thread at a time walks the table and drops every schedule full at that moment, then the key
   * tries once more; if there is still no slot it is refused (its attempt says when to retry: at
   * sweepNotBefore). A sweep costs a walk of the table, so it never runs before sweepNotBefore:
   * after a sweep that freed nothing, the earliest moment one of the schedules it kept can be
   * full (tats only move forward, except by giveBack, which can only make that moment earlier:
   * the refusal is then conservative); after one that freed some, at once. And never within 16
   * times the last sweep's own duration after it, so that a flood of new keys against a table
   * full of busy ones spends at most about a seventeenth of one thread's time walking it.
   *
   * Invariants:
   *   K1. table.size() <= reserved <= maxKeys.
   *   K2. A schedule in the table is not retired; a retired one is never changed again.
   *   K3. For each key, the admissions not given back form a run of Gcra admissions at
   *       non-decreasing times on one schedule, or on a schedule that was full when dropped and a
   *       new one after it, which is the same run: over any window of length t, at most
   *       burst + t / T.
   *   K4. giveBack changes a schedule only if it still is at the tat its attempt left, so the
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
    boolean swept = false;
    while (true) {
      Gcra s = table.get(key);
      if (s == null) {
        if (!reserveSlot()) {
          if (!swept && sweep()) {
            swept = true;
            continue; // once more, with the room the sweep made
          }
          return refusedNewKey(key, weight);
        }
        s = new Gcra(rate, clock.getAsLong());
        Gcra first = table.putIfAbsent(key, s);
        if (first != null) {
          reserved.decrementAndGet(); // another thread inserted the key: its slot is the one
          s = first;
        }
      }
      synchronized (s) {
        if (s.retired()) {
          continue; // dropped since we found it: K2
        }
        long now = clock.getAsLong();
        long at = s.admissibleAt(now, weight);
        boolean passed = at == now;
        if (passed) {
          s.admit(now, weight);
        }
        return attemptOn(key, s, now, passed, weight, at - now);
      }
    }
  }

  @Override
  public Attempt peek(K key, int weight) {
    Objects.requireNonNull(key, "key");
    checkWeight(weight);
    Gcra s = table.get(key);
    if (s != null) {
      synchronized (s) {
        if (!s.retired()) {
          long now = clock.getAsLong();
          long at = s.admissibleAt(now, weight);
          return new Attempt(
              this, key, at == now, weight, s.available(now), at - now, untilFull(s, now), null);
        }
      }
    }
    return new Attempt(this, key, true, weight, rate.burst, 0, 0, null); // as a new key
  }

  @Override
  public boolean giveBack(Attempt attempt) {
    if (attempt.limiter() != this) {
      throw new IllegalArgumentException("not an attempt of this limiter: " + attempt);
    }
    Gcra s = attempt.schedule;
    if (s == null) {
      return false; // it did not pass
    }
    synchronized (s) {
      if (s.retired() || attempt.givenBack || !s.isAt(attempt.tatNanos, attempt.tatFraction)) {
        return false; // dropped, given back already, or admitted since: K4
      }
      attempt.givenBack = true;
      s.giveBack(attempt.weight());
      if (s.fullAt(clock.getAsLong())) {
        @SuppressWarnings("unchecked") // the limiter is this one, so the key is a K
        K key = (K) attempt.key();
        drop(key, s);
      }
      return true;
    }
  }

  /** Drops {@code s}, full, from the table; its monitor held. */
  private void drop(K key, Gcra s) {
    s.retire();
    table.remove(key, s);
    reserved.decrementAndGet(); // after the removal: K1
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
      long earliestFull = Long.MAX_VALUE; // as an offset from start, of the schedules kept
      int freed = 0;
      for (Map.Entry<K, Gcra> e : table.entrySet()) {
        Gcra s = e.getValue();
        synchronized (s) {
          if (s.retired()) {
            continue; // a give-back dropped it meanwhile
          }
          if (s.fullAt(clock.getAsLong())) {
            drop(e.getKey(), s);
            freed++;
          } else {
            earliestFull = Math.min(earliestFull, s.fullAtNanos() - start);
          }
        }
      }
      long end = clock.getAsLong();
      long next = end + SWEEP_COST_FACTOR * (end - start);
      if (freed == 0 && earliestFull != Long.MAX_VALUE) {
        next = Math.max(next - start, earliestFull) + start;
      }
      sweepNotBefore = next;
      return freed > 0;
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
