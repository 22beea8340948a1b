package dev.jeton.bench;

import dev.jeton.Guard;
import dev.jeton.Mutex;
import dev.jeton.ReadWriteLock;
import dev.jeton.bench.QueuedWaiterMemory.BlockingAcquire;
import dev.jeton.bench.QueuedWaiterMemory.Footprint;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.StampedLock;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import kotlin.coroutines.intrinsics.IntrinsicsKt;
import kotlinx.coroutines.sync.MutexKt;
import org.jspecify.annotations.Nullable;
import org.openjdk.jol.info.GraphLayout;

/**
 * Bytes of heap a lock retains per queued waiter: {@link QueuedWaiterMemory}'s method applied to
 * mutexes and read-write locks. Not a JMH benchmark: run it from the benchmarks jar,
 *
 * <pre>
 * java -Djdk.attach.allowAttachSelf=true -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.LockWaiterMemory
 * </pre>
 *
 * <p>In every case the lock is held (a read-write lock: write-locked) and then waiters queue behind
 * it: {@value QueuedWaiterMemory#ASYNC_WAITERS} asynchronous requests, measured with JOL's {@code
 * GraphLayout} over the lock and the returned futures, or {@value
 * QueuedWaiterMemory#BLOCKED_THREADS} parked platform threads, measured by {@link Footprint}'s walk
 * from the lock with {@code Thread} objects left out. See {@link QueuedWaiterMemory} for why.
 *
 * <ul>
 *   <li>Mutex, asynchronous: Jeton's {@code lockAsync()}; kotlinx's suspend {@code lock}, its
 *       continuation a {@link KotlinxLimiter.ResumingFuture} (the size of a plain future).
 *   <li>Mutex, blocking: Jeton's {@code lock()}; {@code ReentrantLock} fair and non-fair. A {@code
 *       synchronized} block queues its threads outside the heap, and kotlinx has no blocking lock.
 *   <li>Read-write lock, readers and writers separately, asynchronous: Jeton's {@code readAsync()}
 *       and {@code writeAsync()}.
 *   <li>Read-write lock, readers and writers separately, blocking: Jeton; {@code
 *       ReentrantReadWriteLock} fair and non-fair; {@code StampedLock}.
 * </ul>
 */
public final class LockWaiterMemory {
  private static final int ASYNC_WAITERS = QueuedWaiterMemory.ASYNC_WAITERS;
  private static final int BLOCKED_THREADS = QueuedWaiterMemory.BLOCKED_THREADS;
  private static final Object SUSPENDED = IntrinsicsKt.getCOROUTINE_SUSPENDED();

  private LockWaiterMemory() {}

  public static void main(String[] args) throws Exception {
    long plainFuture = QueuedWaiterMemory.start(LockWaiterMemory.class);

    List<String[]> rows = new ArrayList<>();
    List<String> breakdowns = new ArrayList<>();
    for (AsyncCase c : asyncCases()) {
      rows.add(async(c, plainFuture, breakdowns));
    }
    for (BlockingCase c : blockingCases()) {
      rows.add(blocking(c, breakdowns));
    }
    printWaiters("lock", plainFuture, rows, breakdowns);
  }

  /**
   * Prints the rows of {@link #async} and {@link #blocking} for waiters on a {@code kind} (lock,
   * barrier, channel), what they mean, and the growth per waiter by class.
   */
  static void printWaiters(
      String kind, long plainFuture, List<String[]> rows, List<String> breakdowns) {
    String[] header = {
      kind, "waiter", "count", "baseline B", "queued B", "B/waiter", "B/waiter beyond a future"
    };
    QueuedWaiterMemory.print(header, rows);
    System.out.println();
    System.out.println(
        "async: retained ("
            + kind
            + " + returned futures) growth per waiter, JOL GraphLayout;"
            + " 'beyond a future' subtracts "
            + plainFuture
            + " B (a plain CompletableFuture) per waiter.");
    System.out.println(
        "blocking: retained growth of the "
            + kind
            + " per blocked thread, Thread objects excluded.");
    System.out.println();
    System.out.println("Growth per waiter by class (objects per waiter x bytes each):");
    breakdowns.forEach(System.out::println);
  }

  // ------------------------------------------------------------------ the cases

