package dev.jeton.host;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The asynchronous requests of one {@link HostRateLimiter} handle. Their file I/O (taking a slot,
 * passing, giving up) runs on one thread of the handle, there only while there is work, in the
 * order it was asked for; between taking a slot and passing, a request waits on the engine's shared
 * timer, holding no thread. So {@code acquireAsync} and cancelling its future return at once, and
 * however many requests wait, they use one thread and one timer entry each.
 *
 * <p>Futures complete on the common pool. A future completed from outside (cancelled, or timed out
 * by {@code orTimeout}) withdraws its request: a request that had passed gives its slot back if no
 * one took one after it.
 */
final class AsyncRates {
  private final HostRateLimiter limiter;
  private final ThreadPoolExecutor driver;

  AsyncRates(HostRateLimiter limiter) {
    this.limiter = limiter;
    this.driver =
        new ThreadPoolExecutor(
            1,
            1,
            1,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            task -> {
              Thread thread = new Thread(task, "jeton-rate-" + limiter.name());
              thread.setDaemon(true);
              return thread;
            });
    driver.allowCoreThreadTimeOut(true); // no thread while nothing waits
  }

  CompletableFuture<Void> start(int weight, long deadline, @Nullable Duration timeout) {
    CompletableFuture<Void> future = new CompletableFuture<>();
    driver.execute(() -> reserve(new RateRequest(limiter, weight), future, deadline, timeout));
    return future;
  }

  private void reserve(
      RateRequest request,
      CompletableFuture<Void> future,
      long deadline,
      @Nullable Duration timeout) {
    if (future.isDone()) {
      return; // cancelled before it took a slot
    }
    future.whenComplete(
        (passed, failure) -> {
          if (failure != null) {
            driver.execute(request::withdraw); // no-op if it had withdrawn itself
          }
        });
    RateRequest.Outcome outcome;
    try {
      outcome = request.reserve(false, deadline, deadline, future::isDone);
    } catch (TimeoutException busy) {
      fail(future, limiter.timedOut(timeout));
      return;
    } catch (IOException | RuntimeException | InterruptedException e) {
      fail(future, e);
      return;
    }
    switch (outcome) {
      case PASSED -> passed(request, future);
      case TOO_LATE -> fail(future, limiter.timedOut(timeout));
      default -> {
        long delay = request.slot() - System.nanoTime();
        var wakeUp =
            HostRequest.TIMER.schedule(
                () -> driver.execute(() -> wake(request, future, deadline, timeout)), delay);
        future.whenComplete((passed, failure) -> wakeUp.cancel(false));
      }
    }
  }

  private void wake(
      RateRequest request,
      CompletableFuture<Void> future,
      long deadline,
      @Nullable Duration timeout) {
    if (request.pass()) {
      passed(request, future);
    } else if (!future.isDone()) {
      reserve(new RateRequest(limiter, request.weight), future, deadline, timeout); // woke late
    }
  }

  /** Completes on the common pool, so that no caller's callback holds up this handle's thread. */
  private void passed(RateRequest request, CompletableFuture<Void> future) {
    ForkJoinPool.commonPool()
        .execute(
            () -> {
              if (!future.complete(null)) {
                // completed from outside as it passed: the pass reached no one
                driver.execute(request::withdraw);
              }
            });
  }

  private static void fail(CompletableFuture<Void> future, Throwable failure) {
    ForkJoinPool.commonPool().execute(() -> future.completeExceptionally(failure));
  }
}
