package dev.jeton.bench;

import dev.jeton.bench.ChannelBenchmark.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The contended lock benchmarks on virtual threads: {@code mutex} is {@link MutexBenchmark}'s
 * {@code contended}, {@code semaphore} is {@link ContendedBenchmark}, {@code readOrWrite} is {@link
 * ReadWriteLockBenchmark}, each with the same contenders, parameters and operation (the same static
 * method), run by {@code virtualThreads} virtual threads (8 and 64) on the default scheduler (as
 * many carriers as cores) instead of by JMH's platform threads. Virtual threads need Java 21: this
 * class is built only on JDK 21 and newer (src/main/java21).
 *
 * <p>JMH drives one platform thread; each invocation starts the virtual threads, which together do
 * {@value #BATCH} operations ({@code BATCH / virtualThreads} each), and waits for them, so the
 * score is in operations per microsecond, all virtual threads together, as the platform rows are.
 * Waits are recorded by each virtual thread into its own histogram, as a platform thread does, and
 * reported by the same profiler ({@code -prof dev.jeton.bench.WaitTails}). Do not give {@code -t}:
 * each JMH thread would start its own virtual threads.
 *
 * <p>{@code synchronized} on a virtual thread pins its carrier on JDK 21 to 23 and no longer does
 * from JDK 24 (JEP 491): its rows mean different things on either side of that.
 *
 * <pre>
 * java -jar jeton-bench/target/benchmarks.jar VirtualLockBenchmark -p limit=1 -p readShare=90 -prof dev.jeton.bench.WaitTails
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class VirtualLockBenchmark {
  /** Operations per invocation, all virtual threads together: a multiple of 8 and of 64. */
  static final int BATCH = 64_000;

  /** One operation of one virtual thread, on state of its own where it has some. */
  interface Operation {
    void run() throws InterruptedException;
  }

  /** The virtual threads of a trial, {@code virtualThreads} of them each invocation. */
  @State(Scope.Benchmark)
  public static class VirtualThreads {
    @Param({"8", "64"})
    public int virtualThreads = 8;

    ExecutorService executor;

    @Setup(Level.Trial)
    public void start() {
      if (virtualThreads <= 0 || BATCH % virtualThreads != 0) {
        throw new IllegalArgumentException(
            "virtualThreads must divide " + BATCH + ": " + virtualThreads);
      }
      executor = Executors.newVirtualThreadPerTaskExecutor();
    }

    @TearDown(Level.Trial)
    public void stop() {
      executor.shutdownNow();
    }

    /**
     * The loops of the virtual threads, each running {@code BATCH / virtualThreads} times an
     * operation of its own, made by {@code operations}.
     */
    List<Task> loops(Supplier<Operation> operations) {
      int each = BATCH / virtualThreads;
      List<Task> loops = new ArrayList<>();
      for (int t = 0; t < virtualThreads; t++) {
        Operation operation = operations.get();
        loops.add(
            () -> {
              for (int i = 0; i < each; i++) {
                operation.run();
              }
            });
      }
      return loops;
    }

    /** Runs {@code loops}, a new virtual thread each, and waits for them all. */
    void run(List<Task> loops) throws Exception {
      ChannelBenchmark.runAll(executor, loops);
    }
  }

  /** {@link MutexBenchmark.Shared}, and a {@link MutexBenchmark.Waiter} per virtual thread. */
  @State(Scope.Benchmark)
  public static class MutexTrial extends MutexBenchmark.Shared {
    List<Task> loops;

    @Setup(Level.Trial)
    public void makeLoops(VirtualThreads threads) {
      loops =
          threads.loops(
              () -> {
                MutexBenchmark.Waiter waiter = new MutexBenchmark.Waiter();
                waiter.setUp(this);
                return () -> MutexBenchmark.lockOnce(this, waiter);
              });
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void mutex(MutexTrial trial, VirtualThreads threads) throws Exception {
    threads.run(trial.loops);
  }

  /** {@link ContendedBenchmark.Shared}, and a {@link ContendedBenchmark.Waiter} per thread. */
  @State(Scope.Benchmark)
  public static class SemaphoreTrial extends ContendedBenchmark.Shared {
    List<Task> loops;

    @Setup(Level.Trial)
    public void makeLoops(VirtualThreads threads) {
      loops =
          threads.loops(
              () -> {
                ContendedBenchmark.Waiter waiter = new ContendedBenchmark.Waiter();
                return () -> ContendedBenchmark.acquireOnce(this, waiter);
              });
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void semaphore(SemaphoreTrial trial, VirtualThreads threads) throws Exception {
    threads.run(trial.loops);
  }

  /** {@link ReadWriteLockBenchmark.Shared}, and a {@link ReadWriteLockBenchmark.Worker} each. */
  @State(Scope.Benchmark)
  public static class ReadWriteTrial extends ReadWriteLockBenchmark.Shared {
    List<Task> loops;

    @Setup(Level.Trial)
    public void makeLoops(VirtualThreads threads) {
      loops =
          threads.loops(
              () -> {
                ReadWriteLockBenchmark.Worker worker = new ReadWriteLockBenchmark.Worker();
                worker.setUp(this);
                return () -> ReadWriteLockBenchmark.readOrWriteOnce(this, worker);
              });
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void readOrWrite(ReadWriteTrial trial, VirtualThreads threads) throws Exception {
    threads.run(trial.loops);
  }
}
