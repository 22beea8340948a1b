package dev.jeton;

import dev.jeton.internal.LeakRecord;
import dev.jeton.internal.LeakTracker;
import org.jspecify.annotations.Nullable;

/**
 * A held lock of a {@link FifoMutex}: the mutex and the state its grant made, which is all
 * unlocking needs (decision 42). A guard watched for leaks is a {@link Watched}, so that the others
 * carry no field for a record and their unlock no check for one (decision 107).
 */
class LocalMutexGuard implements Guard {
  private final FifoMutex mutex;
  final long word;

  private LocalMutexGuard(FifoMutex mutex, long word) {
    this.mutex = mutex;
    this.word = word;
  }

  /** The guard of {@code mutex}'s grant {@code word}, watched for leaks if its tracker picks it. */
  static LocalMutexGuard of(FifoMutex mutex, long word) {
    LeakTracker tracker = mutex.leaks;
    if (tracker != null && tracker.watches()) {
      return Watched.of(mutex, word, tracker);
    }
    return new LocalMutexGuard(mutex, word);
  }

  @Override
  public void unlock() {
    mutex.unlock(word);
  }

  /**
   * The engine gives this guard's lock back by its number, the guard never reaching its waiter
   * (FifoMutex.giveBackLocked): a watched guard forgets its record, for it is no leak. Returns the
   * number.
   */
  long givenBack() {
    return word;
  }

  @Override
  public String toString() {
    return "Guard[" + mutex.describe() + (mutex.holds(word) ? "]" : ", unlocked]");
  }

  /** A guard watched for leaks: its record is forgotten when it unlocks. */
  private static final class Watched extends LocalMutexGuard {
    private @Nullable LeakRecord leak; // set once, before the guard is handed out

    private Watched(FifoMutex mutex, long word) {
      super(mutex, word);
    }

    /** Out of line, as the rare part of {@link LocalMutexGuard#of}. */
    static Watched of(FifoMutex mutex, long word, LeakTracker tracker) {
      Watched guard = new Watched(mutex, word);
      guard.leak =
          tracker.record(
              guard, "lock", 0, tracker.releasesLeaked() ? () -> mutex.unlock(word) : null);
      return guard;
    }

    @Override
    public void unlock() {
      super.unlock();
      var unused = givenBack(); // forgets the record
    }

    @Override
    long givenBack() {
      LeakRecord watched = leak;
      if (watched != null) {
        LeakRecord.forget(watched, this); // idempotent, as unlocking is
      }
      return word;
    }
  }
}
