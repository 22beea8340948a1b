package dev.jeton.cli;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The user's bound on waiting ({@code --timeout}, or {@code --no-wait}'s) kept against a Redis that
 * does not answer: stopped, on a hung host, behind a network that drops packets. Such a Redis still
 * accepts connections (the kernel does that), and then answers nothing, so every call would wait
 * for the client's own timeout, 10 s a call, whatever the bound.
 *
 * <p>An alarm runs from the command's start. If the bound passes before the permits are granted (or
 * the semaphore found idle), it ends the process, with exit 1 and a line that says Redis did not
 * answer: not 75, which says the semaphore was busy, and which {@code -E 0} would turn into a
 * silent success while Redis is down. If the outcome was known in time (busy, or a signal) and only
 * closing the connections overruns, it ends the process with that outcome.
 *
 * <p>Ending the process is safe at that point: the threads that wait for Redis cannot be
 * interrupted (a socket read, the client's futures), no permit is held, the command's session dies
 * with this process (see {@link CommandSession}), and what Redis may still do with a request it
 * reads after it wakes up ends on its own (a queued request after the waiter expiry, a lease after
 * its lease time).
 *
 * <p>When the bound passes, the alarm first asks Redis on a connection of its own whether it is
 * there at all ({@link RedisPing}, within {@link #LEAST}): on a machine so busy that this process
 * has not yet heard Redis (a loaded machine can take seconds to start the client), Redis answers
 * that, and the command goes on, asked again each {@link #LEAST}, for {@link #MOST_WAITED} at most.
 * A silent Redis is so told after the bound and one {@link #LEAST} more.
 *
 * <p>Bounds: {@code --no-wait} gives Redis {@link #LEAST} to answer, connecting included; {@code
 * --timeout D} gives it {@code D}, or {@link #LEAST} if that is longer, and the semaphore's own
 * timeout ({@link #remaining()}) ends a request Redis has queued at {@code D}, which is then
 * reported as busy; the alarm comes {@link #GRACE} later, so as not to race it.
 */
final class RedisBound implements AutoCloseable {
  /**
   * The least time Redis is given to answer: a fresh process takes about a tenth of a second to
   * connect and ask, and a busy machine many times that.
   */
  static final Duration LEAST = Duration.ofSeconds(2);

  /**
   * How long past its first ring the alarm waits while Redis answers its pings: by then the
   * clients' own timeouts (10 s a call) have ended any call Redis did not answer.
   */
  static final Duration MOST_WAITED = Duration.ofSeconds(30);

  /** How long after a --timeout the semaphore's own timeout is given to say busy. */
  static final Duration GRACE = Duration.ofMillis(500);

  private final long startNanos = System.nanoTime();
  private final @Nullable Duration timeout; // null: --no-wait
  private final Duration answerWithin;
  private final PrintWriter err;
  private final String where;
  private final Thread alarm;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private boolean disarmed;

  /** The exit code once known, else -1. */
  @GuardedBy("lock")
  private int decided = -1;

  private RedisBound(@Nullable Duration timeout, PrintWriter err, String where) {
    this.timeout = timeout;
    this.answerWithin = timeout != null && timeout.compareTo(LEAST) > 0 ? timeout : LEAST;
    this.err = err;
    this.where = where;
    long ringAt =
        startNanos
            + (timeout != null
                ? Math.max(timeout.plus(GRACE).toNanos(), LEAST.toNanos())
                : LEAST.toNanos());
    this.alarm = new Thread(() -> ringAt(ringAt), "jeton-redis-bound");
    alarm.setDaemon(true);
  }

  /**
   * Starts the alarm for {@code timeout} (null: {@code --no-wait}), from now.
   *
   * @param where the Redis, as it may be shown (without a password)
   */
  static RedisBound start(@Nullable Duration timeout, PrintWriter err, String where) {
    RedisBound bound = new RedisBound(timeout, err, where);
    bound.alarm.start();
    return bound;
  }

  /** What is left of the --timeout, for the semaphore's own timeout; zero once it has passed. */
  Duration remaining() {
    Duration t = java.util.Objects.requireNonNull(timeout, "--no-wait has no timeout");
    long left = t.toNanos() - (System.nanoTime() - startNanos);
    return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
  }

  /** The outcome is known: if closing overruns the bound, the process ends with it. */
  void decided(int exitCode) {
    synchronized (lock) {
      decided = exitCode;
    }
  }

  /** No more alarm: the permits were granted, or the command is done. */
  @Override
  public void close() {
    synchronized (lock) {
      disarmed = true;
    }
    LockSupport.unpark(alarm);
  }

  private void ringAt(long firstRing) {
    long ringAt = firstRing;
    while (true) {
      for (long left; (left = ringAt - System.nanoTime()) > 0; ) {
        LockSupport.parkNanos(this, left);
        synchronized (lock) {
          if (disarmed) {
            return;
          }
        }
      }
      synchronized (lock) {
        if (disarmed || decided >= 0) {
          break;
        }
      }
      // Redis answering elsewhere means this process was too slow to hear it, not that Redis
      // is silent: the command goes on, and is asked again a bound later.
      if (System.nanoTime() - firstRing > MOST_WAITED.toNanos()
          || !RedisPing.answers(where, LEAST)) {
        break;
      }
      ringAt = System.nanoTime() + LEAST.toNanos();
    }
    synchronized (lock) {
      if (disarmed) {
        return;
      }
      int code = decided;
      if (code < 0) {
        code = Jeton.EXIT_ERROR;
        err.println(
            "jeton: Redis: no answer from " + where + " within " + Arguments.format(answerWithin));
      }
      err.flush();
      Runtime.getRuntime().halt(code); // see the class comment: nothing is left to clean up
    }
  }
}
