package dev.jeton;

import dev.jeton.internal.LeakRecord;
import dev.jeton.internal.LeakTracker;
import org.jspecify.annotations.Nullable;

/**
 * A held lock of a {@link FifoMutex}: the mutex and the state its grant made, which is all
 * unlocking needs (decision 42).
 */
final class LocalMutexGuard implements Guard {
  private final FifoMutex mutex;
  final long word;

  /** The record of a guard watched for leaks, set before it is handed out; null if not watched. */
  private @Nullable LeakRecord leak;

  private LocalMutexGuard(FifoMutex mutex, long word) {
    this.mutex = mutex;
    this.word = word;
  }

  /** The guard of {@code mutex}'s grant {@code word}, watched for leaks if its tracker picks it. */
  static LocalMutexGuard of(FifoMutex mutex, long word) {
    LocalMutexGuard guard = new LocalMutexGuard(mutex, word);
    LeakTracker tracker = mutex.leaks;
    if (tracker != null && tracker.watches()) {
      guard.watchBy(tracker);
    }
    return guard;
  }

  /** The rare part of {@link #of}, out of line (see FifoSemaphore.watch). */
  private void watchBy(LeakTracker tracker) {
    FifoMutex mutex = this.mutex;
    long word = this.word;
    leak =
        tracker.record(this, "lock", 0, tracker.releasesLeaked() ? () -> mutex.unlock(word) : null);
  }

  @Override
  public void unlock() {
    mutex.unlock(word);
    LeakRecord watched = leak;
    if (watched != null) {
      LeakRecord.forget(watched, this); // idempotent, as unlocking is
    }
  }

  @Override
  public String toString() {
    return "Guard[" + mutex.describe() + (mutex.holds(word) ? "]" : ", unlocked]");
  }
}
