package dev.jeton.bench;

import dev.jeton.Channel;
import dev.jeton.Select;
import dev.jeton.bench.ChannelBenchmark.BlockingPipe;
import dev.jeton.bench.ChannelBenchmark.Pipe;
import dev.jeton.bench.ChannelBenchmark.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Jeton's {@link Select#select} beside jox's {@code Select.select}, receiving over 1 and 2
 * channels: jox's own SelectBenchmark shapes ("single channel" and "two channels iterative"), with
 * {@link ChannelBenchmark}'s batch, threads and JMH settings. jox needs Java 21, so this class is
 * built only on JDK 21 and newer (src/main/java21).
 *
 * <p>One consumer thread receives {@link ChannelBenchmark#BATCH} values, each by one select:
 *
 * <ul>
 *   <li>{@code clauses=1}: {@code select(a.onReceive(..))} (jox: {@code
 *       select(a.receiveClause())}); one producer sends the whole batch into {@code a}.
 *   <li>{@code clauses=2}: {@code select(a.onReceive(..), b.onReceive(..))}; two producers, one per
 *       channel, each send half the batch.
 *   <li>{@code clauses=0}: the baseline, no select: the consumer calls {@code a.receive()}; one
 *       producer. The difference from {@code clauses=1} is what a select costs over the plain
 *       receive.
 * </ul>
 *
 * <p>The time is per value received. As in jox's benchmark the clauses are made in each select (as
 * a caller writes them inline), so their allocation is counted for both; a Jeton clause could be
 * made once and reused. Producers send with the channel's plain blocking {@code send}.
 *
 * <p>{@code jeton} and {@code jox} run on platform threads; {@code jeton-virtual} and {@code
 * jox-virtual} on a virtual thread per task (jox's own benchmark runs on virtual threads), {@link
 * JoxChannelBenchmark.Workers}' threads: the two kinds of rows are read apart. Run:
 *
 * <pre>
 * java -jar jeton-bench/target/benchmarks.jar SelectBenchmark
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 2,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class SelectBenchmark {
  private static final int BATCH = ChannelBenchmark.BATCH;

  /** The channels of a trial: the producers' pipes, and the consumer's loop over them. */
  @State(Scope.Benchmark)
  public static class Trial {
    @Param({"jeton", "jox", "jeton-virtual", "jox-virtual"})
    public String impl = "jeton";

    @Param({"1", "2", "0"})
    public int clauses = 1;

    @Param({"0", "16"})
    public int capacity = 0;

    /** One per channel: the producers send into these. */
    Pipe[] producers;

    /** Receives {@link #BATCH} values. */
    Task consumer;

    @Setup(Level.Trial)
    public void setUp() {
      if (clauses < 0 || clauses > 2) {
        throw new IllegalArgumentException("clauses must be 0, 1 or 2: " + clauses);
      }
      int channels = Math.max(clauses, 1);
      producers = new Pipe[channels];
      switch (JoxChannelBenchmark.kind(impl)) {
        case "jeton" -> {
          List<Channel<Integer>> chs = new ArrayList<>();
          for (int k = 0; k < channels; k++) {
            chs.add(ChannelBenchmark.channel(capacity));
            producers[k] = BlockingPipe.of(chs.get(k));
          }
          consumer = jeton(chs);
        }
        case "jox" -> {
          List<com.softwaremill.jox.Channel<Integer>> chs = new ArrayList<>();
          for (int k = 0; k < channels; k++) {
            chs.add(JoxChannelBenchmark.channel(capacity));
            producers[k] = JoxChannelBenchmark.pipe(chs.get(k));
          }
          consumer = jox(chs);
        }
        default -> throw new IllegalArgumentException("unknown impl " + impl);
      }
    }

    private Task jeton(List<Channel<Integer>> chs) {
      Channel<Integer> a = chs.get(0);
      if (clauses == 0) {
        return () -> producers[0].receiveAll(BATCH);
      }
      if (clauses == 1) {
        return () -> {
          for (int i = 0; i < BATCH; i++) {
            Select.select(a.onReceive(v -> v));
          }
        };
      }
      Channel<Integer> b = chs.get(1);
      return () -> {
        for (int i = 0; i < BATCH; i++) {
          Select.select(a.onReceive(v -> v), b.onReceive(v -> v));
        }
      };
    }

    private Task jox(List<com.softwaremill.jox.Channel<Integer>> chs) {
      com.softwaremill.jox.Channel<Integer> a = chs.get(0);
      if (clauses == 0) {
        return () -> producers[0].receiveAll(BATCH);
      }
      if (clauses == 1) {
        return () -> {
          for (int i = 0; i < BATCH; i++) {
            com.softwaremill.jox.Select.select(a.receiveClause());
          }
        };
      }
      com.softwaremill.jox.Channel<Integer> b = chs.get(1);
      return () -> {
        for (int i = 0; i < BATCH; i++) {
          com.softwaremill.jox.Select.select(a.receiveClause(), b.receiveClause());
        }
      };
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void receive(Trial s, JoxChannelBenchmark.Workers w) throws Exception {
    List<Task> tasks = new ArrayList<>();
    int each = BATCH / s.producers.length;
    for (Pipe p : s.producers) {
      tasks.add(() -> p.sendAll(each));
    }
    tasks.add(s.consumer);
    ChannelBenchmark.runAll(w.forImpl(s.impl), tasks);
  }
}