  /**
   * Asynchronous waiters: {@code request} queues one behind the held lock and returns its future;
   * {@code letGo} releases the held lock (at a barrier: makes the last arrival); {@code release}
   * gives back what a future completed with.
   */
  record AsyncCase(
      String label,
      Object lock,
      Supplier<CompletableFuture<?>> request,
      Runnable letGo,
      Release release) {}

  /** Gives back what a granted request completed with. */
  interface Release {
    void release(@Nullable Object grant);
  }

  /**
   * Blocking waiters: each thread runs {@code waiter} (acquire, then release at once; at a barrier:
   * await) behind the held lock; {@code queueLength} is the lock's own count of queued threads, or
   * null if it has none (then the threads' being parked is all that is checked); {@code letGo} is
   * as in {@link AsyncCase}.
   */
  record BlockingCase(
      String label,
      Object lock,
      BlockingAcquire waiter,
      @Nullable IntSupplier queueLength,
      Runnable letGo) {}

  private static List<AsyncCase> asyncCases() {
    List<AsyncCase> cases = new ArrayList<>();

    Mutex mutex = Mutex.create();
    Guard mutexHeld = mutex.tryLock().orElseThrow();
    cases.add(
        new AsyncCase(
            "jeton mutex",
            mutex,
            mutex::lockAsync,
            mutexHeld::unlock,
            grant -> ((Guard) requireGrant(grant)).unlock()));

    kotlinx.coroutines.sync.Mutex kotlinx = MutexKt.Mutex(true);
    cases.add(
        new AsyncCase(
            "kotlinx mutex",
            kotlinx,
            () -> {
              KotlinxLimiter.ResumingFuture future = new KotlinxLimiter.ResumingFuture();
              if (kotlinx.lock(null, future) != SUSPENDED) {
                throw new IllegalStateException("kotlinx Mutex.lock did not suspend while locked");
              }
              return future;
            },
            () -> kotlinx.unlock(null),
            grant -> kotlinx.unlock(null)));

    ReadWriteLock readers = ReadWriteLock.create();
    Guard readersHeld = readers.tryWrite().orElseThrow();
    cases.add(
        new AsyncCase(
            "jeton rw reader",
            readers,
            readers::readAsync,
            readersHeld::unlock,
            grant -> ((Guard) requireGrant(grant)).unlock()));

    ReadWriteLock writers = ReadWriteLock.create();
    Guard writersHeld = writers.tryWrite().orElseThrow();
    cases.add(
        new AsyncCase(
            "jeton rw writer",
            writers,
            writers::writeAsync,
            writersHeld::unlock,
            grant -> ((Guard) requireGrant(grant)).unlock()));
    return cases;
  }

  private static List<BlockingCase> blockingCases() throws InterruptedException {
    List<BlockingCase> cases = new ArrayList<>();

    Mutex mutex = Mutex.create();
    cases.add(
        new BlockingCase(
            "jeton mutex",
            mutex,
            () -> mutex.lock().unlock(),
            mutex::queueLength,
            mutex.lock()::unlock));
    for (boolean fair : new boolean[] {true, false}) {
      ReentrantLock lock = new ReentrantLock(fair);
      lock.lock(); // by this thread, which unlocks it in letGo
      cases.add(
          new BlockingCase(
              fair ? "juc-fair mutex" : "juc-unfair mutex",
              lock,
              () -> {
                lock.lockInterruptibly();
                lock.unlock();
              },
              lock::getQueueLength,
              lock::unlock));
    }

    for (boolean reader : new boolean[] {true, false}) {
      String kind = reader ? " rw reader" : " rw writer";

      ReadWriteLock jeton = ReadWriteLock.create();
      cases.add(
          new BlockingCase(
              "jeton" + kind,
              jeton,
              reader ? () -> jeton.read().unlock() : () -> jeton.write().unlock(),
              jeton::queueLength,
              jeton.write()::unlock));

      for (boolean fair : new boolean[] {true, false}) {
        ReentrantReadWriteLock juc = new ReentrantReadWriteLock(fair);
        juc.writeLock().lock(); // by this thread, which unlocks it in letGo
        cases.add(
            new BlockingCase(
                (fair ? "juc-fair" : "juc-unfair") + kind,
                juc,
                reader
                    ? () -> {
                      juc.readLock().lockInterruptibly();
                      juc.readLock().unlock();
                    }
                    : () -> {
                      juc.writeLock().lockInterruptibly();
                      juc.writeLock().unlock();
                    },
                juc::getQueueLength,
                juc.writeLock()::unlock));
      }

      StampedLock stamped = new StampedLock();
      long held = stamped.writeLock();
      cases.add(
          new BlockingCase(
              "stamped" + kind,
              stamped,
              reader
                  ? () -> stamped.unlockRead(stamped.readLockInterruptibly())
                  : () -> stamped.unlockWrite(stamped.writeLockInterruptibly()),
              null, // StampedLock does not count its waiters
              () -> stamped.unlockWrite(held)));
    }
    return cases;
  }

