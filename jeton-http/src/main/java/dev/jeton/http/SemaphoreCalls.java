package dev.jeton.http;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Asks a semaphore that may be remote whether it has a permit, on threads of its own, so that no
 * one waits longer than a bound for the answer; and says whether the semaphore answers.
 */
final class SemaphoreCalls {
  /*
   * Why: a remote semaphore's tryAcquire blocks its caller for a round trip, and for as long as
   * its client lets it when the server does not answer (a RedisSemaphore on a frozen Redis: its
   * 10 s command timeout). Made on a request's thread, it held every request that long. Here each
   * call runs on one of at most THREADS daemon threads, and its future fails with `unanswered`
   * once `timeoutNanos` pass without an answer: whoever waits on it decides then, and a permit
   * that the call brings later is released. Jeton core's semaphores are in-process (their
   * tryAcquire takes a lock and returns), so they are called directly, without this class.
   *
   * Each call's future is completed once (C1), by the first of: its answer (a permit or empty),
   * its failure, or its timer with `unanswered`. A call's `state` records which came first, so
   * that `overdue` counts exactly the calls whose timer came first and that have not returned yet
   * (C2): while it is above zero the semaphore does not answer, and the control refuses new
   * requests at once rather than tie up a thread and a request for a call that will not be
   * answered either. A call that finds its timer came first before it started is not made at all
   * (its requester has gone). `latestFailure` is the failure of the latest call to return, or
   * null if it was answered: what the control reports when it rejects for the semaphore's sake.
   *
   * Invariants:
   *   C1. A call's future is completed exactly once, and not by the caller (it is never handed
   *       out to be completed or cancelled: callers only chain on it).
   *   C2. overdue = calls in state OVERDUE (timed out, not returned).
   *   C3. A permit returned by a call whose future already failed is released, never lost.
   */

  /** Calls in progress at most; more wait for a thread, within their timeout. */
  static final int THREADS = 16;

  private static final int RUNNING = 0; // made or about to be, not returned, not timed out
  private static final int ANSWERED = 1; // returned first
  private static final int OVERDUE = 2; // its timer came first, and it has not returned
  private static final int LATE = 3; // returned after its timer

  private final Semaphore semaphore;
  private final long timeoutNanos;
  private final Timeouts timeouts;
  private final SemaphoreFailures failures;
  private final TimeoutException unanswered;
  private final Executor threads;
  private final AtomicInteger overdue = new AtomicInteger();
  private volatile @Nullable Throwable latestFailure;

  /**
   * Calls on {@code threads}, or, if null, on at most {@link #THREADS} daemon threads of its own,
   * which end when idle.
   */
  SemaphoreCalls(
      Semaphore semaphore,
      long timeoutNanos,
      Timeouts timeouts,
      SemaphoreFailures failures,
      @Nullable Executor threads) {
    this.semaphore = semaphore;
    this.timeoutNanos = timeoutNanos;
    this.timeouts = timeouts;
    this.failures = failures;
    this.unanswered = new Unanswered(Duration.ofNanos(timeoutNanos));
    this.threads = threads != null ? threads : ownThreads();
  }

  private static ThreadPoolExecutor ownThreads() {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            10,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            Timeouts.daemonThreads("jeton-http-semaphore-calls"));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * Whether {@code semaphore} needs this class: any but Jeton core's own, which are in-process
   * and answer at once.
   */
  static boolean mayBlock(Semaphore semaphore) {
    return !semaphore.getClass().getPackageName().equals(Semaphore.class.getPackageName());
  }

  /**
   * Asks for one permit, without queuing: the future completes with the permit or empty, fails
   * with the semaphore's failure, or fails with {@link #unanswered()} once the timeout passes.
   * Only chain on it: completing or cancelling it would lose the permit it may bring.
   */
  CompletableFuture<Optional<Permit>> tryAcquire() {
    Call call = new Call();
    call.timer = timeouts.schedule(call::timedOut, timeoutNanos);
    try {
      threads.execute(call);
    } catch (RejectedExecutionException closed) {
      call.failed(new SemaphoreClosedException("the admission control is closed"));
    }
    return call;
  }

  /** How long a call may go unanswered. */
  long timeoutNanos() {
    return timeoutNanos;
  }

  /** Whether a call has gone unanswered for longer than the timeout, and still is. */
  boolean notAnswering() {
    return overdue.get() > 0;
  }

  /**
   * Why the semaphore cannot be relied on now, or null if it answers: {@link #unanswered()} while
   * a call is overdue, else the failure of the latest call to return, if it failed.
   */
  @Nullable Throwable trouble() {
    return notAnswering() ? unanswered : latestFailure;
  }

  /** The failure of a call that the semaphore did not answer in time. */
  TimeoutException unanswered() {
    return unanswered;
  }

  /** No call is made from now on; those in progress end as they will. */
  void close() {
    if (threads instanceof ExecutorService own) {
      own.shutdown();
    }
  }

  /** One call of tryAcquire, and the future of its outcome. */
  private final class Call extends CompletableFuture<Optional<Permit>> implements Runnable {
    private final AtomicInteger state = new AtomicInteger(RUNNING);
    private volatile @Nullable Future<?> timer;

    @Override
    public void run() {
      if (state.get() != RUNNING) { // its requester gave up before a thread was free
        returned();
        return;
      }
      Optional<Permit> permit;
      try {
        permit = semaphore.tryAcquire(1);
      } catch (RuntimeException | Error e) { // an Error too: an unreturned call would stay overdue
        failed(e);
        if (e instanceof Error error) {
          throw error;
        }
        return;
      }
      latestFailure = null;
      returned();
      if (!complete(permit)) {
        permit.ifPresent(this::giveBack); // too late: its requester was answered without it
      }
    }

    void failed(Throwable failure) {
      latestFailure = failure;
      returned();
      completeExceptionally(failure);
    }

    void timedOut() {
      if (state.compareAndSet(RUNNING, OVERDUE)) {
        overdue.incrementAndGet();
        completeExceptionally(unanswered);
      }
    }

    private void returned() {
      if (state.compareAndSet(RUNNING, ANSWERED)) {
        Future<?> t = timer;
        if (t != null) {
          t.cancel(false);
        }
      } else if (state.compareAndSet(OVERDUE, LATE)) {
        overdue.decrementAndGet();
      }
    }

    private void giveBack(Permit permit) {
      try {
        permit.release();
      } catch (RuntimeException e) {
        failures.releaseFailed(e);
      }
    }
  }

  /** The semaphore did not answer in time; shared, without a stack: it says all there is. */
  private static final class Unanswered extends TimeoutException {
    private static final long serialVersionUID = 1L;

    Unanswered(Duration timeout) {
      super("the semaphore did not answer within " + timeout.toMillis() + " ms");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
