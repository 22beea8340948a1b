package dev.jeton;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link Mutex}: a {@link FifoSemaphore} of one permit whose grants are guards.
 *
 * <p>Everything that makes the mutex FIFO, cancellable and safe with futures is the engine's: a
 * lock is one permit, {@link Guard#unlock()} gives it back once, and a request that gives up
 * leaves the semaphore's queue, which hands a lock granted at that moment to the next in line.
 * No state of its own, so no invariant beyond the semaphore's.
 */
final class FifoMutex implements Mutex {
  private static final Grants GUARDS =
      new Grants() {
        @Override
        public Object grant(FifoSemaphore from, int permits) {
          return new LocalGuard(from, permits, "mutex");
        }

        @Override
        public String kind() {
          return "mutex";
        }

        @Override
        public String request(int permits) {
          return "the lock";
        }
      };

  private final FifoSemaphore semaphore;

  FifoMutex(@Nullable String name, @Nullable Executor completionExecutor) {
    this.semaphore =
        new FifoSemaphore(
            name, 1, completionExecutor, null, WaitQueue.Timers.shared(), null, GUARDS);
  }

  @Override
  public Guard lock() throws InterruptedException {
    return (Guard) semaphore.acquireGrant(1);
  }

  @Override
  public Guard lock(Duration timeout) throws InterruptedException, TimeoutException {
    return (Guard) semaphore.acquireGrant(1, timeout);
  }

  @Override
  public CompletableFuture<Guard> lockAsync() {
    return semaphore.acquireGrantAsync(1, null);
  }

  @Override
  public CompletableFuture<Guard> lockAsync(Duration timeout) {
    return semaphore.acquireGrantAsync(1, timeout);
  }

  @Override
  public Optional<Guard> tryLock() {
    return Optional.ofNullable((Guard) semaphore.tryGrant(1));
  }

  @Override
  public boolean isLocked() {
    return semaphore.available() < 1;
  }

  @Override
  public int queueLength() {
    return semaphore.queueLength();
  }

  @Override
  public String toString() {
    String name = semaphore.name();
    return "Mutex["
        + (name != null ? "name=" + name + ", " : "")
        + (isLocked() ? "locked" : "unlocked")
        + ", queued="
        + queueLength()
        + "]";
  }
}
