package dev.jeton.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Readers and writers share a lock: Jeton's {@code ReadWriteLock} beside {@code
 * ReentrantReadWriteLock} fair and non-fair and {@code StampedLock} (as a plain read-write lock,
 * and with optimistic reads). Each thread ({@code -t}, default 4) in a loop picks read or write at
 * random, {@code readShare} percent reads (100, 90, 50), runs a small section under the lock (a
 * read sums four shared counters, a write adds one to each), then burns {@code outside} tokens of
 * CPU (default 20). Throughput in operations per microsecond, all threads together.
 *
 * <p>With {@code -p recordWaits=true}, every operation times its acquire ({@link RwLocker}), and
 * with {@code -prof dev.jeton.bench.WaitTails} the p99.9 and the longest wait of a reader and of a
 * writer over the measurement iterations print beside the throughput, with the count of reads and
 * writes ({@code ·read.wait.p99.9}, {@code ·read.wait.max}, {@code ·read.wait.count}, the same for
 * {@code write.wait}; see {@link WaitTails}). A lock that lets readers keep overtaking a waiting
 * writer (juc-unfair can) shows it there: a long writer wait, and fewer writes than {@code
 * readShare} asks for. Jeton is strictly FIFO and must not starve either side. The longest wait is
 * one sample, so it is noisy; on a loaded machine it mostly measures the scheduler. Timing every
 * acquire costs two clock reads an operation, one of them inside the critical section, which slows
 * the fastest locks by half or more: so the waits are recorded only with {@code -p
 * recordWaits=true}, and the throughput to compare is the untimed one; {@code -p
 * recordWaits=false,true} measures both side by side.
 *
 * <p>The same operation on 8 and 64 virtual threads is {@code VirtualLockBenchmark.readOrWrite}
 * (src/main/java21, built on JDK 21 and newer). Run, once per thread count:
 *
 * <pre>
 * for t in 2 4 8; do java -jar jeton-bench/target/benchmarks.jar ReadWriteLockBenchmark -t $t -p recordWaits=false,true -prof dev.jeton.bench.WaitTails; done
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(4)
public class ReadWriteLockBenchmark {

  /** The lock, what it guards, and every thread's count of operations. */
  @State(Scope.Benchmark)
  public static class Shared implements RwLocker.Data {
    @Param({
      RwLocker.JETON,
      RwLocker.JETON_FIFO,
      RwLocker.JUC_FAIR,
      RwLocker.JUC_UNFAIR,
      RwLocker.STAMPED,
      RwLocker.STAMPED_OPTIMISTIC
    })
    public String impl = RwLocker.JETON;

    /** Percentage of operations that read. */
    @Param({"100", "90", "50"})
    public int readShare = 90;

    /** CPU tokens burnt between releasing and the next acquire. */
    @Param({"20"})
    public int outside = 20;

    /** Whether every acquire's wait is timed. */
    @Param({"false"})
    public boolean recordWaits = false;

    RwLocker locker;
    private final List<Worker> workers = new ArrayList<>();

    // The guarded data: written only under the write lock.
    private long a;
    private long b;
    private long c;
    private long d;

    @Setup
    public void setUp() {
      if (readShare < 0 || readShare > 100) {
        throw new IllegalArgumentException("readShare is a percentage: " + readShare);
      }
      locker = RwLocker.create(impl);
    }

    synchronized void register(Worker worker) {
      workers.add(worker);
    }

    /**
     * Checks that the lock is free and no write was lost. JMH runs this once, after every thread
     * has left its measurement loop for the last time, so every worker's counts are final and
     * visible.
     */
    @TearDown
    public synchronized void check() {
      if (locker.isLocked()) {
        throw new IllegalStateException(impl + ": still locked after the run");
      }
      long operations = 0;
      long writes = 0;
      for (Worker w : workers) {
        operations += w.operations;
        writes += w.writes;
      }
      if (operations == 0) {
        throw new IllegalStateException(impl + ": no operation was done");
      }
      if (a != writes || d != writes) {
        throw new IllegalStateException(
            impl + ": writes lost: " + writes + " writes, counters " + a + " and " + d);
      }
    }

    @Override
    public long read() {
      return a + b + c + d;
    }

    @Override
    public void write() {
      a++;
      b++;
      c++;
      d++;
    }
  }

  /** One thread's choice of operation, its acquire waits, and its count of operations. */
  @State(Scope.Thread)
  public static class Worker implements RwLocker.Waits {
    private final WaitHistogram readWaits = new WaitHistogram("read.wait");
    private final WaitHistogram writeWaits = new WaitHistogram("write.wait");
    private long random;
    private int readShare;
    private boolean recordWaits;
    long operations; // warm-up included, to check that the loop ran
    long writes; // warm-up included, to check that no write was lost

    @Setup(Level.Trial)
    public void setUp(Shared shared) {
      random = System.nanoTime() | 1; // xorshift needs a non-zero seed
      readShare = shared.readShare;
      recordWaits = shared.recordWaits;
      shared.register(this);
    }

    /** Whether the next operation reads: true {@code readShare} percent of the time. */
    boolean nextIsRead() {
      long x = random;
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      random = x;
      return ((x >>> 33) * 100 >>> 31) < readShare; // the top 31 bits scaled to [0, 100)
    }

    @Override
    public long now() {
      return recordWaits ? System.nanoTime() : 0;
    }

    @Override
    public void reader(long nanos) {
      operations++;
      if (recordWaits) {
        readWaits.record(nanos);
      }
    }

    @Override
    public void writer(long nanos) {
      operations++;
      writes++;
      if (recordWaits) {
        writeWaits.record(nanos);
      }
    }
  }

  /** One operation: a read or a write, then {@code outside} tokens of CPU. */
  static long readOrWriteOnce(Shared shared, Worker worker) throws InterruptedException {
    long value = 0;
    if (worker.nextIsRead()) {
      value = shared.locker.read(shared, worker);
    } else {
      shared.locker.write(shared, worker);
    }
    Blackhole.consumeCPU(shared.outside);
    return value;
  }

  @Benchmark
  public long readOrWrite(Shared shared, Worker worker) throws InterruptedException {
    return readOrWriteOnce(shared, worker);
  }
}
