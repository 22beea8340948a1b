package dev.jeton.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.runner.IterationType;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The wait tails JMH prints: over every wait of every measurement iteration, merged rather than
 * averaged, and surviving the trip from the fork to the JMH process that prints them. Each test
 * uses kinds of its own: every {@link WaitHistogram} of the JVM stays registered.
 */
class WaitTailsTest {
  private static final IterationParams MEASUREMENT =
      new IterationParams(IterationType.MEASUREMENT, 1, TimeValue.seconds(1), 1);
  private static final IterationParams WARMUP =
      new IterationParams(IterationType.WARMUP, 1, TimeValue.seconds(1), 1);
  private static final long MICRO = TimeUnit.MICROSECONDS.toNanos(1);
  private static final long FIVE_MS = TimeUnit.MILLISECONDS.toNanos(5);

  private final WaitTails profiler = new WaitTails();

  /** Runs one iteration of the profiler around {@code body}, which records waits; its results. */
  private Map<String, Result> iteration(IterationParams type, Runnable body) {
    profiler.beforeIteration(null, type);
    body.run();
    Map<String, Result> byLabel = new HashMap<>();
    for (Result r : profiler.afterIteration(null, type, null)) {
      byLabel.put(r.getLabel(), r);
    }
    return byLabel;
  }

  private static void record(WaitHistogram waits, int count, long nanos) {
    for (int i = 0; i < count; i++) {
      waits.record(nanos);
    }
  }

  /**
   * Two iterations of 1,000 waits of 1 µs, the second with two of them 5 ms: each iteration's p99.9
   * is 1 µs and 5 ms, their mean 2.5 ms; over the 2,000 waits it is 1 µs, and the longest is 5 ms.
   */
  @Test
  void p999IsOverEveryWaitOfTheIterations_notTheirMean() {
    WaitHistogram a = new WaitHistogram("merge.wait");
    WaitHistogram b = new WaitHistogram("merge.wait"); // a second thread
    Map<String, Result> first = iteration(MEASUREMENT, () -> record(a, 1000, MICRO));
    Map<String, Result> second =
        iteration(
            MEASUREMENT,
            () -> {
              record(a, 500, MICRO);
              record(b, 498, MICRO);
              record(b, 2, FIVE_MS);
            });
    assertEquals(5000, micros(second, "merge.wait.p99.9"), 5000 * 0.01);

    assertEquals(1, score(merged(first, second, "merge.wait.p99.9")), 0.01);
    assertEquals(5000, score(merged(first, second, "merge.wait.max")), 5000 * 0.01);
    assertEquals(1000, second.get(WaitTails.PREFIX + "merge.wait.count").getScore());
  }

  @Test
  void eachIterationStartsEmpty() {
    WaitHistogram waits = new WaitHistogram("fresh.wait");
    iteration(MEASUREMENT, () -> record(waits, 10, FIVE_MS));
    Map<String, Result> next = iteration(MEASUREMENT, () -> record(waits, 10, MICRO));
    assertEquals(1, micros(next, "fresh.wait.max"), 0.01);
    assertEquals(10, next.get(WaitTails.PREFIX + "fresh.wait.count").getScore());
  }

  @Test
  void warmUpIterationsAndKindsWithNoWaitReportNothing() {
    WaitHistogram recorded = new WaitHistogram("warm.wait");
    new WaitHistogram("silent.wait"); // recordWaits=false: made, never recorded into
    Map<String, Result> warmUp = iteration(WARMUP, () -> record(recorded, 10, MICRO));
    assertTrue(labelsOf(warmUp, "warm.").isEmpty(), () -> "warm-up reported " + warmUp.keySet());

    Map<String, Result> measured = iteration(MEASUREMENT, () -> record(recorded, 10, MICRO));
    assertEquals(3, labelsOf(measured, "warm.").size(), () -> "reported " + measured.keySet());
    assertTrue(labelsOf(measured, "silent.").isEmpty(), () -> "reported " + measured.keySet());
  }

  /** JMH sends each iteration's results from the forked JVM to its own, serialized. */
  @Test
  void aResultKeepsItsHistogramThroughSerialization() throws Exception {
    WaitHistogram waits = new WaitHistogram("sent.wait");
    Map<String, Result> first = iteration(MEASUREMENT, () -> record(waits, 1000, MICRO));
    Map<String, Result> second = iteration(MEASUREMENT, () -> record(waits, 2, FIVE_MS));
    WaitTailResult sent =
        (WaitTailResult) roundTrip(second.get(WaitTails.PREFIX + "sent.wait.max"));
    assertEquals(5000, sent.getScore(), 5000 * 0.01);

    Map<String, Result> received = Map.of(WaitTails.PREFIX + "sent.wait.max", sent);
    assertEquals(5000, score(merged(first, received, "sent.wait.max")), 5000 * 0.01);
  }

  private static List<String> labelsOf(Map<String, Result> results, String kindPrefix) {
    List<String> labels = new ArrayList<>();
    for (String label : results.keySet()) {
      if (label.startsWith(WaitTails.PREFIX + kindPrefix)) {
        labels.add(label);
      }
    }
    return labels;
  }

  private static double score(Result result) {
    return result.getScore();
  }

  private static double micros(Map<String, Result> results, String label) {
    return results.get(WaitTails.PREFIX + label).getScore();
  }

  /**
   * What JMH does with one label's results of several iterations, and then of several forks: the
   * first one's iteration aggregator, over all of them.
   */
  private static Result merged(
      Map<String, Result> first, Map<String, Result> second, String label) {
    WaitTailResult one = (WaitTailResult) first.get(WaitTails.PREFIX + label);
    WaitTailResult two = (WaitTailResult) second.get(WaitTails.PREFIX + label);
    return one.getIterationAggregator().aggregate(List.of(one, two));
  }

  private static Object roundTrip(Object o) throws IOException, ClassNotFoundException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(o);
    }
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return in.readObject();
    }
  }
}
