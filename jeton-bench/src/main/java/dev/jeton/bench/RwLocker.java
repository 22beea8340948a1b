package dev.jeton.bench;

import dev.jeton.Fairness;
import dev.jeton.Guard;
import dev.jeton.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.StampedLock;

/**
 * One of the read-write locks compared, running a read or a write section under it and timing how
 * long the lock took to acquire: the adapter that lets {@link ReadWriteLockBenchmark} be written
 * once. As with {@link Limiter}, one JMH fork loads one implementation, so calls through this
 * interface are monomorphic and inlined. Never run with {@code -f 0}.
 *
 * <p>The wait of an operation is {@link Waits#now()} just before the acquire to just after it: for
 * an uncontended acquire that is the cost of the acquire plus one clock read, for a contended one
 * the time spent queued. Every implementation pays the same two clock reads, and hands the wait to
 * {@link Waits} after it has released the lock, so that recording it does not lengthen the time the
 * lock is held.
 */
interface RwLocker {
  /** {@code dev.jeton.ReadWriteLock.create()}: bounded barging, the default (1 ms bound). */
  String JETON = "jeton";

  /** A {@code dev.jeton.ReadWriteLock} built with {@code Fairness.strictFifo()}: task-fair. */
  String JETON_FIFO = "jeton-fifo";

  /** {@code new ReentrantReadWriteLock(true)}. */
  String JUC_FAIR = "juc-fair";

  /** {@code new ReentrantReadWriteLock(false)}: can starve writers. */
  String JUC_UNFAIR = "juc-unfair";

  /** {@code StampedLock} as a plain read-write lock: {@code readLock()} / {@code writeLock()}. */
  String STAMPED = "stamped";

  /**
   * {@code StampedLock} with optimistic reads: {@code tryOptimisticRead()}, read, {@code validate};
   * a read that fails validation takes {@code readLock()} and reads again.
   */
  String STAMPED_OPTIMISTIC = "stamped-optimistic";

  /** Makes the lock named {@code impl}, one of the constants above. */
  static RwLocker create(String impl) {
    return switch (impl) {
      case JETON -> new Jeton(Fairness.boundedBarging());
      case JETON_FIFO -> new Jeton(Fairness.strictFifo());
      case JUC_FAIR -> new Juc(true);
      case JUC_UNFAIR -> new Juc(false);
      case STAMPED -> new Stamped();
      case STAMPED_OPTIMISTIC -> new StampedOptimistic();
      default -> throw new IllegalArgumentException("unknown implementation: " + impl);
    };
  }

  /**
   * Reads {@code data} under the read lock, recording the wait in {@code waits}; returns what was
   * read.
   */
  long read(Data data, Waits waits) throws InterruptedException;

  /** Updates {@code data} under the write lock, recording the wait in {@code waits}. */
  void write(Data data, Waits waits) throws InterruptedException;

  /** Whether a reader or a writer holds the lock now; for sanity checks after a run. */
  boolean isLocked();

  /** What the lock guards. */
  interface Data {
    /** The read section: reads the shared state. */
    long read();

    /** The write section: updates the shared state. */
    void write();
  }

  /** The acquire waits of one thread. */
  interface Waits {
    /** {@code System.nanoTime()}, or 0 when waits are not recorded. */
    long now();

    void reader(long nanos);

    void writer(long nanos);
  }

  /** Jeton's {@link ReadWriteLock}. */
  final class Jeton implements RwLocker {
    private final ReadWriteLock lock;

    Jeton(Fairness fairness) {
      this.lock = ReadWriteLock.builder().fairness(fairness).build();
    }

    @Override
    public long read(Data data, Waits waits) throws InterruptedException {
      long start = waits.now();
      Guard guard = lock.read();
      long acquired = waits.now();
      try {
        return data.read();
      } finally {
        guard.unlock();
        waits.reader(acquired - start);
      }
    }

    @Override
    public void write(Data data, Waits waits) throws InterruptedException {
      long start = waits.now();
      Guard guard = lock.write();
      long acquired = waits.now();
      try {
        data.write();
      } finally {
        guard.unlock();
        waits.writer(acquired - start);
      }
    }

    @Override
    public boolean isLocked() {
      return lock.readers() > 0 || lock.isWriteLocked();
    }
  }

  /** {@link ReentrantReadWriteLock}, fair or not. */
  final class Juc implements RwLocker {
    private final ReentrantReadWriteLock.ReadLock readLock;
    private final ReentrantReadWriteLock.WriteLock writeLock;
    private final ReentrantReadWriteLock lock;

    Juc(boolean fair) {
      lock = new ReentrantReadWriteLock(fair);
      readLock = lock.readLock();
      writeLock = lock.writeLock();
    }

    @Override
    public long read(Data data, Waits waits) throws InterruptedException {
      long start = waits.now();
      readLock.lockInterruptibly(); // as interruptible as Jeton's read()
      long acquired = waits.now();
      try {
        return data.read();
      } finally {
        readLock.unlock();
        waits.reader(acquired - start);
      }
    }

    @Override
    public void write(Data data, Waits waits) throws InterruptedException {
      long start = waits.now();
      writeLock.lockInterruptibly();
      long acquired = waits.now();
      try {
        data.write();
      } finally {
        writeLock.unlock();
        waits.writer(acquired - start);
      }
    }

    @Override
    public boolean isLocked() {
      return lock.getReadLockCount() > 0 || lock.isWriteLocked();
    }
  }

  /** {@link StampedLock} through its pessimistic read and write locks. */
  class Stamped implements RwLocker {
    final StampedLock lock = new StampedLock();

    @Override
    public long read(Data data, Waits waits) throws InterruptedException {
      long start = waits.now();
      long stamp = lock.readLockInterruptibly();
      long acquired = waits.now();
      try {
        return data.read();
      } finally {
        lock.unlockRead(stamp);
        waits.reader(acquired - start);
      }
    }

    @Override
    public void write(Data data, Waits waits) throws InterruptedException {
      long start = waits.now();
      long stamp = lock.writeLockInterruptibly();
      long acquired = waits.now();
      try {
        data.write();
      } finally {
        lock.unlockWrite(stamp);
        waits.writer(acquired - start);
      }
    }

    @Override
    public boolean isLocked() {
      return lock.isReadLocked() || lock.isWriteLocked();
    }
  }

  /**
   * {@link StampedLock} with optimistic reads. A read's wait runs to the moment it has a snapshot
   * it will keep: the optimistic stamp when the read validates, else the read lock taken after the
   * failed attempt (which is counted in the wait).
   */
  final class StampedOptimistic extends Stamped {
    @Override
    public long read(Data data, Waits waits) throws InterruptedException {
      long start = waits.now();
      long stamp = lock.tryOptimisticRead();
      if (stamp != 0) {
        long stamped = waits.now();
        long value = data.read();
        if (lock.validate(stamp)) {
          waits.reader(stamped - start);
          return value;
        }
      }
      stamp = lock.readLockInterruptibly();
      long acquired = waits.now();
      try {
        return data.read();
      } finally {
        lock.unlockRead(stamp);
        waits.reader(acquired - start);
      }
    }
  }
}
