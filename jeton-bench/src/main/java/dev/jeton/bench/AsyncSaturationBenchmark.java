package dev.jeton.bench;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
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

/**
 * Asynchronous acquisition. Implementations: jeton ({@code acquireAsync(1)}), kotlinx (its suspend
 * {@code acquire}, through {@link KotlinxLimiter}'s continuation-future) and ibm ({@code
 * FairAsyncSemaphore.acquire(1)}); the java.util.concurrent semaphores and cas-floor have no
 * asynchronous acquire and are left out.
 *
 * <ul>
 *   <li>{@code saturation}: one operation starts {@code tasks} (10,000) tasks on a semaphore of
 *       {@code limit} (16). Each requests a permit asynchronously; once granted, it holds the
 *       permit across a hop to a 2-thread executor, which releases it; the operation ends when
 *       every task has released. Most requests queue, so this measures the queueing and the
 *       handoff. Reported in ms/op; per task, ns = ms/op x 1e6 / tasks (x 100 for 10,000). Goal:
 *       jeton at least as fast per task as kotlinx and ibm.
 *   <li>{@code immediate}: one thread requests a permit of a free semaphore asynchronously and
 *       releases it from the stage's callback ({@code acquireAsync().thenAccept(release)}), as
 *       asynchronous callers do; ns/op. Goal: jeton within 1.5x of ibm.
 * </ul>
 *
 * <p>Run: {@code java -jar jeton-bench/target/benchmarks.jar AsyncSaturationBenchmark}
 */
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class AsyncSaturationBenchmark {

  @State(Scope.Thread)
  public static class Saturation {
    @Param({Limiter.JETON, Limiter.KOTLINX, Limiter.IBM})
    public String impl = Limiter.JETON;

    @Param({"10000"})
    public int tasks = 10_000;

    @Param({"16"})
    public int limit = 16;

    Limiter limiter;
    ExecutorService executor;

    @Setup(Level.Trial)
    public void setUp() {
      limiter = Limiter.create(impl, limit);
      executor =
          Executors.newFixedThreadPool(
              2,
              task -> {
                Thread thread = new Thread(task, "bench-hop");
                thread.setDaemon(true);
                return thread;
              });
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
      executor.shutdown();
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the hop executor did not stop");
      }
      Checks.allFree(limiter, limit);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public void saturation(Saturation state) {
    Limiter limiter = state.limiter;
    ExecutorService executor = state.executor;
    int tasks = state.tasks;
    AtomicInteger remaining = new AtomicInteger(tasks);
    CompletableFuture<Void> allDone = new CompletableFuture<>();
    Consumer<Object> holdAcrossHop =
        handle ->
            executor.execute(
                () -> {
                  limiter.release(handle);
                  if (remaining.decrementAndGet() == 0) {
                    allDone.complete(null);
                  }
                });
    for (int i = 0; i < tasks; i++) {
      CompletionStage<?> granted = limiter.acquireAsync();
      var unused = granted.thenAccept(holdAcrossHop);
    }
    allDone.join();
  }

  @State(Scope.Thread)
  public static class Immediate {
    @Param({Limiter.JETON, Limiter.KOTLINX, Limiter.IBM})
    public String impl = Limiter.JETON;

    Limiter limiter;
    Consumer<Object> release;

    @Setup
    public void setUp() {
      Limiter l = Limiter.create(impl, 1);
      limiter = l;
      release = l::release;
    }

    @TearDown
    public void check() {
      Checks.allFree(limiter, 1);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  public CompletionStage<Void> immediate(Immediate state) {
    return state.limiter.acquireAsync().thenAccept(state.release);
  }
}
