package dev.jeton.bench;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collection;
import java.util.Locale;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Aggregator;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ResultRole;

/**
 * One tail of one kind of acquire wait, over the iterations (and forks) it covers: the score is
 * computed from the merged histogram of every wait, which the result carries (compressed), so that
 * JMH's aggregation of iterations, and then of forks, merges histograms rather than averaging
 * percentiles. The score has no error: it is one figure over every wait. See {@link WaitTails}.
 */
final class WaitTailResult extends Result<WaitTailResult> {
  private static final long serialVersionUID = 1L;

  /** Which figure of the histogram the score is, in µs. */
  enum Tail {
    P999("p99.9"),
    MAX("max");

    final String label;

    Tail(String label) {
      this.label = label;
    }

    double micros(Histogram waits) {
      long nanos = this == MAX ? waits.getMaxValue() : waits.getValueAtPercentile(99.9);
      return nanos / 1000.0;
    }
  }

  private final String kind;
  private final Tail tail;
  private final byte[] waits;

  WaitTailResult(String kind, Tail tail, Histogram waits) {
    super(
        ResultRole.SECONDARY,
        WaitTails.PREFIX + kind + "." + tail.label,
        of(tail.micros(waits)),
        "us",
        AggregationPolicy.MAX);
    this.kind = kind;
    this.tail = tail;
    this.waits = encode(waits);
  }

  private static byte[] encode(Histogram waits) {
    ByteBuffer buffer = ByteBuffer.allocate(waits.getNeededByteBufferCapacity());
    int length = waits.encodeIntoCompressedByteBuffer(buffer);
    return Arrays.copyOf(buffer.array(), length);
  }

  private Histogram decode() {
    try {
      return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(waits), 0);
    } catch (DataFormatException e) {
      throw new IllegalStateException("a wait histogram did not decode: " + label, e);
    }
  }

  /** What JMH prints under the result's name after the run. */
  @Override
  public String extendedInfo() {
    return String.format(
        Locale.ROOT,
        "  %.3f us: the %s of %d waits%n",
        getScore(),
        tail.label,
        decode().getTotalCount());
  }

  @Override
  protected Aggregator<WaitTailResult> getThreadAggregator() {
    return WaitTailResult::merge;
  }

  @Override
  protected Aggregator<WaitTailResult> getIterationAggregator() {
    return WaitTailResult::merge;
  }

  private static WaitTailResult merge(Collection<WaitTailResult> results) {
    Histogram all = new Histogram(WaitHistogram.LONGEST, 2);
    WaitTailResult any = results.iterator().next();
    for (WaitTailResult r : results) {
      all.add(r.decode());
    }
    return new WaitTailResult(any.kind, any.tail, all);
  }
}
