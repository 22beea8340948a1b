package dev.jeton.host;

import dev.jeton.Permit;
import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.ReleaseOnce;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A permit: the slot locks it holds. It ends once, so release is idempotent.
 *
 * <p>A permit dropped unreleased gives its places back when the collector finds it, whatever the
 * leak detection: the JDK closes the lock files of a collected {@code FileChannel}, and their locks
 * go with them. A watched one is reported, and its give-back (which keeps the files open until
 * then) releases it as {@link #release()} would, records emptied.
 */
final class HostPermit extends ReleaseOnce implements Permit {
  final HostSemaphore semaphore;
  final List<LockFiles.Held> slots;
  final Holder holder;

  /** Tests only: runs in release() after the first slot is freed, before the next one. */
  static volatile @Nullable Runnable betweenSlotsForTest;

  private HostPermit(HostSemaphore semaphore, List<LockFiles.Held> slots, Holder holder) {
    super(slots.size());
    this.semaphore = semaphore;
    this.slots = slots;
    this.holder = holder;
  }

  /** The permit of {@code slots}, watched for leaks if its semaphore's tracker picks it. */
  static HostPermit of(HostSemaphore semaphore, List<LockFiles.Held> slots, Holder holder) {
    HostPermit permit = new HostPermit(semaphore, slots, holder);
    LeakTracker tracker = semaphore.leaks;
    if (tracker != null && tracker.watches()) {
      // the give-back holds the slots, not the permit, which must become unreachable
      tracker.watch(
          permit,
          "permit",
          slots.size(),
          tracker.releasesLeaked() ? () -> giveBack(semaphore, slots) : null);
    }
    return permit;
  }

  @Override
  public int permits() {
    return held();
  }

  @Override
  public void release() {
    if (end()) {
      giveBack(semaphore, slots);
    }
  }

  private static void giveBack(HostSemaphore semaphore, List<LockFiles.Held> slots) {
    ReentrantLock settling = semaphore.slots.settling();
    settling.lock(); // the slots go together, as far as this JVM's threads can see
    try {
      releaseSlots(slots);
    } finally {
      settling.unlock();
    }
  }

  private static void releaseSlots(List<LockFiles.Held> slots) {
    for (LockFiles.Held slot : slots) {
      try {
        // A record left behind would be believed if it names a session that still runs;
        // emptying it also spares the next taker the look for one.
        LockFiles.uninterrupted(
            () -> {
              slot.clear();
              return Boolean.TRUE;
            });
      } catch (IOException | RuntimeException e) {
        // the lock goes all the same; the record is checked by the next taker
      }
      LockFiles.closeQuietly(slot);
      Runnable hook = betweenSlotsForTest;
      if (hook != null && slot != slots.get(slots.size() - 1)) {
        hook.run();
      }
    }
  }

  /** Writes {@code leader}'s session into the records of its slots (see HostSemaphore). */
  void holdWhileSessionRuns(ProcessHandle leader) throws IOException {
    if (isEnded()) {
      throw new IllegalArgumentException(this + " was released");
    }
    String record = holder.serializeWithSession(leader);
    LockFiles.uninterrupted(
        () -> {
          for (LockFiles.Held slot : slots) {
            slot.write(record);
          }
          return Boolean.TRUE;
        });
  }

  @Override
  public String toString() {
    return "Permit[permits=" + held() + ", semaphore=" + semaphore.name() + "]";
  }
}
