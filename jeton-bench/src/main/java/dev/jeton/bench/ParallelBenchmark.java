package dev.jeton.bench;

import dev.jeton.Parallel;
import dev.jeton.Semaphore;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The cost per item of running 100,000 trivial async items (each returns an already completed
 * future), at most {@code limit} at a time, results in input order where the form keeps them:
 *
 * <ul>
 *   <li>{@code handWritten}: the loop one writes with a semaphore: {@code callAsync(1, ...)} per
 *       item, then {@code allOf} and the results read back in order;
 *   <li>{@code parallel}: {@code Parallel.limit(limit).mapAsync(items, fn)};
 *   <li>{@code fluxFlatMapSequential}: Project Reactor's {@code Flux.fromIterable(items)
 *       .flatMapSequential(fn, limit).collectList()} (ordered, like the two above);
 *   <li>{@code fluxFlatMap}: {@code flatMap(fn, limit)} (unordered).
 * </ul>
 *
 * <p>Goal (issue 5): {@code parallel} within 1.5x of {@code handWritten}. Run: {@code java -jar
 * jeton-bench/target/benchmarks.jar ParallelBenchmark}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@State(Scope.Benchmark)
public class ParallelBenchmark {
  static final int ITEMS = 100_000;

  @Param({"16"})
  public int limit;

  private List<Integer> items;

  @Setup
  public void setUp() {
    items = IntStream.range(0, ITEMS).boxed().toList();
  }

  private static CompletableFuture<Integer> work(int item) {
    return CompletableFuture.completedFuture(item + 1);
  }

  /** ns per item: the result of one run, divided by the items, is what JMH reports per op. */
  @Benchmark
  @org.openjdk.jmh.annotations.OperationsPerInvocation(ITEMS)
  public List<Integer> handWritten() {
    Semaphore semaphore = Semaphore.create(limit);
    @SuppressWarnings("unchecked")
    CompletableFuture<Integer>[] all = new CompletableFuture[items.size()];
    for (int i = 0; i < all.length; i++) {
      int item = items.get(i);
      all[i] = semaphore.callAsync(1, () -> work(item));
    }
    CompletableFuture.allOf(all).join();
    Integer[] results = new Integer[all.length];
    for (int i = 0; i < all.length; i++) {
      results[i] = all[i].join();
    }
    return List.of(results);
  }

  @Benchmark
  @org.openjdk.jmh.annotations.OperationsPerInvocation(ITEMS)
  public List<Integer> parallel() {
    return Parallel.limit(limit).mapAsync(items, ParallelBenchmark::work).join();
  }

  @Benchmark
  @org.openjdk.jmh.annotations.OperationsPerInvocation(ITEMS)
  public @Nullable List<Integer> fluxFlatMapSequential() {
    return Flux.fromIterable(items)
        .flatMapSequential(item -> Mono.fromFuture(work(item)), limit)
        .collectList()
        .block();
  }

  @Benchmark
  @org.openjdk.jmh.annotations.OperationsPerInvocation(ITEMS)
  public @Nullable List<Integer> fluxFlatMap() {
    return Flux.fromIterable(items)
        .flatMap(item -> Mono.fromFuture(work(item)), limit)
        .collectList()
        .block();
  }
}
