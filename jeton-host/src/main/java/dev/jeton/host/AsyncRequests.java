package dev.jeton.host;

import dev.jeton.Permit;
import dev.jeton.internal.engine.WithdrawingFuture;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The asynchronous requests of one {@link HostSemaphore} handle, driven by one thread.
 *
 * <p>{@link #start} only queues the request in memory and wakes the driver, and cancelling a future
 * only marks it done and wakes the driver: no caller waits on file I/O or on a lock another process
 * holds. The driver, a task on a shared pool that runs while this handle has requests and ends when
 * it has none, does all the file work:
 *
 * <ol>
 *   <li>drops requests whose future is done (cancelled, completed from outside), whose deadline
 *       passed, or, after {@code close()}, all but {@code awaitIdle}'s; withdrawing their places;
 *   <li>takes places for new requests in the order they came, trying {@code meta.lock} once per
 *       round and, while another process holds it, again after a pause (50 µs doubling to 5 ms);
 *   <li>polls the <em>front</em> request only. Every other request of this handle has a younger
 *       place than the front, so it cannot be granted before the front is granted or gone: it waits
 *       in memory, at no cost. At the head of the whole queue the front polls every 0.25 to 2 ms,
 *       as a blocking request does; behind another place, one wait in the kernel for that place's
 *       lock runs on a second pool thread and wakes the driver when it ends.
 * </ol>
 *
 * <p>So a handle's waiting requests use at most two threads however many they are. Futures complete
 * on the common pool (decision 21): a callback that blocks, or that calls back into this semaphore,
 * never holds up the driver.
 *
 * <p>Field access: {@link #incoming}, {@link #running}, {@link #signalled}, {@link #driver} and
 * {@link #submitted} are shared and thread-safe; {@link #processed} is written by the driver only
 * (volatile), and waited for under {@link #roundDone}. Everything else is touched only by the
 * driver; consecutive driver runs are ordered by {@link #running} (set false at the end of one,
 * compare-and-set true to start the next). {@link KernelWait}'s flags are written by the waiting
 * thread, read by the driver.
 */
final class AsyncRequests {
  /** Runs drivers and kernel waits; threads end after a minute idle. */
  private static final ExecutorService THREADS =
      Executors.newCachedThreadPool(
          task -> {
            Thread thread = new Thread(task, "jeton-host-async");
            thread.setDaemon(true);
            return thread;
          });

  private static final Executor COMPLETIONS = ForkJoinPool.commonPool();

  private static final long MIN_PLACE_PAUSE_NANOS = 50_000;
  private static final long MAX_PLACE_PAUSE_NANOS = 5_000_000;

  private final HostSemaphore semaphore;
  private final ConcurrentLinkedQueue<Entry<?>> incoming = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean running = new AtomicBoolean();

  /** Requests made and futures done from outside so far; the driver has handled processed. */
  private final AtomicLong submitted = new AtomicLong();

  private volatile long processed;
  private final Object roundDone = new Object(); // notified when processed moves
  private volatile boolean signalled;
  private volatile @Nullable Thread driver;

  // The driver's own.
  private final List<Entry<?>> entries = new ArrayList<>(); // in arrival order = place order
  private @Nullable KernelWait kernelWait; // at most one at a time
  private @Nullable Entry<?> polled; // the front as last polled
  private long nextPlaceTry = System.nanoTime(); // when to try meta.lock again
  private long placePause = MIN_PLACE_PAUSE_NANOS;
  private long nextPoll = nextPlaceTry; // when the front, at the head, looks again
  private long headPause = HostSemaphore.MIN_HEAD_PAUSE_NANOS;

  AsyncRequests(HostSemaphore semaphore) {
    this.semaphore = semaphore;
  }

  /** What a granted request's future completes with (awaitIdle gives the permit straight back). */
  interface Outcome<T extends @Nullable Object> {
    T of(Permit permit);
  }

  /** Queues a request; returns at once. {@code deadline} is a nanoTime, or Long.MAX_VALUE. */
  <T extends @Nullable Object> CompletableFuture<T> start(
      int permits, long deadline, @Nullable Duration timeout, Outcome<T> outcome) {
    if (semaphore.closed && permits != 0) {
      return CompletableFuture.failedFuture(semaphore.closedException());
    }
    RequestFuture<T> future = new RequestFuture<>(this);
    incoming.add(new Entry<>(permits, deadline, timeout, future, outcome));
    submitted.incrementAndGet();
    signal();
    return future;
  }

  /**
   * Waits until the driver has handled every request made on this handle before, and every future
   * done before: places taken (unless another process held meta.lock), the front polled, cancelled
   * requests withdrawn. The blocking methods call it, so that a handle's calls take effect in the
   * order they were made. A round waits for no other process, so neither does this.
   */
  void sync() {
    long target = submitted.get();
    if (processed - target >= 0) {
      return;
    }
    boolean interrupted = false;
    synchronized (roundDone) {
      while (processed - target < 0) {
        try {
          roundDone.wait();
        } catch (InterruptedException e) {
          interrupted = true; // a round is short: finish waiting, keep the interrupt
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Wakes the driver, starting one if none runs. Never waits. */
  void signal() {
    signalled = true;
    if (!running.get() && running.compareAndSet(false, true)) {
      THREADS.execute(this::drive);
    } else {
      LockSupport.unpark(driver); // none yet: it looks at signalled before it parks
    }
  }

  private void drive() {
    driver = Thread.currentThread();
    try {
      for (; ; ) {
        signalled = false;
        long target = submitted.get();
        long park = step();
        roundDone(target);
        if (park < 0) { // nothing left to do
          driver = null;
          running.set(false);
          boolean more = !incoming.isEmpty() || processed != submitted.get(); // came meanwhile
          if (!more || !running.compareAndSet(false, true)) {
            return;
          }
          driver = Thread.currentThread();
        } else if (!signalled) {
          LockSupport.parkNanos(this, park);
        }
        Thread.interrupted(); // no one interrupts the driver on purpose; file I/O must not see it
      }
    } catch (RuntimeException | Error bug) {
      for (Entry<?> entry : entries) { // fail them rather than leave them waiting for ever
        try {
          withdraw(entry);
        } finally {
          settle(entry, bug);
        }
      }
      entries.clear();
      roundDone(submitted.get());
      driver = null;
      running.set(false);
      throw bug;
    }
  }

  private void roundDone(long target) {
    if (processed != target) {
      processed = target;
      synchronized (roundDone) {
        roundDone.notifyAll();
      }
    }
  }

  /** One round; returns how long to sleep before the next, or -1 if no request is left. */
  private long step() {
    for (Entry<?> entry; (entry = incoming.poll()) != null; ) {
      entries.add(entry);
    }
    long now = System.nanoTime();
    entries.removeIf(entry -> dropIfOver(entry, now));
    takePlaces(now);
    pollFront(now);
    if (entries.isEmpty()) {
      return -1;
    }
    long park = Long.MAX_VALUE;
    for (Entry<?> entry : entries) {
      entry.seen = true;
      if (entry.deadline != Long.MAX_VALUE) {
        park = Math.min(park, entry.deadline - now);
      }
      if (entry.request == null) {
        park = Math.min(park, nextPlaceTry - now);
      }
    }
    Entry<?> front = entries.get(0);
    if (front.request != null && kernelWait == null) {
      park = Math.min(park, nextPoll - now); // at the head: look again soon
    }
    return Math.max(park, 0);
  }

  /**
   * Drops {@code entry} if given up, expired or closed, settling its future. A deadline counts only
   * after one round, so that a zero timeout still tries once.
   */
  private boolean dropIfOver(Entry<?> entry, long now) {
    Throwable failure;
    if (entry.future.isDone()) {
      failure = null; // cancelled or completed from outside: nothing to tell
    } else if (semaphore.closed && entry.permits != 0) { // awaitIdle keeps working after close
      failure = semaphore.closedException();
    } else if (entry.seen && entry.deadline != Long.MAX_VALUE && now - entry.deadline >= 0) {
      failure = semaphore.timedOut(entry.timeout);
    } else {
      return false;
    }
    withdraw(entry);
    if (failure != null) {
      settle(entry, failure);
    }
    return true;
  }

  private void withdraw(Entry<?> entry) {
    HostRequest request = entry.request;
    if (request != null) {
      KernelWait wait = kernelWait;
      if (wait != null && wait.entry == entry) {
        wait.wait.cancel(); // its thread wakes the driver once out of the kernel
      }
      request.withdraw();
    }
  }

  /** Takes places in order, stopping at the first that would have to wait for meta.lock. */
  private void takePlaces(long now) {
    for (int i = 0; i < entries.size(); i++) {
      Entry<?> entry = entries.get(i);
      if (entry.request != null) {
        continue;
      }
      if (now - nextPlaceTry < 0) {
        return;
      }
      try {
        entry.request = semaphore.newRequest(entry.permits, false, now, () -> false);
        placePause = MIN_PLACE_PAUSE_NANOS;
      } catch (TimeoutException | InterruptedException othersTakingPlaces) {
        nextPlaceTry = System.nanoTime() + placePause; // meta.lock is busy: try again soon
        placePause = Math.min(placePause * 2, MAX_PLACE_PAUSE_NANOS);
        return;
      } catch (RuntimeException e) {
        entries.remove(i--);
        settle(entry, e);
      }
    }
  }

  /** Polls the front request, and the next if it is granted, until one has to wait. */
  private void pollFront(long now) {
    while (!entries.isEmpty()) {
      Entry<?> front = entries.get(0);
      HostRequest request = front.request;
      if (request == null) {
        return; // waits for its place
      }
      KernelWait wait = kernelWait;
      if (wait != null) {
        if (!wait.done) {
          return; // the place ahead is still held (or a cancelled wait is ending)
        }
        kernelWait = null;
        if (wait.failed) { // look again after a growing pause, never in a tight loop
          nextPoll = now + headPause;
          headPause = Math.min(headPause * 2, HostSemaphore.MAX_HEAD_PAUSE_NANOS);
        }
      }
      if (front != polled) { // a new front looks at once
        polled = front;
        headPause = HostSemaphore.MIN_HEAD_PAUSE_NANOS;
      } else if (now - nextPoll < 0) {
        return;
      }
      HostPermit permit;
      try {
        permit = request.poll();
      } catch (IOException | RuntimeException e) {
        entries.remove(0);
        request.withdraw();
        settle(
            front,
            e instanceof IOException
                ? new UncheckedIOException(e.getMessage(), (IOException) e)
                : e);
        continue;
      }
      if (permit != null) {
        entries.remove(0);
        grant(front, permit);
        continue;
      }
      String older = request.predecessor;
      if (older != null) {
        awaitInKernel(front, older);
      } else {
        // At the head: the permits it needs are held by processes that may die or release at
        // any moment, with no one to tell it, so it looks every few milliseconds.
        nextPoll = now + headPause;
        headPause = Math.min(headPause * 2, HostSemaphore.MAX_HEAD_PAUSE_NANOS);
      }
      return;
    }
  }

  /** Waits, on a pool thread, until the place {@code older} is unlocked; then wakes the driver. */
  private void awaitInKernel(Entry<?> front, String older) {
    KernelWait wait = new KernelWait(front, new LockFiles.Wait(semaphore.queue.path(older)));
    kernelWait = wait;
    THREADS.execute(
        () -> {
          try {
            LockFiles.awaitUnlocked(semaphore.directory, wait.wait);
          } catch (IOException | InterruptedException | RuntimeException e) {
            Thread.interrupted();
            wait.failed = true; // the driver's next poll reports a lasting failure
          } finally {
            wait.done = true;
            signal();
          }
        });
  }

  private static <T extends @Nullable Object> void grant(Entry<T> entry, HostPermit permit) {
    T value;
    try {
      value = entry.outcome.of(permit);
    } catch (RuntimeException e) {
      settle(entry, e);
      return;
    }
    COMPLETIONS.execute(
        () -> {
          if (!entry.future.settle(value)) {
            permit.release(); // the caller gave up as it was granted
          }
        });
  }

  private static void settle(Entry<?> entry, Throwable failure) {
    COMPLETIONS.execute(() -> entry.future.settleExceptionally(failure));
  }

  /** A queued request. {@code request} (its place) is the driver's own. */
  private static final class Entry<T extends @Nullable Object> {
    final int permits; // 0: awaitIdle
    final long deadline;
    final @Nullable Duration timeout;
    final RequestFuture<T> future;
    final Outcome<T> outcome;
    @Nullable HostRequest request;
    boolean seen; // the driver has had one round with it

    Entry(
        int permits,
        long deadline,
        @Nullable Duration timeout,
        RequestFuture<T> future,
        Outcome<T> outcome) {
      this.permits = permits;
      this.deadline = deadline;
      this.timeout = timeout;
      this.future = future;
      this.outcome = outcome;
    }
  }

  /** The front request's wait in the kernel for the place ahead of it. */
  private static final class KernelWait {
    final Entry<?> entry;
    final LockFiles.Wait wait;
    volatile boolean failed;
    volatile boolean done;

    KernelWait(Entry<?> entry, LockFiles.Wait wait) {
      this.entry = entry;
      this.wait = wait;
    }
  }

  /**
   * A request's future: completed from outside (cancel, complete, a failure) it wakes the driver,
   * which finds it done and withdraws its place. The driver settles it; a grant that loses to a
   * completion from outside gives its permit back ({@link WithdrawingFuture}'s rule).
   */
  private static final class RequestFuture<T extends @Nullable Object>
      extends WithdrawingFuture<T> {
    private final AsyncRequests owner;

    RequestFuture(AsyncRequests owner) {
      this.owner = owner;
    }

    @Override
    protected void withdraw(boolean timedOut) {
      // The place is file work, which is the driver's: count this as one more thing to handle,
      // so that sync() waits for the driver to have dropped it.
      owner.submitted.incrementAndGet();
      owner.signal();
    }
  }
}
