package dev.jeton.host;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.Permit;
import dev.jeton.internal.engine.Timer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One request, from place to grant. Its lock makes a poll and a withdrawal (cancel, close)
 * exclusive, so that a withdrawal never races with a grant.
 */
final class HostRequest {
  /*
   * Algorithm
   *
   * A request: take a place (HostQueue); then poll: when no older place is alive, take free
   * slots below the limit one by one until it holds as many as it needs, and is granted once the
   * slots held in all (its own, other holders', and any at or above a lowered limit) are within
   * the limit; then drop its place. A request behind another sleeps in the kernel on the place
   * just ahead (awaitPredecessor); only the head polls. Release (HostPermit) unlocks the slots.
   *
   * Invariants:
   *   I1. Granted permits never exceed the limit: each slot is one exclusive lock, only the head
   *       of the queue takes slots, and it is granted only when every held slot, its own
   *       included, fits within the limit.
   *   I2. Only the oldest live place takes slots, so grants follow place order.
   *   I3. A record in a file is believed only while the file is locked: a dead process's locks
   *       are gone, so its stale records are never shown as holders or waiters.
   *   I4. Every wait (for meta.lock, for permits) is bounded by the caller's deadline and gives
   *       way to interrupts, cancellation and close(); no wait spins.
   *   I5. The asynchronous methods, and cancelling their futures, do no file I/O and take no lock
   *       another thread may hold for long: AsyncRequests' driver does the work.
   *
   * Fields: gathered, busy and finished are guarded by lock, which makes a poll and a withdrawal
   * exclusive; predecessor, waiting and withdrawn are volatile, read by withdraw() without it.
   */

  /**
   * Ends waits at their deadlines: the engine's shared timer, whose cancelled tasks leave its queue
   * at once, so a wait decided early leaves nothing behind however far off its deadline was.
   */
  static final Timer TIMER = Timer.shared();

  private final HostSemaphore semaphore;

  final int permits; // 0: the whole limit (awaitIdle), given straight back
  final LockFiles.Held place;
  final boolean trying; // a tryAcquire: gives up rather than wait for permits
  final String placeName;
  final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  final List<LockFiles.Held> gathered = new ArrayList<>();

  /** A tryAcquire found it would have to wait for permits. */
  @GuardedBy("lock")
  boolean busy;

  @GuardedBy("lock")
  boolean finished;

  /** The live place just ahead, as the last poll found it; null at the head. */
  volatile @Nullable String predecessor;

  /** The wait in progress for the predecessor, which withdraw() ends. */
  volatile LockFiles.@Nullable Wait waiting;

  volatile boolean withdrawn;

  HostRequest(HostSemaphore semaphore, int permits, LockFiles.Held place, boolean trying) {
    this.semaphore = semaphore;
    this.permits = permits;
    this.place = place;
    this.trying = trying;
    this.placeName = place.path.getFileName().toString();
  }

