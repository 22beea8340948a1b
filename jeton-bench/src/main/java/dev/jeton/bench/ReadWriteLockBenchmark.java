package dev.jeton.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * Readers and writers share a lock: Jeton's {@code ReadWriteLock} beside {@code
 * ReentrantReadWriteLock} fair and non-fair and {@code StampedLock} (as a plain read-write lock,
 * and with optimistic reads). Each thread ({@code -t}, default 4) in a loop picks read or write at
 * random, {@code readShare} percent reads (100, 90, 50), runs a small section under the lock (a
 * read sums four shared counters, a write adds one to each), then burns {@code outside} tokens of
 * CPU (default 20). Throughput in operations per microsecond, all threads together.
 *
 * <p>Besides throughput, every operation times its acquire ({@link RwLocker}), and after each trial
 * the benchmark prints the longest wait of a reader and of a writer over the measurement
 * iterations, with the count of reads and writes done:
 *
 * <pre>
 * longest wait: reader 0.9 ms, writer 31.5 ms (measurement, 4 threads; 1234567 reads, 137174 writes)
 * </pre>
 *
 * A lock that lets readers keep overtaking a waiting writer (juc-unfair can) shows it here: a long
 * writer wait, and fewer writes than {@code readShare} asks for. Jeton is strictly FIFO and must
 * not starve either side. The longest wait is one sample, so it is noisy; on a loaded machine it
 * mostly measures the scheduler.
 *
 * <p>Run, once per thread count:
 *
 * <pre>
 * for t in 2 4 8; do java -jar jeton-bench/target/benchmarks.jar ReadWriteLockBenchmark -t $t; done
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

  /** The lock, what it guards, and every thread's longest waits. */
  @State(Scope.Benchmark)
  public static class Shared implements RwLocker.Data {
    @Param({
      RwLocker.JETON,
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
     * Prints the longest waits. JMH runs this once, after every thread has left its measurement
     * loop for the last time, so every worker's figures are final and visible.
     */
    @TearDown
    public synchronized void report() {
      if (locker.isLocked()) {
        throw new IllegalStateException(impl + ": still locked after the run");
      }
      long reader = 0;
      long writer = 0;
      long reads = 0;
      long writes = 0;
      long allWrites = 0;
      for (Worker w : workers) {
        reader = Math.max(reader, w.maxReader);
        writer = Math.max(writer, w.maxWriter);
        reads += w.reads;
        writes += w.writes;
        allWrites += w.allWrites;
      }
      if (reads + writes == 0) {
        throw new IllegalStateException(impl + ": no operation was recorded");
      }
      if (a != allWrites || d != allWrites) {
        throw new IllegalStateException(
            impl + ": writes lost: " + allWrites + " writes, counters " + a + " and " + d);
      }
      System.out.printf(
          Locale.ROOT,
          "%nlongest wait: reader %s, writer %s (measurement, %d threads; %d reads, %d writes)%n",
          millis(reader, reads),
          millis(writer, writes),
          workers.size(),
          reads,
          writes);
    }

    private static String millis(long nanos, long count) {
      return count == 0
          ? "-"
          : String.format(
              Locale.ROOT, "%.3f ms", nanos / (double) TimeUnit.MILLISECONDS.toNanos(1));
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

  /**
   * One thread's choice of operation and its longest waits. The figures cover the measurement
   * iterations only: a warm-up iteration starts them again.
   */
  @State(Scope.Thread)
  public static class Worker implements RwLocker.Waits {
    private long random;
    private int readShare;
    long maxReader;
    long maxWriter;
    long reads;
    long writes;
    long allWrites; // warm-up included, to check that no write was lost

    @Setup(Level.Trial)
    public void setUp(Shared shared) {
      random = System.nanoTime() | 1; // xorshift needs a non-zero seed
      readShare = shared.readShare;
      shared.register(this);
    }

    @Setup(Level.Iteration)
    public void startIteration(IterationParams iteration) {
      if (iteration.getType() == IterationType.WARMUP) {
        maxReader = 0;
        maxWriter = 0;
        reads = 0;
        writes = 0;
      }
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
    public void reader(long nanos) {
      reads++;
      if (nanos > maxReader) {
        maxReader = nanos;
      }
    }

    @Override
    public void writer(long nanos) {
      writes++;
      allWrites++;
      if (nanos > maxWriter) {
        maxWriter = nanos;
      }
    }
  }

  @Benchmark
  public long readOrWrite(Shared shared, Worker worker) throws InterruptedException {
    long value = 0;
    if (worker.nextIsRead()) {
      value = shared.locker.read(shared, worker);
    } else {
      shared.locker.write(shared, worker);
    }
    Blackhole.consumeCPU(shared.outside);
    return value;
  }
}
