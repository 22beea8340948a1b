package dev.jeton.bench;

import dev.jeton.Fairness;
import dev.jeton.Guard;
import dev.jeton.Mutex;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlin.coroutines.intrinsics.IntrinsicsKt;
import kotlinx.coroutines.sync.MutexKt;

/**
 * One of the mutexes compared, running a critical section under its lock: the adapter that lets
 * {@link MutexBenchmark} be written once. It takes the section rather than handing out lock and
 * unlock, because {@code synchronized} has no lock object to hand out.
 *
 * <p>As with {@link Limiter}, one JMH fork loads one implementation, so calls through this
 * interface are monomorphic and inlined. Never run with {@code -f 0}.
 */
interface Locker {
  /** {@code dev.jeton.Mutex.create()}: bounded barging, the default (1 ms bound). */
  String JETON = "jeton";

  /** A {@code dev.jeton.Mutex} built with {@code Fairness.strictFifo()}. */
  String JETON_FIFO = "jeton-fifo";

  /** {@code new ReentrantLock(true)}. */
  String JUC_FAIR = "juc-fair";

  /** {@code new ReentrantLock(false)}. */
  String JUC_UNFAIR = "juc-unfair";

  /** A {@code synchronized} block on a private object. */
  String SYNCHRONIZED = "synchronized";

  /**
   * {@code kotlinx.coroutines.sync.Mutex(false)}, driven from a blocking thread: see {@link
   * Kotlinx}.
   */
  String KOTLINX = "kotlinx";

  /** Makes the mutex named {@code impl}, one of the constants above. */
  static Locker create(String impl) {
    return switch (impl) {
      case JETON -> new Jeton(Fairness.boundedBarging());
      case JETON_FIFO -> new Jeton(Fairness.strictFifo());
      case JUC_FAIR -> new Juc(true);
      case JUC_UNFAIR -> new Juc(false);
      case SYNCHRONIZED -> new Synchronized();
      case KOTLINX -> new Kotlinx();
      default -> throw new IllegalArgumentException("unknown implementation: " + impl);
    };
  }

  /** Runs {@code section} holding the lock, waiting (blocking the thread) for it if need be. */
  void locked(Section section) throws InterruptedException;

  /**
   * Runs {@code section} holding a lock known to be free, through the regular lock entry point, and
   * fails if it would have had to wait. The default is {@link #locked}.
   */
  default void lockedUncontended(Section section) throws InterruptedException {
    locked(section);
  }

  /** Whether the lock is held now; for sanity checks after a run ({@code synchronized}: never). */
  boolean isLocked();

  /** The critical section: touches state shared by every thread. */
  interface Section {
    void run();
  }

  /** Jeton's {@link Mutex}. */
  final class Jeton implements Locker {
    private final Mutex mutex;

    Jeton(Fairness fairness) {
      this.mutex = Mutex.builder().fairness(fairness).build();
    }

    @Override
    public void locked(Section section) throws InterruptedException {
      Guard guard = mutex.lock();
      try {
        section.run();
      } finally {
        guard.unlock();
      }
    }

    @Override
    public boolean isLocked() {
      return mutex.isLocked();
    }
  }

  /** {@link ReentrantLock}, fair or not. */
  final class Juc implements Locker {
    private final ReentrantLock lock;

    Juc(boolean fair) {
      this.lock = new ReentrantLock(fair);
    }

    @Override
    public void locked(Section section) throws InterruptedException {
      lock.lockInterruptibly(); // as interruptible as Jeton's lock()
      try {
        section.run();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public boolean isLocked() {
      return lock.isLocked();
    }
  }

  /** The monitor of a private object. */
  final class Synchronized implements Locker {
    private final Object monitor = new Object();

    @Override
    public void locked(Section section) {
      synchronized (monitor) {
        section.run();
      }
    }

    @Override
    public boolean isLocked() {
      return Thread.holdsLock(monitor); // only the holder can tell; false after a run
    }
  }

  /**
   * kotlinx.coroutines' {@code Mutex}, whose {@code lock} is a suspend function with no blocking
   * form, driven as {@link KotlinxLimiter} drives its semaphore: the compiled {@code lock(owner,
   * continuation)} is called directly. It returns at once when the lock is free (its own fast path
   * is a {@code tryLock}); otherwise it returns {@code COROUTINE_SUSPENDED} and the unlocking
   * thread later resumes the continuation, directly on its own thread since the continuation's
   * context has no dispatcher. To wait, the calling thread parks until its continuation is resumed:
   * one park and one unpark per handoff, as in AQS, and the continuation is the thread's own,
   * reused, so the adapter allocates nothing. kotlinx's unlock hands the lock straight to the
   * longest-suspended waiter, so it is FIFO, like Jeton and juc-fair. No {@code runBlocking}, which
   * would cost an event loop per operation and measure that instead.
   */
  final class Kotlinx implements Locker {
    private static final Object SUSPENDED = IntrinsicsKt.getCOROUTINE_SUSPENDED();

    private final kotlinx.coroutines.sync.Mutex mutex = MutexKt.Mutex(false);
    private final ThreadLocal<Parker> parkers = ThreadLocal.withInitial(Parker::new);

    @Override
    public void locked(Section section) throws InterruptedException {
      // lock() starts with this same tryLock; doing it here first only spares the thread-local
      // lookup when the lock is free.
      if (!mutex.tryLock(null)) {
        Parker parker = parkers.get();
        parker.resumed = false;
        if (mutex.lock(null, parker) == SUSPENDED) {
          parker.await();
        }
      }
      try {
        section.run();
      } finally {
        mutex.unlock(null);
      }
    }

    /** The suspend {@code lock} with a continuation that must never be resumed. */
    @Override
    public void lockedUncontended(Section section) {
      if (mutex.lock(null, NeverResumed.INSTANCE) == SUSPENDED) {
        throw new IllegalStateException("kotlinx Mutex.lock suspended on a free lock");
      }
      try {
        section.run();
      } finally {
        mutex.unlock(null);
      }
    }

    @Override
    public boolean isLocked() {
      return mutex.isLocked();
    }

    /**
     * The continuation of one thread's suspended {@code lock}: resuming it unparks the thread.
     * Reused for every lock of that thread, which suspends at most once at a time.
     */
    static final class Parker implements Continuation<Unit> {
      private final Thread thread = Thread.currentThread();
      private volatile boolean resumed;

      @Override
      public CoroutineContext getContext() {
        return EmptyCoroutineContext.INSTANCE;
      }

      @Override
      public void resumeWith(Object result) {
        // The lock is never cancelled here, so the result is always success.
        resumed = true;
        LockSupport.unpark(thread);
      }

      void await() throws InterruptedException {
        while (!resumed) {
          LockSupport.park(this);
          if (Thread.interrupted()) {
            // A suspended kotlinx lock can only be abandoned by cancelling its coroutine, which
            // this continuation has none of: the benchmark never interrupts, so give up loudly.
            throw new InterruptedException("interrupted while waiting for a kotlinx Mutex");
          }
        }
      }
    }
  }

  /** The continuation of a lock that cannot suspend. */
  enum NeverResumed implements Continuation<Unit> {
    INSTANCE;

    @Override
    public CoroutineContext getContext() {
      return EmptyCoroutineContext.INSTANCE;
    }

    @Override
    public void resumeWith(Object result) {
      throw new IllegalStateException("an uncontended lock was resumed: " + result);
    }
  }
}