  /**
   * One attempt: returns the permit if granted now, null to keep waiting.
   *
   * @throws IllegalArgumentException if the limit fell below the request
   */
  @Nullable HostPermit poll() throws IOException {
    boolean interrupted = Thread.interrupted(); // see LockFiles.uninterrupted
    try {
      return pollNow();
    } catch (IOException e) {
      if (!LockFiles.interruptedDuring(e)) {
        throw e;
      }
      interrupted = true; // the caller sees the interrupt; gathered slots are checked next poll
      return null;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private @Nullable HostPermit pollNow() throws IOException {
    lock.lock();
    try {
      if (finished) { // withdrawn by close() or by the caller
        if (semaphore.closed && permits != 0) {
          throw semaphore.closedException();
        }
        throw new CancellationException("withdrawn");
      }
      int limit = semaphore.readLimit();
      int need = permits == 0 ? limit : permits;
      if (need > limit) {
        throw new IllegalArgumentException(
            "the limit of semaphore '"
                + semaphore.name()
                + "' is now "
                + limit
                + ", below the request for "
                + permits
                + " permits");
      }
      gathered.removeIf(slot -> dropIf(slot, !slot.isValid() || Slots.index(slot.path) >= limit));
      String older = semaphore.queue.predecessor(placeName);
      predecessor = older;
      if (older != null) {
        if (trying && !older.endsWith(HostQueue.TRYING)) {
          busy = true; // a request that waits is ahead: tryAcquire never jumps the queue
        }
        return null; // only the oldest takes slots; another tryAcquire finishes at once
      }
      boolean fits;
      ReentrantLock settling = semaphore.slots.settling();
      settling.lock(); // never a release of this JVM half done (see Slots)
      try {
        fits = gatherAndCheck(limit, need);
      } finally {
        settling.unlock();
      }
      if (!fits) {
        if (trying) {
          busy = true; // not enough free now; withdraw() gives back what was gathered
        }
        return null;
      }
      Holder holder = Holder.ofThisProcess(need).withCommand(semaphore.command);
      String record = holder.serialize();
      for (LockFiles.Held slot : gathered) {
        slot.write(record);
      }
      if (gathered.removeIf(slot -> dropIf(slot, !slot.isValid()))) {
        return null; // a lock was lost while writing; gather again rather than over-grant
      }
      finished = true;
      leaveQueue();
      return HostPermit.of(semaphore, List.copyOf(gathered), holder);
    } finally {
      lock.unlock();
    }
  }

  /**
   * For a tryAcquire: polls until granted, or until it finds it would have to wait (for permits, or
   * behind a request that waits), or until {@code deadline}. It looks again only while an older
   * tryAcquire is finishing, which never waits for permits, so this is short.
   */
  @Nullable HostPermit pollUntilBusy(long deadline) throws IOException {
    long pause = 50_000;
    for (; ; ) {
      HostPermit permit = poll();
      if (permit != null) {
        return permit;
      }
      boolean wouldWait;
      lock.lock();
      try {
        wouldWait = busy;
      } finally {
        lock.unlock();
      }
      if (wouldWait || System.nanoTime() - deadline >= 0) {
        return null;
      }
      LockSupport.parkNanos(pause);
      pause = Math.min(pause * 2, 2_000_000);
    }
  }

  /**
   * Takes free slots below {@code limit} until it has {@code need}, and tells whether the request
   * may be granted: every slot held, by anyone, at or above the limit included, must then fit
   * within the limit (I1; after the limit was lowered, holders of retired slots still count until
   * they release). Lock held.
   */
  @GuardedBy("lock")
  private boolean gatherAndCheck(int limit, int need) throws IOException {
    Set<Integer> mine = new HashSet<>();
    for (LockFiles.Held slot : gathered) {
      mine.add(Slots.index(slot.path));
    }
    int others = 0;
    for (int i = 0; i < limit; i++) {
      if (mine.contains(i)) {
        continue;
      }
      if (gathered.size() < need) {
        LockFiles.Held slot = semaphore.slots.tryTake(i);
        if (slot != null) {
          gathered.add(slot);
          continue;
        }
        others++;
      } else if (semaphore.slots.isHeld(i)) {
        others++;
      }
    }
    return gathered.size() == need && need + others + semaphore.slots.heldAtOrAbove(limit) <= limit;
  }

  /**
   * Waits, in the kernel, until the predecessor's place is unlocked (it was granted, gave up or
   * died), until {@code deadline}, or until the request is withdrawn.
   */
  void awaitPredecessor(String older, long deadline) throws IOException, InterruptedException {
    LockFiles.Wait wait = new LockFiles.Wait(semaphore.queue.path(older));
    waiting = wait;
    Future<?> timeout = null;
    if (deadline != Long.MAX_VALUE) {
      timeout = TIMER.schedule(wait::cancel, deadline - System.nanoTime());
    }
    try {
      if (withdrawn) {
        return; // withdrawn before this wait could be ended by it
      }
      LockFiles.awaitUnlocked(semaphore.directory, wait);
    } finally {
      waiting = null;
      if (timeout != null) {
        timeout.cancel(false);
      }
    }
  }

  /** Gives up: drops the place and any slots gathered. Returns false if already granted. */
  boolean withdraw() {
    withdrawn = true;
    LockFiles.Wait wait = waiting;
    if (wait != null) {
      wait.cancel();
    }
    lock.lock();
    try {
      if (finished) {
        return false;
      }
      finished = true;
      for (LockFiles.Held slot : gathered) {
        LockFiles.closeQuietly(slot);
      }
      gathered.clear();
      leaveQueue();
      return true;
    } finally {
      lock.unlock();
      semaphore.pending.remove(this);
    }
  }

  private void leaveQueue() {
    try {
      Files.deleteIfExists(place.path);
    } catch (IOException ignored) {
      // an undeletable place is unlocked below, so it counts as dead and is swept later
    }
    LockFiles.closeQuietly(place);
    semaphore.pending.remove(this);
  }

  /**
   * Polls until granted, failing at {@code deadline} (a {@link System#nanoTime()} value, or {@link
   * Long#MAX_VALUE}) or when {@code giveUp} says so; withdraws it unless granted.
   */
  Permit awaitGrant(long deadline, @Nullable Duration timeout, BooleanSupplier giveUp)
      throws InterruptedException, TimeoutException {
    long pause = HostSemaphore.MIN_HEAD_PAUSE_NANOS;
    boolean granted = false;
    try {
      for (; ; ) {
        if (semaphore.closed && permits != 0) { // awaitIdle keeps working after close
          throw semaphore.closedException();
        }
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        if (giveUp.getAsBoolean()) {
          throw new CancellationException("given up");
        }
        HostPermit permit = poll();
        if (permit != null) {
          granted = true;
          return permit;
        }
        long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (left <= 0) {
          throw semaphore.timedOut(timeout);
        }
        String older = predecessor;
        if (older != null) {
          awaitPredecessor(older, deadline); // the kernel wakes it: nothing polls
          pause = HostSemaphore.MIN_HEAD_PAUSE_NANOS;
        } else {
          // At the head: the permits it needs are held by processes that may die or release at
          // any moment, with no one to tell it, so it looks every few milliseconds.
          LockSupport.parkNanos(Math.min(pause, left));
          pause = Math.min(pause * 2, HostSemaphore.MAX_HEAD_PAUSE_NANOS);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    } finally {
      if (!granted) {
        withdraw();
      }
    }
  }

  /** The deadline {@link #awaitGrant} takes for a wait of {@code nanos} from now. */
  static long deadlineAfter(long nanos) {
    if (nanos == Long.MAX_VALUE) {
      return Long.MAX_VALUE;
    }
    long deadline = System.nanoTime() + nanos;
    return deadline == Long.MAX_VALUE ? Long.MAX_VALUE - 1 : deadline; // MAX_VALUE: no deadline
  }

  private static boolean dropIf(LockFiles.Held slot, boolean drop) {
    if (drop) {
      LockFiles.closeQuietly(slot);
    }
    return drop;
  }
}
