package dev.jeton.redis;

import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.engine.WithdrawingFuture;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * A request of a {@link RedisSemaphore} in progress: a future that follows {@link
 * WithdrawingFuture}'s rule (the first completion wins; a completion from outside withdraws the
 * request, and a grant it beat is given back), over a state that says whether this handle still
 * asks Redis for it.
 *
 * <p>Fields: {@code state} changes only by compare-and-set; {@code id} is changed only by {@link
 * Requests} when it resubmits the request under a new id; the rest are volatile flags and times
 * written by whichever thread handles a reply, a wake-up or the timer, each read as a whole.
 */
final class RedisRequest<T extends @Nullable Object> extends WithdrawingFuture<T> {
  /*
   * Overview
   *
   * Two things are decided once each, and kept apart. The future's completion decides what the
   * caller gets: first completion wins (WithdrawingFuture). The state decides what Redis is
   * told: it goes once, by compare-and-set, from PENDING to granted (the lease itself, or
   * IDLE_GRANTED for awaitIdle: a grant was seen and is on its way to the future) or to WITHDRAWN
   * (a cancel has been sent for the id). The lease is the state so that withdraw, finding the
   * request granted, has it at once. A reply or a wake-up acts on a request only while it is
   * PENDING.
   *
   * A completion from outside that wins calls withdraw, which finds the request either PENDING
   * (moves it to WITHDRAWN and sends the cancel; Redis gives back a grant it made meanwhile) or
   * granted (the grant lost: it gives the lease back, by a cancel of its id, so Redis records the
   * request as cancelled, as the caller sees it). Either way the cancel is on the command
   * connection before cancel() returns, so a later call of this handle sees the request gone.
   *
   * A failure from inside (timeout, close, too big, a reply not understood) moves the state
   * first and completes after, so that whoever wakes on the failure already sees the request
   * gone; if a completion from outside beat it to the future, the state was moved already and
   * there is nothing to give back.
   *
   * A blocking request is completed on the thread that brings its outcome (Lettuce's I/O thread,
   * the timer): only the acquiring thread waits on it, and no callback is registered. An
   * asynchronous one is handed off (Handoff): to a thread waiting in get/join, else to the
   * completion executor, so that no user callback runs on an I/O thread.
   */

  private static final Object PENDING = "pending";
  private static final Object IDLE_GRANTED = "idle";
  private static final Object WITHDRAWN = "withdrawn";

  private final Requests requests;
  final int weight; // 0: awaitIdle
  final @Nullable Duration timeout;
  volatile String id = Ids.newId();

  /** PENDING, then WITHDRAWN, IDLE_GRANTED or the granted lease. */
  private final AtomicReference<Object> state = new AtomicReference<>(PENDING);

  volatile boolean answered;

  /**
   * When the latest request for this id that Redis answered "queued" was sent (at first, when the
   * id was first sent): a grant announced by wake-up came after it.
   */
  volatile long queuedSince;

  /** Set at the timeout (from the start for a try): decided at the next answer, or at once. */
  volatile boolean timeoutDue;

  volatile @Nullable Throwable lastFailure;

  /**
   * The quarantine the latest "queued" answer named, or null; in force until {@code
   * quarantineEndsNanos} on this process's clock: a timeout before then says it was why.
   */
  private volatile @Nullable SemaphoreQuarantinedException quarantine;

  private volatile long quarantineEndsNanos;

  /** How an asynchronous request's completion leaves the I/O thread; null for a blocking one. */
  private final @Nullable Handoff handoff;

  /** Whether its lease will be watched for leaks, taken on the acquiring thread; null if not. */
  final LeakTracker.@Nullable Acquisition leakWatch;

  RedisRequest(Requests requests, int weight, boolean blocking, @Nullable Duration timeout) {
    this.requests = requests;
    this.weight = weight;
    this.timeout = timeout;
    this.timeoutDue = tries();
    this.handoff =
        blocking ? null : new Handoff(this, requests.completionExecutor(), requests.spin());
    this.leakWatch = weight == 0 ? null : requests.leakWatch();
  }

  /**
   * Whether this request has no time to wait (a zero timeout): it is sent as a try, never queued,
   * and decided by its one answer.
   */
  boolean tries() {
    Duration t = timeout;
    return t != null && (t.isZero() || t.isNegative());
  }

  boolean isPending() {
    return state.get() == PENDING;
  }

