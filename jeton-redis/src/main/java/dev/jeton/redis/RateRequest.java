package dev.jeton.redis;

import dev.jeton.internal.engine.WithdrawingFuture;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One request to pass a {@link RedisRateLimiter}: the future its caller holds, from the call to
 * Redis until it passes, fails or is given up.
 */
final class RateRequest extends WithdrawingFuture<Void> {
  /*
   * States, in `state`, changed by CAS (or getAndSet in withdraw):
   *   SENT      the call to Redis is in flight;
   *   RESERVED  Redis gave an instant (reservedUs, reservedF is the tat it left); `admission`
   *             is the timer set for it;
   *   PASSED    the instant came (or was now): settle runs;
   *   FAILED    Redis said no (the wait was beyond the timeout), or failed: nothing reserved;
   *   WITHDRAWN given up: a completion from outside won (withdraw), or the local timeout fired
   *             while the call was in flight.
   *
   * Invariants:
   *   R1. Exactly one party gives back a reservation that did not pass: withdraw, if it took the
   *       state from RESERVED or PASSED (a settle that lost to a completion from outside); the
   *       answer, if it found the state WITHDRAWN before it could record the reservation.
   *   R2. The request counts as waiting (handle.waiting) from submission until its state first
   *       leaves SENT or RESERVED; every such move is a CAS from one of them, so it is counted
   *       out once.
   *   R3. The future completes with success only through PASSED.
   *   R4. A request is counted in the statistics once: admitted when its settle wins; timed out
   *       when Redis said no or the local timeout fired; cancelled (or timed out, by orTimeout)
   *       when a completion from outside won, however far it had come. A call that failed is
   *       counted in none.
   */
  private static final int SENT = 0;
  private static final int RESERVED = 1;
  private static final int PASSED = 2;
  private static final int FAILED = 3;
  private static final int WITHDRAWN = 4;

  private final RateHandle handle;
  final int weight;
  private final @Nullable Duration timeout;
  private final long startedNanos = System.nanoTime();
  private final Handoff handoff;
  private final AtomicInteger state = new AtomicInteger(SENT);

  /** The reservation, written before the CAS to RESERVED or PASSED that publishes it. */
  private long reservedUs;

  private long reservedF;

  /** The timer of the instant, once RESERVED; read after the state leaves RESERVED. */
  private volatile @Nullable Future<?> admission;

  RateRequest(RateHandle handle, int weight, @Nullable Duration timeout) {
    this.handle = handle;
    this.weight = weight;
    this.timeout = timeout;
    this.handoff = new Handoff(this, handle.executor, handle.spin);
    if (timeout != null) {
      expectTimer();
    }
  }

  /** Starts the local timeout, which fails the request if Redis has not answered by then. */
  void startTimer() {
    Duration t = timeout;
    if (t != null) {
      setTimer(RedisTimer.TIMER.schedule(this::noAnswerInTime, t.toNanos()));
    }
  }

  /** Redis answered: reserved (code A) or not (W); on Lettuce's thread. */
  void answered(RateReply reply) {
    if (reply.code() != 'A') {
      if (state.compareAndSet(SENT, FAILED)) {
        handle.left(this);
        handle.stats.timedOut();
        fail(
            new TimeoutException(
                "the rate limiter "
                    + handle.name
                    + " would let a weight of "
                    + weight
                    + " pass in "
                    + Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(reply.waitMicros()))
                    + ", beyond its timeout of "
                    + timeout));
      }
      return;
    }
    reservedUs = reply.tatMicros();
    reservedF = reply.tatFraction();
    if (reply.waitMicros() == 0) {
      if (state.compareAndSet(SENT, PASSED)) {
        pass();
      } else {
        handle.giveBack(weight, reservedUs, reservedF); // R1: withdrawn in flight
      }
      return;
    }
    if (!state.compareAndSet(SENT, RESERVED)) {
      handle.giveBack(weight, reservedUs, reservedF); // R1
      return;
    }
    stopTimer(); // Redis said it passes within the timeout
    admission =
        RedisTimer.TIMER.schedule(
            this::instantCame, TimeUnit.MICROSECONDS.toNanos(reply.waitMicros()));
    if (state.get() != RESERVED) {
      cancelAdmission(); // withdrawn as the timer was set: it may have missed it
    }
  }

  /** The call failed (Redis unreachable, an error): nothing was reserved. */
  void failed(Throwable failure) {
    if (state.compareAndSet(SENT, FAILED)) {
      handle.left(this);
      fail(failure);
    }
  }

  private void instantCame() {
    if (state.compareAndSet(RESERVED, PASSED)) {
      pass();
    }
  }

  @SuppressWarnings("NullAway") // Void is completed with null, which NullAway cannot tell T allows
  private void pass() {
    stopTimer();
    handle.left(this);
    long waited = System.nanoTime() - startedNanos;
    // If a completion from outside wins first, its withdraw gives the instant back (R1) and
    // counts the request as given up, not admitted.
    handoff.deliver(
        () -> {
          if (settle(null)) {
            handle.stats.admitted(waited);
          }
        });
  }

  private void noAnswerInTime() {
    if (state.compareAndSet(SENT, WITHDRAWN)) {
      handle.left(this);
      handle.stats.timedOut();
      fail(
          new TimeoutException(
              "Redis did not answer within the timeout of "
                  + timeout
                  + " (rate limiter "
                  + handle.name
                  + ")"));
    }
  }

  private void fail(Throwable failure) {
    stopTimer();
    handoff.deliver(() -> settleExceptionally(failure));
  }

  @Override
  protected void withdraw(boolean timedOut) {
    int was = state.getAndSet(WITHDRAWN);
    if (was == SENT || was == RESERVED) {
      handle.left(this);
    }
    if (was == SENT || was == RESERVED || was == PASSED) {
      if (timedOut) {
        handle.stats.timedOut();
      } else {
        handle.stats.cancelled();
      }
    }
    stopTimer();
    if (was == RESERVED || was == PASSED) {
      cancelAdmission();
      handle.giveBack(weight, reservedUs, reservedF); // R1
    }
  }

  private void cancelAdmission() {
    Future<?> timer = admission;
    if (timer != null) {
      timer.cancel(false);
    }
  }

  /** Whether the request waits still: in flight, or for its instant. */
  boolean waiting() {
    int s = state.get();
    return s == SENT || s == RESERVED;
  }

  /** Fails a waiting request because its handle closed. */
  void closed() {
    if (!isDone()) {
      completeExceptionally(new IllegalStateException("the rate limiter handle was closed"));
    }
  }

  @Override
  public Void get() throws InterruptedException, ExecutionException {
    handoff.await();
    return super.get();
  }

  @Override
  public Void get(long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    return super.get(handoff.await(timeout, unit), TimeUnit.NANOSECONDS);
  }

  @Override
  public Void join() {
    handoff.awaitUninterruptibly();
    return super.join();
  }
}
