package dev.jeton.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.HdrHistogram.Histogram;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;
import org.openjdk.jmh.runner.IterationType;

/**
 * A JMH profiler that reports the acquire waits the lock benchmarks record ({@link WaitHistogram})
 * as secondary results, beside the throughput in JMH's table and in its CSV and JSON, for each kind
 * of acquire:
 *
 * <ul>
 *   <li>{@code ·wait.p99.9}: the 99.9th percentile of every wait of the measurement iterations (of
 *       every fork), in µs;
 *   <li>{@code ·wait.max}: the longest of them, in µs;
 *   <li>{@code ·wait.count}: how many acquires they were.
 * </ul>
 *
 * ({@code ·read.wait.p99.9} and so on for a read-write lock's readers and writers.) Turn it on with
 * {@code -prof dev.jeton.bench.WaitTails}; without it the benchmarks still record their waits, and
 * nothing reports them.
 *
 * <p>Why a profiler: a percentile over several iterations and forks is not an aggregate of the
 * iterations' percentiles, so each iteration's result carries its whole histogram and JMH's merging
 * of iterations and forks merges the histograms ({@link WaitTailResult}). {@code @AuxCounters}, the
 * other way to add a row, only sums or averages numbers. Before every iteration the profiler clears
 * the histograms; after a measurement iteration, once JMH has joined the iteration's threads, it
 * merges them by kind. Warm-up iterations report nothing.
 */
public final class WaitTails implements InternalProfiler {
  /** The mark JMH's own profilers put before their results' labels ({@code ·gc.alloc.rate}). */
  static final String PREFIX = "\u00b7";

  private static final Queue<WaitHistogram> HISTOGRAMS = new ConcurrentLinkedQueue<>();

  static void register(WaitHistogram histogram) {
    HISTOGRAMS.add(histogram);
  }

  @Override
  public String getDescription() {
    return "p99.9 and longest acquire wait of Jeton's lock benchmarks (issue 31)";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmark, IterationParams iteration) {
    for (WaitHistogram h : HISTOGRAMS) {
      h.clear();
    }
  }

  @Override
  public Collection<? extends Result> afterIteration(
      BenchmarkParams benchmark, IterationParams iteration, IterationResult result) {
    List<Result> results = new ArrayList<>();
    if (iteration.getType() != IterationType.MEASUREMENT) {
      return results;
    }
    for (Map.Entry<String, Histogram> kind : merged().entrySet()) {
      Histogram waits = kind.getValue();
      if (waits.getTotalCount() == 0) {
        continue; // recording turned off: no row rather than a row of zeros
      }
      results.add(new WaitTailResult(kind.getKey(), WaitTailResult.Tail.P999, waits));
      results.add(new WaitTailResult(kind.getKey(), WaitTailResult.Tail.MAX, waits));
      results.add(
          new ScalarResult(
              PREFIX + kind.getKey() + ".count",
              waits.getTotalCount(),
              "#",
              AggregationPolicy.SUM));
    }
    return results;
  }

  /** Every thread's waits, merged by kind. */
  private static Map<String, Histogram> merged() {
    Map<String, Histogram> byKind = new TreeMap<>();
    for (WaitHistogram h : HISTOGRAMS) {
      h.addTo(byKind.computeIfAbsent(h.kind(), k -> new Histogram(WaitHistogram.LONGEST, 2)));
    }
    return byKind;
  }
}
