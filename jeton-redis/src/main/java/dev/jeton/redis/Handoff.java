package dev.jeton.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hands the completion of a future given to users from Lettuce's I/O thread to a user thread: to a
 * thread waiting for the future in {@code get} or {@code join} if there is one, else to the
 * completion executor. So no user callback ever runs on an I/O thread, and a caller that waits for
 * an asynchronous request pays one thread hop, not two.
 */
final class Handoff {
  /*
   * Overview
   *
   * deliver (on the I/O thread) puts the completion, a Runnable that completes the public
   * future, into ready, a private future that only our own waiters wait on, so completing it
   * runs no user code. It then reads waiters: if no thread waits in get/join, it gives the
   * completion to the executor.
   *
   * A thread in get/join increments waiters, waits on ready (with the caller's timeout or
   * interruption), decrements waiters, and then, if ready is done, runs the completion itself:
   * the public future completes on that thread, and so do the callbacks registered on it.
   *
   * deliver writes ready, then reads waiters; a waiter writes waiters, then reads ready. Both
   * are volatile (atomics), so at least one side sees the other's write (as in Dekker's
   * algorithm): a waiter that leaves just as deliver saw it, timed out or interrupted, still
   * runs the completion before it returns. claimed (compare-and-set) makes the completion run
   * exactly once when both sides try.
   *
   * A completion from outside (a cancel, complete, orTimeout) completes ready with nothing to run, so
   * that waiters wake; a completion delivered after that is dropped: the public future is done,
   * and the owner's settle would have lost anyway (its withdraw gives back what it carried).
   */

  private final Executor executor;
  private final ReplySpin spin;
  private final CompletableFuture<Runnable> ready = new CompletableFuture<>();
  private final AtomicInteger waiters = new AtomicInteger();
  private final AtomicBoolean claimed = new AtomicBoolean();

  /**
   * A handoff for {@code future}, whose completions from outside wake its waiters; they spin first
   * as {@code spin} says.
   */
  Handoff(CompletableFuture<?> future, Executor executor, ReplySpin spin) {
    this.executor = executor;
    this.spin = spin;
    var unused = future.whenComplete((result, failure) -> ready.complete(Handoff::nothing));
  }

  /** The completion is ready: a waiting thread runs it, or else the executor does. */
  void deliver(Runnable completion) {
    ready.complete(completion);
    if (waiters.get() == 0) {
      try {
        executor.execute(this::runOnce);
      } catch (RuntimeException rejected) {
        runOnce(); // never drop a completion
      }
    }
  }

  /** For {@code get()}: waits, interruptibly, until the completion has run or can run here. */
  void await() throws InterruptedException {
    if (claimed.get()) {
      return;
    }
    waiters.incrementAndGet();
    long began = spin.spin(this::pending, Long.MAX_VALUE);
    try {
      ready.get();
    } catch (ExecutionException impossible) {
      throw new AssertionError(impossible); // ready never fails
    } finally {
      spin.waited(began);
      leave();
    }
  }

  /**
   * For {@code get(timeout, unit)}: as {@link #await()}, for at most that long.
   *
   * @return the nanoseconds left of the timeout, for the get on the future itself
   */
  long await(long timeout, TimeUnit unit) throws InterruptedException {
    long nanos = unit.toNanos(timeout);
    long deadline = System.nanoTime() + nanos;
    if (claimed.get()) {
      return nanos;
    }
    waiters.incrementAndGet();
    long began = spin.spin(this::pending, nanos);
    try {
      ready.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      // the caller's get times out on the future itself
    } catch (ExecutionException impossible) {
      throw new AssertionError(impossible);
    } finally {
      spin.waited(began);
      leave();
    }
    return deadline - System.nanoTime();
  }

  /** For {@code join()}: as {@link #await()}, not interruptibly. */
  void awaitUninterruptibly() {
    if (claimed.get()) {
      return;
    }
    waiters.incrementAndGet();
    long began = spin.spin(this::pending, Long.MAX_VALUE);
    try {
      ready.join();
    } finally {
      spin.waited(began);
      leave();
    }
  }

  private boolean pending() {
    return !ready.isDone();
  }

  private void leave() {
    waiters.decrementAndGet();
    if (ready.isDone()) {
      runOnce(); // delivered as this thread left: deliver may have counted on it
    }
  }

  /** What a completion from outside leaves to run: the future is done already. */
  private static void nothing() {}

  private void runOnce() {
    if (claimed.compareAndSet(false, true)) {
      ready.join().run();
    }
  }

  /**
   * A future completed through a handoff with the outcome of another, which completes on an I/O
   * thread: what {@link Lease#releaseAsync()} returns.
   */
  static final class HandedOff<T> extends CompletableFuture<T> {
    private final Handoff handoff;

    HandedOff(CompletableFuture<T> source, Executor executor, ReplySpin spin) {
      this.handoff = new Handoff(this, executor, spin);
      var unused =
          source.whenComplete(
              (result, failure) ->
                  handoff.deliver(
                      () -> {
                        if (failure != null) {
                          completeExceptionally(failure);
                        } else {
                          complete(result);
                        }
                      }));
    }

    @Override
    public T get() throws InterruptedException, ExecutionException {
      handoff.await();
      return super.get();
    }

    @Override
    public T get(long timeout, TimeUnit unit)
        throws InterruptedException, ExecutionException, TimeoutException {
      return super.get(handoff.await(timeout, unit), TimeUnit.NANOSECONDS);
    }

    @Override
    public T join() {
      handoff.awaitUninterruptibly();
      return super.join();
    }
  }
}
