package dev.jeton;

import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.engine.Timer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link ReadWriteLock}: a {@link FifoSemaphore} of {@link #WRITE} permits, where a
 * reader takes one and a writer takes them all.
 *
 * <p>With {@link Fairness#strictFifo()} this is the task-fair policy, the engine's FIFO rule with
 * nothing added (tokio's {@code RwLock} is built the same way): a writer at the head of the queue
 * needs every permit, so it waits for the readers ahead of it and holds back those behind it; when
 * it unlocks, the run of readers at the head is granted in the same step, up to the next writer.
 * With bounded barging, the default, the semaphore's barging rule (PermitQueue, decision 104) gives
 * what a non-fair read-write lock does: permits let go for a blocked waiter that is still waking up
 * go to whoever asks first, but a reader never gets in past a queued writer that waits for the
 * readers to leave, and past the bound the queue is served by handoff again. A writer that gives up
 * leaves the queue, and the engine re-examines the head at once, so the readers behind it enter at
 * once. A downgrade gives back all permits but one in one release: the reader's permit it keeps
 * stops any writer, and the readers at the head enter. Decision 39 says why task-fair and not
 * phase-fair.
 *
 * <p>Invariant, the semaphore's permit accounting (PermitQueue's I5) read through the weights:
 * holders are either one writer (free = 0, taken as WRITE) or r readers (free = WRITE - r); never
 * both.
 */
final class FifoReadWriteLock implements ReadWriteLock {
  /** The permits of the write lock: all of them. A reader holds one. */
  static final int WRITE = FifoSemaphore.MAX_LIMIT;

  private static final FifoSemaphore.Names NAMES =
      new FifoSemaphore.Names(
          "read-write lock", permits -> permits == WRITE ? "the write lock" : "a read lock");

  private final FifoSemaphore semaphore;
  private final FifoSemaphore.Granting<Guard> reads;
  private final FifoSemaphore.Granting<WriteGuard> writes;

  FifoReadWriteLock(
      @Nullable String name, Fairness fairness, @Nullable Executor completionExecutor) {
    this(name, fairness, completionExecutor, null);
  }

  /**
   * As built by {@link ReadWriteLock.Builder}: watching its guards for leaks through {@code leaks}.
   */
  FifoReadWriteLock(
      @Nullable String name,
      Fairness fairness,
      @Nullable Executor completionExecutor,
      @Nullable LeakTracker leaks) {
    FifoSemaphore permits =
        new FifoSemaphore(
            name, WRITE, fairness, completionExecutor, null, Timer.shared(), null, NAMES, leaks);
    this.semaphore = permits;
    this.reads =
        new FifoSemaphore.Granting<>() {
          @Override
          Guard grant(int read) {
            return permits.watched(new LocalGuard(permits, read), READ_LOCK, read);
          }
        };
    this.writes =
        new FifoSemaphore.Granting<>() {
          @Override
          WriteGuard grant(int write) {
            return permits.watched(new LocalWriteGuard(permits), "write lock", write);
          }
        };
  }

  /** What leak reports call a read lock. */
  private static final String READ_LOCK = "read lock";

  /** How leak reports name a lock of this {@code name}. */
  static String describe(@Nullable String name) {
    return FifoSemaphore.describe(NAMES, name);
  }

  @Override
  public Guard read() throws InterruptedException {
    return semaphore.acquireGrant(1, reads);
  }

  @Override
  public Guard read(Duration timeout) throws InterruptedException, TimeoutException {
    return semaphore.acquireGrant(1, timeout, reads);
  }

  @Override
  public CompletableFuture<Guard> readAsync() {
    return semaphore.acquireGrantAsync(1, null, reads);
  }

  @Override
  public CompletableFuture<Guard> readAsync(Duration timeout) {
    return semaphore.acquireGrantAsync(1, timeout, reads);
  }

  @Override
  public Optional<Guard> tryRead() {
    return Optional.ofNullable(semaphore.tryGrant(1, reads));
  }

  @Override
  public WriteGuard write() throws InterruptedException {
    return semaphore.acquireGrant(WRITE, writes);
  }

  @Override
  public WriteGuard write(Duration timeout) throws InterruptedException, TimeoutException {
    return semaphore.acquireGrant(WRITE, timeout, writes);
  }

  @Override
  public CompletableFuture<WriteGuard> writeAsync() {
    return semaphore.acquireGrantAsync(WRITE, null, writes);
  }

  @Override
  public CompletableFuture<WriteGuard> writeAsync(Duration timeout) {
    return semaphore.acquireGrantAsync(WRITE, timeout, writes);
  }

  @Override
  public Optional<WriteGuard> tryWrite() {
    return Optional.ofNullable(semaphore.tryGrant(WRITE, writes));
  }

  @Override
  public int readers() {
    int free = semaphore.available();
    return free == 0 ? 0 : WRITE - free;
  }

  @Override
  public boolean isWriteLocked() {
    return semaphore.available() == 0;
  }

  /** Whether the lock lets newcomers barge: the {@link Fairness} it was built with. */
  boolean barges() {
    return semaphore.barges();
  }

  @Override
  public int queueLength() {
    return semaphore.queueLength();
  }

  @Override
  public String toString() {
    String name = semaphore.name();
    int free = semaphore.available();
    return "ReadWriteLock["
        + (name != null ? "name=" + name + ", " : "")
        + (free == 0 ? "write-locked" : "readers=" + (WRITE - free))
        + ", queued="
        + queueLength()
        + "]";
  }

  /** A held write lock: all the permits, which it can give back all but one of. */
  private static final class LocalWriteGuard extends LocalGuard implements WriteGuard {
    private final FifoSemaphore semaphore;

    LocalWriteGuard(FifoSemaphore semaphore) {
      super(semaphore, WRITE);
      this.semaphore = semaphore;
    }

    @Override
    public Guard downgrade() {
      if (!end()) {
        throw new IllegalStateException("this write lock was unlocked or downgraded already");
      }
      Guard read = semaphore.watched(new LocalGuard(semaphore, 1), READ_LOCK, 1);
      semaphore.release(WRITE - 1);
      return read;
    }
  }
}
