package dev.jeton.internal.engine;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A queue of work in front of a source of permits that hands one permit at a time to the best entry
 * queued at the moment it is granted: the one "pump" under a priority scheduler's tasks and an
 * admission's waiters. A subclass is the queue's owner: it puts entries in {@link #queue} under
 * {@link #lock}, starts the pump ({@link #startPumpLocked()}, then {@link #pump()}), and gives the
 * pump what it needs through the hooks below ({@link #acquire()}, {@link #grant}, {@link #refuse},
 * ...), as a lock gives {@code AbstractQueuedSynchronizer} its {@code tryAcquire}.
 *
 * @param <E> a queued entry; the order (usually {@link RankOrder}) must be total
 * @param <P> a permit
 */
public abstract class PermitPump<E, P> {
  /*
   * The pump
   *
   * It asks the source for one permit (acquire()). When granted, it takes the best entry queued
   * at that moment out of the queue (so an entry that arrived late and ranks higher still wins)
   * and grants it the permit, outside the lock; if none is left, the permit goes back. If the
   * acquire fails, the entries the owner says the failure refuses (refusedLocked: the best one,
   * or all of them) leave and are refused. It loops while acquires complete at once; otherwise it
   * leaves a callback on its one pending acquire and returns, and the callback resumes the loop.
   * It ends when it finds the queue empty.
   *
   * Invariants (each changes only under `lock`):
   *   P1. `pumping` is true iff a pump is looping or waiting on `pending`: at most one. Every
   *       queued entry is seen by it: it ends only after seeing the queue empty under the lock,
   *       and an owner that queues an entry and finds `pumping` false starts one
   *       (startPumpLocked). `pumping` stays true while the pump grants or refuses, outside the
   *       lock, so that what the grant's callbacks queue waits for this pump, in constant stack,
   *       rather than start one of its own; the pump then looks again (goOn).
   *   P2. The pump holds at most one acquire. When the queue empties (a withdrawal, a drain), the
   *       pending acquire is cancelled, so that a shared source is not held up; the pump
   *       publishes `pending` and then re-checks the queue, so one of the two sees the other. A
   *       cancelled acquire that finds entries queued meanwhile acquires again.
   *   P3. A permit granted to the pump goes to exactly one entry it took out of the queue, or
   *       back to the source (release).
   *
   * Nothing calls the source or a hook that runs outside the lock while holding `lock`; hooks
   * named ...Locked run under it and must not call out.
   */

  /** Guards {@link #queue}, the pump's state, and whatever state of the owner goes with them. */
  protected final ReentrantLock lock = new ReentrantLock();

  /** The order of {@link #queue}, best first. */
  protected final Comparator<? super E> order;

  /** The entries waiting, best first. */
  @GuardedBy("lock")
  protected final TreeSet<E> queue;

  // Written under the lock; read without it as a hint (isPumping, tryAcquireIfIdle): not annotated.
  private volatile boolean pumping;

  @GuardedBy("lock")
  private @Nullable CompletableFuture<P> pending;

  /** A pump over an empty queue in {@code order}. */
  protected PermitPump(Comparator<? super E> order) {
    this.order = order;
    this.queue = new TreeSet<>(order);
  }

  // ------------------------------------------------------------------ hooks

  /** Asks the source for one permit. May throw: taken as an acquire that failed with it. */
  protected abstract CompletableFuture<P> acquire();

  /** Takes one permit if one is free now, without waiting; for {@link #tryAcquireIfIdle}. */
  protected Optional<P> tryAcquire() {
    return Optional.empty();
  }

  /** Gives back a permit that no entry took. */
  protected abstract void release(P permit);

  /**
   * Under the lock: {@code entry} has left the queue, taken by the pump for a permit ({@code
   * granted}) or withdrawn ({@link #withdraw}); for the owner's counts.
   */
  @GuardedBy("lock")
  protected void leftLocked(E entry, boolean granted) {}

  /** Hands {@code permit} to {@code entry}, which the pump took out of the queue. */
  protected abstract void grant(E entry, P permit);

  /**
   * Under the lock, the queue not empty: takes out of the queue the entries that the failure of an
   * acquire refuses (the best one, whose permit it was, or every one).
   */
  @GuardedBy("lock")
  protected abstract List<E> refusedLocked(Throwable failure);

  /** Refuses the entries {@link #refusedLocked} took out, {@code left} being still queued. */
  protected abstract void refuse(List<E> refused, Throwable failure, int left);

  /** The cause of an acquire's failure, as the owner reads it; by default a completion's cause. */
  protected Throwable unwrap(Throwable failure) {
    Throwable cause = failure.getCause();
    return failure instanceof CompletionException && cause != null ? cause : failure;
  }

  /** The pump has started to wait on an acquire, with entries queued. Nothing by default. */
  protected void waiting() {}

  // ------------------------------------------------------------------ for the owner

  /**
   * Under the lock, after queuing an entry: whether the caller must start the pump ({@link
   * #pump()}, after unlocking), because none runs; it counts as running from now.
   */
  @GuardedBy("lock")
  protected final boolean startPumpLocked() {
    boolean start = !pumping;
    pumping = true;
    return start;
  }

  /** Whether a pump runs; exact under the lock, a hint without it. */
  protected final boolean isPumping() {
    return pumping;
  }

  /** Under the lock: the pump's pending acquire, if it waits on one. */
  @GuardedBy("lock")
  protected final @Nullable CompletableFuture<P> pendingLocked() {
    return pending;
  }

  /**
   * The idle fast path: a permit if nobody is queued and the source has one free now, for work that
   * then skips the queue. Under the lock, with the queue seen empty, {@code takeLocked} says
   * whether the work takes it (and counts it started, atomically with the empty queue); if not, or
   * if someone queued meanwhile, the permit goes back (to the pump, which has a use for it).
   */
  protected final @Nullable P tryAcquireIfIdle(BooleanSupplier takeLocked) {
    if (pumping) {
      return null; // someone is queued, or about to be: the permit is theirs
    }
    Optional<P> permit;
    try {
      permit = tryAcquire();
    } catch (RuntimeException refused) { // closed, limit 0: the pump will meet it and report it
      return null;
    }
    if (permit.isEmpty()) {
      return null;
    }
    lock.lock();
    try {
      if (queue.isEmpty() && takeLocked.getAsBoolean()) {
        return permit.get();
      }
    } finally {
      lock.unlock();
    }
    release(permit.get());
    return null;
  }

  /**
   * Takes {@code entry} out of the queue if it is still there: for its withdrawal (given up, timed
   * out). Cancels the pump's acquire if the queue is now empty (P2). Returns the number of entries
   * left, or -1 if it was not queued.
   */
  protected final int withdraw(E entry) {
    CompletableFuture<P> acquiring;
    int left;
    lock.lock();
    try {
      if (!queue.remove(entry)) {
        return -1;
      }
      leftLocked(entry, false);
      left = queue.size();
      acquiring = left == 0 ? pending : null;
    } finally {
      lock.unlock();
    }
    cancel(acquiring);
    return left;
  }

  /** Under the lock: empties the queue (the caller then cancels {@link #pendingLocked()}). */
  @GuardedBy("lock")
  protected final List<E> drainLocked() {
    List<E> drained = new ArrayList<>(queue);
    queue.clear();
    return drained;
  }

  /** Cancels an acquire no longer needed; nothing if null. */
  protected static void cancel(@Nullable CompletableFuture<?> acquiring) {
    if (acquiring != null) {
      acquiring.cancel(false);
    }
  }

  // ------------------------------------------------------------------ the pump

  /** Runs the pump, which {@link #startPumpLocked()} said to start; see the comment above. */
  protected final void pump() {
    while (true) {
      CompletableFuture<P> acquiring = acquireOrPark(this::acquire, this::publish, this::resume);
      if (acquiring == null || !outcome(acquiring)) {
        return;
      }
    }
  }

  /**
   * One step of a pump's loop, in constant stack; shared with a pump that has no queue (Parallel's
   * run). Calls {@code acquire}: a throw is taken as an acquire failed with it. An acquire done at
   * once is returned, for the loop to handle. Otherwise it is parked and null is returned, so the
   * loop ends: {@code publish} makes it the pump's one pending acquire and answers whether it is
   * still needed, read after publishing so that whoever makes it unneeded meanwhile sees it and
   * cancels it (P2); if not needed it is cancelled; when it completes, {@code resume} gets it with
   * its outcome as its callback sees it: never read with {@code join()}, which a request's future
   * may override to wait (a Redis request's waits for its grant's hand-off, and blocked for ever
   * the thread that cancelled it).
   */
  public static <A> @Nullable CompletableFuture<A> acquireOrPark(
      Supplier<CompletableFuture<A>> acquire,
      Predicate<CompletableFuture<A>> publish,
      Resume<A> resume) {
    CompletableFuture<A> acquiring;
    try {
      acquiring = acquire.get();
    } catch (RuntimeException refused) { // closed, its limit lowered to 0, out of reach
      acquiring = CompletableFuture.failedFuture(refused);
    }
    if (acquiring.isDone()) {
      return acquiring;
    }
    if (!publish.test(acquiring)) {
      acquiring.cancel(false);
    }
    CompletableFuture<A> parked = acquiring;
    var unused =
        acquiring.whenComplete((permit, failure) -> resume.resume(parked, permit, failure));
    return null;
  }

  /** What a parked acquire's callback does with its outcome. */
  @FunctionalInterface
  public interface Resume<A> {
    void resume(CompletableFuture<A> acquiring, @Nullable A permit, @Nullable Throwable failure);
  }

  /** Publishes the pump's acquire as pending: still needed if someone waits (P2). */
  private boolean publish(CompletableFuture<P> acquiring) {
    boolean queueEmpty;
    lock.lock();
    try {
      pending = acquiring;
      queueEmpty = queue.isEmpty();
    } finally {
      lock.unlock();
    }
    if (!queueEmpty) {
      waiting();
    }
    return !queueEmpty;
  }

  private void resume(
      CompletableFuture<P> acquiring, @Nullable P permit, @Nullable Throwable failure) {
    if (outcome(acquiring, permit, failure)) {
      pump();
    }
  }

  /** Reads the outcome of an acquire done at once and acts on it; whether the pump goes on. */
  private boolean outcome(CompletableFuture<P> acquiring) {
    P permit = null;
    Throwable failure = null;
    try {
      permit = acquiring.join();
    } catch (CompletionException | CancellationException e) {
      failure = e;
    }
    return outcome(acquiring, permit, failure);
  }

  /**
   * What the pump does with the outcome of its acquire. Returns whether it goes on: true if it
   * granted the permit, or refused entries for the acquire's failure, and more wait; or if its
   * acquire was cancelled as the queue emptied and an entry has come since.
   */
  private boolean outcome(
      CompletableFuture<P> acquiring, @Nullable P permit, @Nullable Throwable failure) {
    if (permit != null) {
      return handOut(acquiring, permit);
    }
    Throwable cause =
        failure != null
            ? unwrap(failure)
            : new NullPointerException("the semaphore granted a null permit");
    List<E> refused;
    int left;
    lock.lock();
    try {
      if (pending == acquiring) {
        pending = null;
      }
      if (queue.isEmpty()) {
        pumping = false;
        return false;
      }
      if (cause instanceof CancellationException) {
        return true; // withdrawn by us as the queue emptied; an entry has come since
      }
      refused = refusedLocked(cause);
      left = queue.size();
    } finally {
      lock.unlock();
    }
    refuse(refused, cause, left);
    return goOn();
  }

  private boolean handOut(CompletableFuture<P> acquiring, P permit) {
    E best;
    lock.lock();
    try {
      if (pending == acquiring) {
        pending = null;
      }
      best = queue.pollFirst();
      if (best == null) {
        pumping = false;
      } else {
        leftLocked(best, true);
      }
    } finally {
      lock.unlock();
    }
    if (best == null) {
      release(permit);
      return false;
    }
    grant(best, permit); // ours alone: see P3
    return goOn();
  }

  /** After the pump granted or refused outside the lock: whether entries came meanwhile (P1). */
  private boolean goOn() {
    lock.lock();
    try {
      pumping = !queue.isEmpty();
      return pumping;
    } finally {
      lock.unlock();
    }
  }
}
