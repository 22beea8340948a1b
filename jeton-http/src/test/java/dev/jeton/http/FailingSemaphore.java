package dev.jeton.http;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreStats;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A real in-process semaphore that fails the way a remote one does when its server is out of reach:
 * while {@link #failWith} is set, {@code tryAcquire} throws it and {@code acquireAsync} fails with
 * it; {@link #holdNextAcquire()} hands the test the future of the next {@code acquireAsync}, to
 * fail it later (a reply that never comes, then a timeout). With {@link #asStages()}, its futures
 * are stages of the real ones, as a remote client builds them, so their failures arrive wrapped in
 * a {@code CompletionException}. Its try, {@code acquireAsync(n, Duration.ZERO)}, answers as a
 * remote one does: a permit, a {@code TimeoutException} if none is free, or one whose cause is the
 * failure; at once, or when the test runs the answer it was handed ({@link #answerTriesOn}).
 */
public final class FailingSemaphore implements Semaphore {
  /** What a client throws when the server is out of reach. */
  public static final class Unreachable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** With {@code message}. */
    public Unreachable(String message) {
      super(message);
    }
  }

  private final Semaphore real;
  private final ConcurrentLinkedQueue<CompletableFuture<Permit>> held =
      new ConcurrentLinkedQueue<>();
  private volatile @Nullable RuntimeException failure;
  private volatile boolean stages;
  private volatile @Nullable RuntimeException releaseFailure;
  private volatile Runnable duringTryAcquire = () -> {};
  private volatile @Nullable Consumer<Runnable> tryAnswers; // null: at once

  /** Over a real semaphore of {@code limit}. */
  public FailingSemaphore(int limit) {
    this.real = Semaphore.create(limit);
  }

  /** Every call fails with {@code failure} from now on; null: none does. */
  public void failWith(@Nullable RuntimeException failure) {
    this.failure = failure;
  }

  /** The future that the next {@code acquireAsync} returns, for the test to complete. */
  public CompletableFuture<Permit> holdNextAcquire() {
    CompletableFuture<Permit> next = new CompletableFuture<>();
    held.add(next);
    return next;
  }

  /**
   * From now on, releasing a permit granted by {@code tryAcquire} throws {@code failure} and gives
   * nothing back (a remote release that never arrives: the server lets the lease expire).
   */
  public void failReleasesWith(RuntimeException failure) {
    this.releaseFailure = failure;
  }

  /** Runs {@code action} inside each {@code tryAcquire} from now on, before it answers. */
  public void duringTryAcquire(Runnable action) {
    this.duringTryAcquire = action;
  }

  /**
   * Each try from now on is answered when the test runs the answer handed to {@code answers}; a try
   * the test has not answered is one the server has not answered.
   */
  public void answerTriesOn(Consumer<Runnable> answers) {
    this.tryAnswers = answers;
  }

  /** Futures from now on are stages of the real ones. */
  public FailingSemaphore asStages() {
    stages = true;
    return this;
  }

  private void check() {
    RuntimeException f = failure;
    if (f != null) {
      throw f;
    }
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
    check();
    duringTryAcquire.run();
    RuntimeException f = releaseFailure;
    if (f == null) {
      return real.tryAcquire(permits);
    }
    return real.tryAcquire(permits)
        .map(
            granted ->
                new Permit() {
                  @Override
                  public int permits() {
                    return granted.permits();
                  }

                  @Override
                  public void release() {
                    throw f;
                  }
                });
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    CompletableFuture<Permit> next = held.poll();
    if (next != null) {
      return next;
    }
    RuntimeException f = failure;
    if (f != null) {
      return CompletableFuture.failedFuture(f);
    }
    CompletableFuture<Permit> acquiring = real.acquireAsync(permits);
    return stages ? acquiring.thenApply(permit -> permit) : acquiring;
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    if (!timeout.isZero()) {
      check();
      return real.acquireAsync(permits, timeout);
    }
    CompletableFuture<Permit> answer = new CompletableFuture<>();
    Runnable answering =
        () -> {
          try {
            Optional<Permit> permit = tryAcquire(permits);
            if (permit.isPresent()) {
              answer.complete(permit.get());
            } else {
              answer.completeExceptionally(new TimeoutException("no permit free"));
            }
          } catch (RuntimeException failed) { // a remote client: could not say, and why
            TimeoutException couldNotSay = new TimeoutException("no answer");
            couldNotSay.initCause(failed);
            answer.completeExceptionally(couldNotSay);
          }
        };
    Consumer<Runnable> answers = tryAnswers;
    if (answers == null) {
      answering.run();
    } else {
      answers.accept(answering);
    }
    return stages ? answer.thenApply(permit -> permit) : answer;
  }

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    check();
    return real.acquire(permits);
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    check();
    return real.acquire(permits, timeout);
  }

  @Override
  public int limit() {
    return real.limit();
  }

  @Override
  public int available() {
    return real.available();
  }

  @Override
  public int queueLength() {
    return real.queueLength();
  }

  @Override
  public void setLimit(int limit) {
    real.setLimit(limit);
  }

  @Override
  public CompletableFuture<Void> awaitIdle() {
    return real.awaitIdle();
  }

  @Override
  public void close() {
    real.close();
  }

  @Override
  public Optional<SemaphoreStats> stats() {
    return real.stats();
  }
}
