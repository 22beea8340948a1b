package dev.jeton;

import dev.jeton.internal.Arguments;
import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.ReleaseOnce;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.Spin;
import dev.jeton.internal.engine.StatsRecorder;
import dev.jeton.internal.engine.Timer;
import dev.jeton.internal.engine.WaitNode;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link Semaphore}: weighted, strictly FIFO or barging within a bound ({@link
 * Fairness}), blocking and asynchronous; and the permit engine of the primitives built on it
 * ({@link FifoReadWriteLock}), which differ only in what a grant is ({@link Granting}) and what
 * they are called in messages ({@link Names}).
 *
 * <p>The contract is on {@link Semaphore}; the permit accounting that keeps it is {@link
 * PermitQueue}'s, the queue itself, its withdrawal and its delivery the engine's {@code WaitQueue}.
 * This class turns permits into typed grants: each kind of request is a {@link Granting}, made
 * once, which makes the grant of a request granted at once and of one granted from the queue alike,
 * so no public method casts what it returns.
 */
final class FifoSemaphore extends PermitQueue implements Semaphore {
  /** What a primitive on this engine is called in messages, and what a request of it is. */
  record Names(String kind, IntFunction<String> request) {}

  /** A semaphore's names: "semaphore", "3 permits". */
  static final Names SEMAPHORE = new Names("semaphore", permits -> permits + " permits");

  private final @Nullable String name;
  private final Names names;
  private final @Nullable LeakTracker leaks; // null: grants are not watched for leaks

  /** The semaphore's own requests: {@link Permit}s. */
  private final Granting<Permit> permitGrants;

  FifoSemaphore(
      @Nullable String name,
      int limit,
      Fairness fairness,
      @Nullable Executor completionExecutor,
      boolean stats) {
    this(name, limit, fairness, completionExecutor, stats, null);
  }

  /**
   * As built by {@link Semaphore.Builder}: watching its permits for leaks through {@code leaks}.
   */
  FifoSemaphore(
      @Nullable String name,
      int limit,
      Fairness fairness,
      @Nullable Executor completionExecutor,
      boolean stats,
      @Nullable LeakTracker leaks) {
    this(
        name,
        limit,
        fairness,
        completionExecutor,
        stats ? new StatsRecorder() : null,
        Timer.shared(),
        null,
        SEMAPHORE,
        leaks);
  }

  /** With the timers of timed asynchronous requests, and a spin hook: for tests. */
  FifoSemaphore(
      @Nullable String name,
      int limit,
      Fairness fairness,
      @Nullable Executor completionExecutor,
      boolean stats,
      Deadlines timers,
      @Nullable Runnable spinStep) {
    this(
        name,
        limit,
        fairness,
        completionExecutor,
        stats ? new StatsRecorder() : null,
        timers,
        spinStep,
        SEMAPHORE,
        null);
  }

  /** The engine of another primitive, called {@code names} in messages. */
  FifoSemaphore(
      @Nullable String name,
      int limit,
      Fairness fairness,
      @Nullable Executor completionExecutor,
      @Nullable StatsRecorder stats,
      Deadlines timers,
      @Nullable Runnable spinStep,
      Names names,
      @Nullable LeakTracker leaks) {
    super(limit, fairness, completionExecutor, stats, timers, spinStep);
    this.name = name;
    this.names = names;
    this.leaks = leaks;
    this.permitGrants =
        new Granting<>() {
          @Override
          Permit grant(int permits) {
            return watched(new LocalPermit(FifoSemaphore.this, permits), "permit", permits);
          }
        };
  }

  /**
   * {@code grant}, a {@code kind} of grant ("permit", "read lock"...) of {@code permits} of this
   * semaphore, watched for leaks if this semaphore's tracker picks it; if leaked and reported, it
   * gives its permits back where the tracker says so.
   */
  <G extends ReleaseOnce> G watched(G grant, String kind, int permits) {
    LeakTracker tracker = leaks;
    if (tracker != null && tracker.watches()) {
      watch(tracker, grant, kind, permits);
    }
    return grant;
  }

  /**
   * The rare part of {@link #watched}, a method of its own so that the JIT leaves it out of line:
   * inlined into every acquisition it cost 3 ns there, though it runs for one in 1,024.
   */
  private void watch(LeakTracker tracker, ReleaseOnce grant, String kind, int permits) {
    int counted = names == SEMAPHORE ? permits : 0; // a lock's report counts no permits
    tracker.watch(grant, kind, counted, tracker.releasesLeaked() ? () -> release(permits) : null);
  }

  // ---------------------------------------------------------------- acquiring, for any grant

  /**
   * One kind of request of a semaphore and its typed grant (a permit, a read guard, a write guard),
   * which gives its permits back to that semaphore once: made once per semaphore and kind, so that
   * a request allocates nothing for it. Each kind is a subclass of its own, which makes its grant
   * itself: the fast path loads it and allocates the grant, as before grants were typed (decision
   * 101).
   *
   * @param <T> the grant
   */
  abstract static class Granting<T> implements WaitNode.Grant<T> {
    /** The grant of {@code permits}, taken. */
    abstract T grant(int permits);

    /** The grant of a request granted from the queue. */
    @Override
    public final T of(WaitNode node) {
      return grant(node.weight());
    }
  }