  static Object requireGrant(@Nullable Object grant) {
    if (grant == null) {
      throw new IllegalStateException("a request completed without a grant");
    }
    return grant;
  }

  // ------------------------------------------------------------------ measuring

  static String[] async(AsyncCase c, long plainFuture, List<String> breakdowns) {
    GraphLayout before = GraphLayout.parseInstance(c.lock());
    long baseline = before.totalSize();
    Object[] roots = new Object[ASYNC_WAITERS + 1];
    roots[0] = c.lock();
    for (int i = 1; i <= ASYNC_WAITERS; i++) {
      CompletableFuture<?> future = c.request().get();
      if (future.isDone()) {
        throw new IllegalStateException(c.label() + ": a request was granted at once");
      }
      roots[i] = future;
    }
    GraphLayout after = GraphLayout.parseInstance(roots);
    long queued = after.totalSize();
    long walked = new Footprint(roots).total;
    if (walked != queued) {
      System.out.printf(
          Locale.ROOT,
          "note: %s: the Thread-excluding walk found %d B where GraphLayout found %d B%n",
          c.label(),
          walked,
          queued);
    }
    double perWaiter = (double) (queued - baseline) / ASYNC_WAITERS;
    breakdowns.add(
        QueuedWaiterMemory.breakdown(
            c.label() + " async", new Footprint(after), new Footprint(before), ASYNC_WAITERS));

    // Let every waiter through, so the run also shows they were really queued.
    c.letGo().run();
    for (int i = 1; i <= ASYNC_WAITERS; i++) {
      c.release().release(((CompletableFuture<?>) roots[i]).join());
    }
    return new String[] {
      c.label(),
      "async",
      Integer.toString(ASYNC_WAITERS),
      Long.toString(baseline),
      Long.toString(queued),
      QueuedWaiterMemory.format(perWaiter),
      QueuedWaiterMemory.format(perWaiter - plainFuture)
    };
  }

  static String[] blocking(BlockingCase c, List<String> breakdowns) throws InterruptedException {
    Footprint before = new Footprint(c.lock());
    long baseline = before.total;
    Thread[] threads = new Thread[BLOCKED_THREADS];
    for (int i = 0; i < threads.length; i++) {
      threads[i] =
          new Thread(
              null,
              () -> {
                try {
                  c.waiter().run();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "waiter-" + i,
              256 * 1024);
      threads[i].start();
    }
    IntSupplier queueLength = c.queueLength();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while ((queueLength != null && queueLength.getAsInt() < BLOCKED_THREADS)
        || !QueuedWaiterMemory.allParked(threads)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(c.label() + ": not every thread queued after 60 s");
      }
      Thread.sleep(10);
    }
    Footprint after = new Footprint(c.lock());
    long queued = after.total;
    double perWaiter = (double) (queued - baseline) / BLOCKED_THREADS;
    breakdowns.add(
        QueuedWaiterMemory.breakdown(c.label() + " blocking", after, before, BLOCKED_THREADS));

    c.letGo().run();
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(60));
      if (t.isAlive()) {
        throw new IllegalStateException(c.label() + ": " + t.getName() + " was never let through");
      }
    }
    return new String[] {
      c.label(),
      "blocking",
      Integer.toString(BLOCKED_THREADS),
      Long.toString(baseline),
      Long.toString(queued),
      QueuedWaiterMemory.format(perWaiter),
      "-"
    };
  }
}
