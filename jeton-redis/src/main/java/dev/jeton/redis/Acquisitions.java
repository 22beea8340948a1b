package dev.jeton.redis;

import dev.jeton.SemaphoreClosedException;
import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * How {@link RedisSemaphore}'s acquires become requests: the checks before anything is sent (the
 * handle closed, the weight against the limit), and, for the blocking ones, the wait and what it
 * throws. A blocking acquire asks Redis for the limit when the one last seen is too low; an
 * asynchronous one never waits for Redis (decision 33), so it is checked against the last seen.
 */
final class Acquisitions {
  private final Calls calls;
  private final Requests requests;

  Acquisitions(Calls calls, Requests requests) {
    this.calls = calls;
    this.requests = requests;
  }

  /**
   * Waits for a lease, as long as {@code timeout} allows (null: for ever). An interrupt cancels the
   * request and gives back a grant that raced with it; a failure is thrown again from this thread.
   */
  Lease acquire(int permits, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    checkOpen();
    checkWeight(permits);
    RedisRequest<Lease> request = requests.submit(permits, true, timeout);
    try {
      return request.get();
    } catch (InterruptedException e) {
      if (!request.cancel(false)) {
        try {
          request.join().release(); // granted as we were interrupted: give it back
        } catch (CompletionException | CancellationException failed) {
          // it failed instead: nothing to give back
        }
      }
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof TimeoutException) {
        // Thrown again from this thread, with the reason it timed out (if any) as its cause.
        TimeoutException timedOut = new TimeoutException(String.valueOf(cause.getMessage()));
        Throwable why = cause.getCause();
        if (why != null) {
          timedOut.initCause(why);
        }
        throw timedOut;
      }
      throw rethrow(cause);
    }
  }

  /** The lease if Redis grants it at once, else empty. */
  Optional<Lease> tryAcquire(int permits) {
    checkOpen();
    checkWeight(permits);
    return requests.tryAcquire(permits);
  }

  /** An asynchronous request: never waits for Redis; a closed handle fails its future. */
  CompletableFuture<Lease> acquireAsync(int permits, @Nullable Duration timeout) {
    Arguments.checkWeight(permits, calls.knownLimit());
    if (requests.isClosed()) {
      return CompletableFuture.failedFuture(requests.closedException());
    }
    return requests.submit(permits, false, timeout);
  }

  private void checkOpen() {
    if (requests.isClosed()) {
      throw requests.closedException();
    }
  }

  /** Checks a weight against the limit, asking Redis when the limit known here is too low. */
  private void checkWeight(int permits) {
    if (permits >= 1 && permits > calls.knownLimit()) {
      calls.await(calls.call("counts"));
    }
    Arguments.checkWeight(permits, calls.knownLimit());
  }

  private static RuntimeException rethrow(@Nullable Throwable cause) {
    if (cause instanceof SemaphoreClosedException) {
      SemaphoreClosedException closed =
          new SemaphoreClosedException(String.valueOf(cause.getMessage()));
      closed.initCause(cause);
      return closed;
    }
    if (cause instanceof IllegalArgumentException) {
      return new IllegalArgumentException(String.valueOf(cause.getMessage()), cause);
    }
    if (cause instanceof RuntimeException) {
      return (RuntimeException) cause;
    }
    if (cause instanceof Error) {
      throw (Error) cause;
    }
    return new CompletionException(cause);
  }
}
