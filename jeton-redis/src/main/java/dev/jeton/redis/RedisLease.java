package dev.jeton.redis;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.LeakRecord;
import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.ReleaseOnce;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * A lease held by this process. It ends once: released, given back, or lost. While held, a watch
 * fires at the local deadline (the lease time counted from when the request that set the expiry was
 * sent, so never after the expiry in Redis unless clocks run at different rates); a renewal moves
 * the deadline and the watch, and a watch that fires first loses the lease.
 *
 * <p>A lease granted from the queue expires in Redis at its waiter's expiry until it is first
 * renewed (semaphore.lua, grantHead), which may come before the handle's next renewal round. So the
 * watch also fires a third of the way to that deadline, if the lease is still held then, to renew
 * it, and again two thirds of the way if no renewal succeeded meanwhile (as a round leaves room for
 * two failed renewals). A lease released sooner (most are) costs no renewal. A renewal sent twice
 * in a race (an early one and a round's) does no harm.
 *
 * <p>Leaks. The handle's leases map and the watch's timer hold this object for as long as it is
 * held, so it can never become unreachable while held: a lease watched for leaks is handed out as a
 * {@link WatchedLease}, which the caller alone holds, and whose record ({@code leak}) every end
 * here forgets, whichever way the lease ends. A lease reported leaked is released (its renewals
 * stop, Redis frees it) if its handle releases leaked leases, else it stays held and renewed.
 */
final class RedisLease extends ReleaseOnce implements Lease {
  private final Leases leases;
  private final String id;
  private final List<FencingToken> tokens;
  private final CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
  private volatile long expiresAtMillis;
  private volatile long deadlineNanos;

  /** When to renew ahead of the rounds (see the class comment), or 0: not before the deadline. */
  private volatile long earlyRenewalNanos;

  private int earlyRenewals; // read and written by the watch only, on the timer thread

  @GuardedBy("this")
  private @Nullable Future<?> watch;

  /** The leak record of its watched handle, or null: set once, before the handle is handed out. */
  private volatile @Nullable LeakRecord leak;

  RedisLease(
      Leases leases,
      String id,
      int permits,
      List<FencingToken> tokens,
      long expiresAtMillis,
      long deadlineNanos,
      boolean shortened) {
    super(permits);
    this.leases = leases;
    this.id = id;
    this.tokens = List.copyOf(tokens);
    this.expiresAtMillis = expiresAtMillis;
    this.deadlineNanos = deadlineNanos;
    long now = System.nanoTime();
    this.earlyRenewalNanos = shortened ? now + (deadlineNanos - now) / 3 : 0;
  }

  /**
   * What the caller gets: this lease, or if {@code leakWatch} says it is watched for leaks, a
   * {@link WatchedLease} of it, recorded. Called once, before the caller can see the lease.
   */
  Lease handOut(LeakTracker.@Nullable Acquisition leakWatch) {
    LeakTracker tracker = leases.leakTracker();
    if (leakWatch == null || tracker == null) {
      return this;
    }
    WatchedLease handle = new WatchedLease(this);
    // the give-back holds this lease, not the handle, which must become unreachable
    leak = tracker.record(handle, leakWatch, "lease", held(), this::release);
    if (isEnded()) {
      forgetLeak(); // ended (lost, given back) before its record was set
    }
    return handle;
  }

  /** Ends the lease (see ReleaseOnce) and forgets its leak record; false if it had ended. */
  private boolean finish() {
    if (!end()) {
      return false;
    }
    forgetLeak();
    return true;
  }

  private void forgetLeak() {
    LeakRecord record = leak;
    if (record != null) {
      LeakRecord.forget(record, this);
    }
  }

  /** Whether the local deadline has passed: the lease may have expired in Redis already. */
  boolean deadlinePassed() {
    return System.nanoTime() - deadlineNanos >= 0;
  }

  /** Starts watching the deadline. */
  void watch() {
    rewatch();
  }

  /** A renewal succeeded: the lease expires at {@code expiry}, and locally at {@code deadline}. */
  void renewed(long expiry, long deadline) {
    if (deadline > deadlineNanos) {
      expiresAtMillis = expiry;
      deadlineNanos = deadline;
      earlyRenewalNanos = 0;
      rewatch();
    }
  }

  private synchronized void rewatch() {
    Future<?> old = watch;
    if (old != null) {
      old.cancel(false);
    }
    if (!isEnded()) {
      long early = earlyRenewalNanos;
      long at = early != 0 && early - deadlineNanos < 0 ? early : deadlineNanos;
      watch = RedisTimer.TIMER.schedule(this::watchFired, at - System.nanoTime());
    }
  }

  private void watchFired() {
    long now = System.nanoTime();
    if (now - deadlineNanos < 0) { // renewed since this watch was set, or an early renewal is due
      long early = earlyRenewalNanos;
      if (early != 0 && now - early >= 0) {
        earlyRenewalNanos = ++earlyRenewals < 2 ? now + (deadlineNanos - now) / 2 : 0;
        leases.renewNow(this);
      }
      rewatch();
      return;
    }
    Throwable failure = leases.lastRenewFailure();
    lose(
        "it could not be renewed within the lease time"
            + (failure == null ? "" : " (last renewal failed: " + failure + ")"));
  }

  /** Marks the lease lost and tells whoever listens; gives the permits back if Redis has them. */
  void lose(String reason) {
    if (!finish()) {
      return;
    }
    stopWatch();
    leases.forget(this);
    var unused = leases.release(id); // in case Redis still has it: free it for others now
    LeaseLoss loss = new LeaseLoss(id, reason, Instant.now());
    try {
      leases.completionExecutor().execute(() -> lost.complete(loss));
    } catch (RuntimeException rejected) {
      lost.complete(loss);
    }
  }

  private synchronized void stopWatch() {
    Future<?> old = watch;
    if (old != null) {
      old.cancel(false);
    }
  }

  /**
   * Gives back a grant whose request's caller gave up as it was granted, and so never saw it: a
   * cancel of its id, so that Redis records the request as cancelled, as the caller knows it.
   */
  void giveBack() {
    if (!finish()) {
      return;
    }
    stopWatch();
    leases.withdraw(id); // sent before forget, which may close the handle
    leases.forget(this);
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public String semaphore() {
    return leases.semaphoreName();
  }

  @Override
  public List<FencingToken> fencingTokens() {
    return tokens;
  }

  @Override
  public Instant expiresAt() {
    return Instant.ofEpochMilli(expiresAtMillis);
  }

  @Override
  public boolean isHeld() {
    return !isEnded() && System.nanoTime() - deadlineNanos < 0;
  }

  @Override
  public CompletionStage<LeaseLoss> lost() {
    return lost.minimalCompletionStage();
  }

  @Override
  public int permits() {
    return held();
  }

  @Override
  public void release() {
    var unused = releaseAsync(); // one Redis never sees lets the lease expire: nothing is lost
  }

  @Override
  public CompletableFuture<Boolean> releaseAsync() {
    if (!finish()) {
      return CompletableFuture.completedFuture(false);
    }
    stopWatch();
    // Answered on an I/O thread: handed off, so that no callback of the caller's runs there.
    CompletableFuture<Boolean> released =
        new Handoff.HandedOff<>(leases.release(id), leases.completionExecutor(), leases.spin());
    leases.forget(this);
    return released;
  }

  @Override
  public String toString() {
    return "Lease[id="
        + id
        + ", permits="
        + held()
        + ", semaphore="
        + leases.semaphoreName()
        + ", tokens="
        + FencingToken.format(tokens)
        + "]";
  }
}
