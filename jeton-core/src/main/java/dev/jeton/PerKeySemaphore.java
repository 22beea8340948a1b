package dev.jeton;

import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.ReleaseOnce;
import dev.jeton.internal.engine.WithdrawingFuture;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The semaphore of one key of a {@link KeyedSemaphore}: a view that finds (or makes) the key's
 * entry for each operation, and holds a use of it for as long as a request needs it.
 *
 * <p>A request takes a use of the entry, then its key's permits from the entry's semaphore, then
 * (with a global limit) the global permits. Its {@link KeyedPermit} gives back the global permits,
 * then the key's, then the use. Every way a request can fail gives back what it took, in the same
 * order.
 */
final class PerKeySemaphore<K> implements Semaphore {
  private final KeyedSemaphore<K> keyed;
  private final K key;

  PerKeySemaphore(KeyedSemaphore<K> keyed, K key) {
    this.keyed = keyed;
    this.key = key;
  }

  // ------------------------------------------------------------------ acquiring

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    try {
      return acquireBlocking(permits, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    return acquireBlocking(permits, Objects.requireNonNull(timeout, "timeout"));
  }

  /** Waits for the key's permits, then the global ones; {@code timeout} null waits for ever. */
  private Permit acquireBlocking(int permits, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    long deadline = KeyedSemaphore.deadline(timeout); // checks the timeout
    KeyEntry entry = useForRequest(permits);
    Permit keyPermit = null;
    try {
      keyPermit =
          timeout == null
              ? entry.semaphore.acquire(permits)
              : entry.semaphore.acquire(permits, timeout);
      Permit globalPermit = null;
      if (keyed.global() != null) {
        globalPermit = awaitGlobal(entry, permits, deadline, timeout);
      }
      return KeyedPermit.of(keyed, key, entry, keyPermit, globalPermit);
    } catch (Throwable failure) {
      if (keyPermit != null) {
        keyPermit.release();
      }
      keyed.unuse(key, entry);
      throw failure;
    }
  }

  /**
   * Takes a use of the key's entry for a request of {@code permits}: a weight above the global
   * limit is refused before, a closed keyed semaphore after (so that a close racing with this
   * request either is seen here or closes the entry it took).
   */
  private KeyEntry useForRequest(int permits) {
    keyed.checkGlobalWeight(permits);
    KeyEntry entry = keyed.use(key);
    if (keyed.isClosed()) {
      keyed.unuse(key, entry);
      throw closedException();
    }
    return entry;
  }

  /** Waits for the global permits, holding the key's; see the class comment of KeyedSemaphore. */
  private Permit awaitGlobal(KeyEntry entry, int permits, long deadline, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    CompletableFuture<Permit> request = requestGlobal(entry, permits, deadline);
    try {
      return request.get();
    } catch (InterruptedException interrupted) {
      if (!request.cancel(false) && !request.isCompletedExceptionally()) {
        request.join().release(); // granted as we were interrupted: give it back
      }
      throw interrupted;
    } catch (ExecutionException failed) {
      Throwable cause = globalFailure(Objects.requireNonNull(failed.getCause()), permits, timeout);
      if (cause instanceof TimeoutException) {
        throw (TimeoutException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      throw new CompletionException(cause);
    } finally {
      entry.stopWaitingForGlobal(request); // before the caller hears of it
    }
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
    KeyEntry entry = useForRequest(permits);
    Permit keyPermit = null;
    try {
      keyPermit = entry.semaphore.tryAcquire(permits).orElse(null);
      FifoSemaphore global = keyed.global();
      Permit globalPermit = null;
      if (keyPermit != null && global != null) {
        globalPermit = global.tryAcquire(permits).orElse(null);
        if (globalPermit == null) {
          keyPermit.release();
          keyPermit = null;
        }
      }
      if (keyPermit == null) {
        keyed.unuse(key, entry);
        return Optional.empty();
      }
      return Optional.of(KeyedPermit.of(keyed, key, entry, keyPermit, globalPermit));
    } catch (RuntimeException failure) {
      if (keyPermit != null) {
        keyPermit.release();
      }
      keyed.unuse(key, entry);
      throw failure;
    }
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    return requestAsync(permits, null);
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    return requestAsync(permits, Objects.requireNonNull(timeout, "timeout"));
  }

  private CompletableFuture<Permit> requestAsync(int permits, @Nullable Duration timeout) {
    long deadline = KeyedSemaphore.deadline(timeout);
    KeyEntry entry;
    try {
      entry = useForRequest(permits);
    } catch (SemaphoreClosedException closed) {
      return CompletableFuture.failedFuture(closed); // as the semaphore contract says
    }
    // The stages are this request's own: a Scope's task tracks the caller's future instead, so
    // that its cancel waits for the outcome the caller's stage depends on (see ScopeTask).
    ScopeTask<?> task = ScopeTask.suspend();
    WithdrawingFuture<Permit> result;
    try {
      CompletableFuture<Permit> keyRequest;
      try {
        keyRequest =
            timeout == null
                ? entry.semaphore.acquireAsync(permits)
                : entry.semaphore.acquireAsync(permits, timeout);
      } catch (RuntimeException failure) {
        keyed.unuse(key, entry);
        throw failure;
      }
      result = new AsyncRequest(entry, permits, deadline, timeout, keyRequest).start();
    } finally {
      ScopeTask.resume(task);
    }
    if (!result.isDone()) {
      ScopeTask.trackWait(result);
    }
    return result;
  }

  /**
   * An asynchronous request in its two stages. Its {@code result} is the caller's future, a {@link
   * WithdrawingFuture}: completing it from outside (cancel, complete, a failure) withdraws
   * whichever stage is pending before the future completes, and a grant that loses to that is given
   * back. The stage that ends the request stops counting in the key's queueLength() before it
   * completes {@code result}, so that the caller's callbacks find it gone.
   */
  private final class AsyncRequest {
    final KeyEntry entry;
    final int permits;
    final long deadline;
    final @Nullable Duration timeout;
    final WithdrawingFuture<Permit> result =
        new WithdrawingFuture<>() {
          @Override
          protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
            CompletableFuture<Permit> stage = pending;
            stage.cancel(false); // keyStageDone checks result after it sets pending
            if (keyed.global() != null) {
              // A global grant that won the stage may still be on its way to the callback that
              // stops it counting: the request waits no more either way, and its callbacks must
              // find it gone from queueLength().
              entry.stopWaitingForGlobal(stage);
            }
            complete.run();
          }
        };

    /** The stage now pending: the key's request, then the global one. */
    volatile CompletableFuture<Permit> pending;

    AsyncRequest(
        KeyEntry entry,
        int permits,
        long deadline,
        @Nullable Duration timeout,
        CompletableFuture<Permit> keyRequest) {
      this.entry = entry;
      this.permits = permits;
      this.deadline = deadline;
      this.timeout = timeout;
      this.pending = keyRequest;
    }

    WithdrawingFuture<Permit> start() {
      var unusedNext = pending.whenComplete(this::keyStageDone);
      return result;
    }

    private void keyStageDone(@Nullable Permit keyPermit, @Nullable Throwable failure) {
      if (keyPermit == null) {
        fail(null, Tasks.unwrap(Objects.requireNonNull(failure)));
        return;
      }
      if (keyed.global() == null) {
        deliver(KeyedPermit.of(keyed, key, entry, keyPermit, null));
        return;
      }
      CompletableFuture<Permit> globalRequest;
      try {
        globalRequest = requestGlobal(entry, permits, deadline);
      } catch (RuntimeException refused) { // the global limit was lowered below the request
        fail(keyPermit, refused);
        return;
      }
      pending = globalRequest;
      if (result.isGivenUp()) {
        globalRequest.cancel(false); // given up while the global request was being made
      }
      var unused =
          globalRequest.whenComplete(
              (globalPermit, globalFailure) -> {
                entry.stopWaitingForGlobal(globalRequest);
                if (globalPermit == null) {
                  fail(
                      keyPermit,
                      globalFailure(Objects.requireNonNull(globalFailure), permits, timeout));
                } else {
                  deliver(KeyedPermit.of(keyed, key, entry, keyPermit, globalPermit));
                }
              });
    }

    private void deliver(KeyedPermit permit) {
      if (!result.settle(permit)) {
        permit.release(); // given up as it was granted
      }
    }

    private void fail(@Nullable Permit keyPermit, Throwable failure) {
      if (keyPermit != null) {
        keyPermit.release();
      }
      keyed.unuse(key, entry);
      result.settleExceptionally(failure);
    }
  }

  /** Asks for the global permits, recording the wait in the entry if it has to wait. */
  private CompletableFuture<Permit> requestGlobal(KeyEntry entry, int permits, long deadline) {
    FifoSemaphore global = Objects.requireNonNull(keyed.global());
    long nanos = KeyedSemaphore.nanosLeft(deadline);
    CompletableFuture<Permit> request =
        nanos == Long.MAX_VALUE
            ? global.acquireAsync(permits)
            : global.acquireAsync(permits, Duration.ofNanos(nanos));
    if (!request.isDone()) {
      entry.waitForGlobal(request, permits);
    }
    return request;
  }

  /** The failure to report for a global request: a timeout names the whole wait and the key. */
  private Throwable globalFailure(Throwable failure, int permits, @Nullable Duration timeout) {
    Throwable cause = Tasks.unwrap(failure);
    if (cause instanceof TimeoutException && timeout != null) {
      return new TimeoutException(
          "timed out after "
              + timeout
              + " waiting for "
              + permits
              + " permits of key '"
              + key
              + "': the key's permits were granted, the global limit's were not");
    }
    return cause;
  }

  private SemaphoreClosedException closedException() {
    return new SemaphoreClosedException(
        "keyed semaphore is closed: no requests for key '" + key + "'");
  }

  // ------------------------------------------------------------------ limit, idle, close

  @Override
  public void setLimit(int limit) {
    FifoSemaphore.checkLimit(limit);
    KeyEntry entry = keyed.use(key);
    try {
      entry.semaphore.setLimit(limit);
      entry.syncLimitFlag();
      entry.failRefusedGlobalWaits();
    } finally {
      keyed.unuse(key, entry);
    }
  }

  @Override
  public CompletableFuture<Void> awaitIdle() {
    KeyEntry entry = keyed.peek(key);
    if (entry == null || !entry.tryUse()) {
      // No entry in use: the key is idle now (a retired entry had no use when it retired, and no
      // other could be made before it left the map), and waiting needs no entry.
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> idle;
    try {
      idle = entry.semaphore.awaitIdle();
    } catch (RuntimeException failure) {
      keyed.unuse(key, entry);
      throw failure;
    }
    var unused = idle.whenComplete((none, failure) -> keyed.unuse(key, entry));
    return idle;
  }

  @Override
  public void close() {
    KeyEntry entry = keyed.use(key);
    try {
      entry.markClosed();
      entry.semaphore.close();
      entry.failRefusedGlobalWaits();
    } finally {
      keyed.unuse(key, entry);
    }
  }

  // ------------------------------------------------------------------ inspection

  @Override
  public int limit() {
    KeyEntry entry = keyed.peek(key);
    return entry != null ? entry.semaphore.limit() : keyed.configuredLimit(key);
  }

  @Override
  public int available() {
    KeyEntry entry = keyed.peek(key);
    return entry != null ? entry.semaphore.available() : keyed.configuredLimit(key);
  }

  /**
   * The requests waiting for the key's permits, and those holding them that wait for the global
   * limit.
   */
  @Override
  public int queueLength() {
    KeyEntry entry = keyed.peek(key);
    return entry != null ? entry.queueLength() : 0;
  }

  /** Always empty: statistics are not kept per key (an idle key's entry is removed). */
  @Override
  public Optional<SemaphoreStats> stats() {
    return Optional.empty();
  }

  @Override
  public String toString() {
    return "Semaphore[key="
        + key
        + ", limit="
        + limit()
        + ", available="
        + available()
        + ", queued="
        + queueLength()
        + "]";
  }

  /**
   * A permit of a key: the key's permits and, with a global limit, the global ones. Releasing it
   * gives back both and the entry use, at most once.
   */
  static final class KeyedPermit extends ReleaseOnce implements Permit {
    private final KeyedSemaphore<?> keyed;
    private final Object key;
    private final KeyEntry entry;
    private final Permit keyPermit;
    private final @Nullable Permit globalPermit;

    KeyedPermit(
        KeyedSemaphore<?> keyed,
        Object key,
        KeyEntry entry,
        Permit keyPermit,
        @Nullable Permit globalPermit) {
      super(keyPermit.permits());
      this.keyed = keyed;
      this.key = key;
      this.entry = entry;
      this.keyPermit = keyPermit;
      this.globalPermit = globalPermit;
    }

    @Override
    public int permits() {
      return held();
    }

    /**
     * A permit of {@code key}, watched for leaks if its keyed semaphore's tracker picks it; a
     * leaked one reported gives back what {@link #release()} would, where the tracker says so.
     */
    static KeyedPermit of(
        KeyedSemaphore<?> keyed,
        Object key,
        KeyEntry entry,
        Permit keyPermit,
        @Nullable Permit globalPermit) {
      KeyedPermit permit = new KeyedPermit(keyed, key, entry, keyPermit, globalPermit);
      LeakTracker tracker = keyed.leaks;
      if (tracker != null && tracker.watches()) {
        tracker.watch(
            permit,
            "permit for key " + key,
            permit.held(),
            tracker.releasesLeaked()
                ? () -> giveBack(keyed, key, entry, keyPermit, globalPermit)
                : null);
      }
      return permit;
    }

    @Override
    public void release() {
      if (end()) {
        giveBack(keyed, key, entry, keyPermit, globalPermit);
      }
    }

    /** Gives back the global permits, then the key's, then the entry use. */
    private static void giveBack(
        KeyedSemaphore<?> keyed,
        Object key,
        KeyEntry entry,
        Permit keyPermit,
        @Nullable Permit globalPermit) {
      if (globalPermit != null) {
        globalPermit.release();
      }
      keyPermit.release();
      keyed.unuse(key, entry);
    }

    @Override
    public String toString() {
      return "Permit[key=" + key + ", permits=" + permits() + (isEnded() ? ", released]" : "]");
    }
  }
}