  /**
   * Settles the request with a grant ({@code null} for awaitIdle); false if it was withdrawn first,
   * in which case its cancel, sent after the request, gives the grant back in Redis.
   */
  // T is Lease, or Void for awaitIdle (granted with null, which NullAway cannot tell T allows)
  @SuppressWarnings({"unchecked", "NullAway"})
  boolean grant(@Nullable RedisLease lease) {
    if (!state.compareAndSet(PENDING, lease == null ? IDLE_GRANTED : lease)) {
      return false;
    }
    requests.settled(this);
    stopTimer();
    // If a completion from outside wins before this runs, its withdraw gives the lease back.
    T handed = lease == null ? null : (T) lease.handOut(leakWatch);
    deliver(() -> settle(handed));
    return true;
  }

  /**
   * Redis queued the request; {@code inQuarantine} is the quarantine it named (null if none), in
   * force until {@code endsNanos}.
   */
  void queued(@Nullable SemaphoreQuarantinedException inQuarantine, long endsNanos) {
    quarantineEndsNanos = endsNanos;
    quarantine = inQuarantine;
    answered = true;
    if (timeoutDue) {
      timedOut();
    }
  }

  void attemptFailed(Throwable failure) {
    lastFailure = failure;
    answered = true;
    if (timeoutDue) {
      timedOut();
    }
  }

  void timerFired() {
    if (answered) {
      timedOut();
    } else {
      timeoutDue = true; // decide when the first answer (or failure) comes
    }
  }

  /**
   * A try that Redis did not grant: {@code why} is the quarantine, or null if no permit was free.
   */
  void refused(@Nullable SemaphoreQuarantinedException why) {
    fail(timeoutException(why));
  }

  private void timedOut() {
    Throwable cause = lastFailure;
    SemaphoreQuarantinedException q = quarantine;
    if (cause == null && q != null && quarantineEndsNanos - System.nanoTime() > 0) {
      cause = q; // nothing could be granted: that, not a full semaphore, is why
    }
    fail(timeoutException(cause));
  }

  /** The timeout, with {@code cause} if the semaphore could not say, or could not grant. */
  private TimeoutException timeoutException(@Nullable Throwable cause) {
    TimeoutException e =
        new TimeoutException(
            "timed out after "
                + timeout
                + " waiting for "
                + weight
                + " permits of semaphore '"
                + requests.semaphoreName()
                + "'");
    if (cause != null) {
      e.initCause(cause);
    }
    return e;
  }

  /** Fails the request from inside (timeout, close, too big, Redis), withdrawing it first. */
  void fail(Throwable failure) {
    if (leave()) {
      deliver(() -> settleExceptionally(failure));
    }
  }

  @Override
  protected void withdraw(boolean timedOut) {
    if (leave()) {
      return;
    }
    if (state.get() instanceof RedisLease lease) {
      lease.giveBack(); // granted as the caller gave up: the grant lost
    }
  }

  /** PENDING to WITHDRAWN, telling Redis; false if the request was granted or withdrawn. */
  private boolean leave() {
    if (!state.compareAndSet(PENDING, WITHDRAWN)) {
      return false;
    }
    stopTimer();
    requests.withdrawn(this);
    return true;
  }

  private void deliver(Runnable completion) {
    Handoff h = handoff;
    if (h == null) {
      completion.run(); // a thread waits in get(): no callbacks to keep off Lettuce's threads
      return;
    }
    h.deliver(completion);
  }

  // An asynchronous request completes on the thread that waits for it, if any (Handoff).

  // A blocking request spins first, while its reply is on its way (ReplySpin).

  @Override
  public T get() throws InterruptedException, ExecutionException {
    Handoff h = handoff;
    if (h != null) {
      h.await();
      return super.get();
    }
    ReplySpin spin = requests.spin();
    long began = spin.spin(this::awaitsReply, Long.MAX_VALUE);
    try {
      return super.get();
    } finally {
      spin.waited(began);
    }
  }

  @Override
  public T get(long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    Handoff h = handoff;
    if (h != null) {
      return super.get(h.await(timeout, unit), TimeUnit.NANOSECONDS);
    }
    long nanos = unit.toNanos(timeout);
    ReplySpin spin = requests.spin();
    long began = spin.spin(this::awaitsReply, nanos);
    try {
      return super.get(nanos - (System.nanoTime() - began), TimeUnit.NANOSECONDS);
    } finally {
      spin.waited(began);
    }
  }

  @Override
  public T join() {
    Handoff h = handoff;
    if (h != null) {
      h.awaitUninterruptibly();
      return super.join();
    }
    ReplySpin spin = requests.spin();
    long began = spin.spin(this::awaitsReply, Long.MAX_VALUE);
    try {
      return super.join();
    } finally {
      spin.waited(began);
    }
  }

  /** Whether the outcome may come with the first reply, not yet here. */
  private boolean awaitsReply() {
    return !answered && !isDone();
  }
}