  /** Acquires {@code permits} by blocking, as long as it takes. */
  <T> T acquireGrant(int permits, Granting<T> kind) throws InterruptedException {
    try {
      return acquireGrant(permits, Long.MAX_VALUE, null, kind);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  /** Acquires {@code permits} by blocking, at most {@code timeout}. */
  <T> T acquireGrant(int permits, Duration timeout, Granting<T> kind)
      throws InterruptedException, TimeoutException {
    return acquireGrant(permits, Arguments.toNanos(timeout), timeout, kind);
  }

  /** Acquires {@code permits} by blocking, at most {@code nanos} unless that is MAX_VALUE. */
  private <T> T acquireGrant(int permits, long nanos, @Nullable Duration timeout, Granting<T> kind)
      throws InterruptedException, TimeoutException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    // tryTake also checks permits against the limit
    if (tryTake(permits) || barges() && takesWithinSpin(permits)) {
      countAcquired();
      return kind.grant(permits);
    }
    WaitNode w = WaitNode.blocking(permits);
    if (enqueue(w)) {
      awaitBlocking(w, nanos, timeout);
    } else if (w.status() != WaitNode.GRANTED) {
      throw failure(w);
    }
    return kind.grant(permits);
  }

  /** Barging: whether {@code permits} came free, and were taken, within Spin's newcomer spin. */
  private boolean takesWithinSpin(int permits) {
    return Spin.beforeQueueing(() -> tryTake(permits) ? Boolean.TRUE : null) != null;
  }

  /**
   * The grant of {@code permits} if they are free now and no one queued waits for them (see
   * PermitQueue.tryTake), else null.
   */
  <T> @Nullable T tryGrant(int permits, Granting<T> kind) {
    if (tryTake(permits)) {
      countAcquired();
      return kind.grant(permits);
    }
    if (isClosed()) {
      throw closedException();
    }
    StatsRecorder s = stats;
    if (s != null) {
      s.countRejected();
    }
    return null;
  }

  /** Requests {@code permits} asynchronously, for at most {@code timeout} unless it is null. */
  <T> CompletableFuture<T> acquireGrantAsync(
      int permits, @Nullable Duration timeout, Granting<T> kind) {
    long nanos = timeout == null ? Long.MAX_VALUE : Arguments.toNanos(timeout);
    if (tryTake(permits)) {
      countAcquired();
      return CompletableFuture.completedFuture(kind.grant(permits));
    }
    WaitNode.NodeFuture<T> f = WaitNode.async(this, kind, permits, nanos != Long.MAX_VALUE);
    WaitNode w = f.node();
    return futureOf(
        f, enqueue(w), nanos, () -> timeoutException(w, Objects.requireNonNull(timeout)));
  }

  // ---------------------------------------------------------------- Semaphore

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    return acquireGrant(permits, permitGrants);
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    return acquireGrant(permits, timeout, permitGrants);
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
    return Optional.ofNullable(tryGrant(permits, permitGrants));
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    return acquireGrantAsync(permits, null, permitGrants);
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    return acquireGrantAsync(permits, timeout, permitGrants);
  }

  @Override
  public CompletableFuture<Void> awaitIdle() {
    WaitNode.NodeFuture<Void> f = WaitNode.async(this, WaitNode.Grant::nothing, 0, false);
    return futureOf(f, enqueueIdle(f.node()), Long.MAX_VALUE, () -> new TimeoutException());
  }

  // ---------------------------------------------------------------- inspection

  /**
   * Takes the lock: the queue and the QUEUED flag change together under it, so a reader without it
   * could see a request refused for a queue it then reports empty.
   */
  @Override
  public int queueLength() {
    return super.queueLength();
  }

  @Override
  public Optional<SemaphoreStats> stats() {
    StatsRecorder s = stats;
    if (s == null) {
      return Optional.empty();
    }
    lock.lock();
    try {
      long leaked = leaks == null ? 0 : leaks.leaked();
      return Optional.of(
          s.snapshot(
              queueLengthLocked(),
              (acquired, released, timedOut, cancelled, rejected, queued, peak, total, max) ->
                  new SemaphoreStats(
                      acquired, released, timedOut, cancelled, rejected, queued, peak, total, max,
                      leaked)));
    } finally {
      lock.unlock();
    }
  }

  @Nullable String name() {
    return name;
  }

  @Override
  public String toString() {
    return "Semaphore["
        + (name != null ? "name=" + name + ", " : "")
        + "limit="
        + limit()
        + ", available="
        + available()
        + ", queued="
        + queueLength()
        + (isClosed() ? ", closed]" : "]");
  }

  // ---------------------------------------------------------------- failures

  /** "semaphore 'db'", or the kind of the primitive built on this engine. */
  String describe() {
    return describe(names, name);
  }

  /** How messages name a primitive of these {@code names}: "semaphore 'db'", "semaphore". */
  static String describe(Names names, @Nullable String name) {
    return name != null ? names.kind() + " '" + name + "'" : names.kind();
  }

  private SemaphoreClosedException closedException() {
    return new SemaphoreClosedException(describe() + " is closed");
  }

  @Override
  protected TimeoutException timeoutException(WaitNode node, Duration timeout) {
    return new TimeoutException(
        "timed out after "
            + timeout
            + " waiting for "
            + names.request().apply(node.weight())
            + " of "
            + describe());
  }

  @Override
  protected RuntimeException failure(WaitNode node) {
    return failure(node.status(), node.weight());
  }

  /** The exception for a request of {@code permits} that left the queue with {@code status}. */
  RuntimeException failure(int status, int permits) {
    if (status == WaitNode.FAILED_CLOSED) {
      return closedException();
    }
    if (status == WaitNode.FAILED_LIMIT) {
      return new IllegalArgumentException(
          "the limit of "
              + describe()
              + " is now "
              + limit()
              + ", below the request for "
              + names.request().apply(permits));
    }
    throw new AssertionError("no failure for status " + status);
  }
}
