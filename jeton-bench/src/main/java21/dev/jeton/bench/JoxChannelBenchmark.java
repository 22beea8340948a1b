package dev.jeton.bench;

import com.softwaremill.jox.Channel;
import dev.jeton.bench.ChannelBenchmark.BlockingPipe;
import dev.jeton.bench.ChannelBenchmark.Pipe;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link ChannelBenchmark}'s shapes (same batch, same chain, same JMH settings) over jox's {@code
 * Channel} (blocking {@code send} and {@code receive}), which needs Java 21: this class is built
 * only on JDK 21 and newer (src/main/java21). Run it in the same command as ChannelBenchmark, so
 * that every contender is measured in one run:
 *
 * <pre>
 * java -jar jeton-bench/target/benchmarks.jar 'ChannelBenchmark|JoxChannelBenchmark'
 * </pre>
 *
 * <p>{@code jox} runs on platform threads, as every contender of ChannelBenchmark does. jox is
 * written for virtual threads, so {@code jox-virtual} and, beside it, {@code jeton-virtual} run the
 * same loops on virtual threads (one per task, on the default scheduler: as many carriers as
 * cores); those two rows are to be read beside each other and beside ChannelBenchmark's {@code
 * kotlinx-2threads}, not beside the platform-thread rows.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 2,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class JoxChannelBenchmark {
  private static final String VIRTUAL = "-virtual";

  /** A pipe of {@code impl} (less its {@code -virtual}): jox's, or one of ChannelBenchmark's. */
  static Pipe create(String impl, int capacity) {
    String kind = kind(impl);
    return kind.equals("jox") ? pipe(channel(capacity)) : Pipe.create(kind, capacity);
  }

  /** {@code impl} less its {@code -virtual}: the channel, whatever the threads. */
  static String kind(String impl) {
    return impl.endsWith(VIRTUAL) ? impl.substring(0, impl.length() - VIRTUAL.length()) : impl;
  }

  /** A jox channel of {@code capacity}: rendezvous at 0. */
  static Channel<Integer> channel(int capacity) {
    return capacity == 0 ? Channel.newRendezvousChannel() : Channel.newBufferedChannel(capacity);
  }

  static Pipe pipe(Channel<Integer> ch) {
    return new BlockingPipe(ch::send, ch::receive);
  }

  /**
   * The threads of a trial: platform threads started once (as in ChannelBenchmark), or a virtual
   * thread per task for the {@code -virtual} contenders.
   */
  @State(Scope.Benchmark)
  public static class Workers {
    ExecutorService platform;
    ExecutorService virtual;

    @Setup(Level.Trial)
    public void start() {
      platform = Executors.newCachedThreadPool();
      virtual = Executors.newVirtualThreadPerTaskExecutor();
    }

    @TearDown(Level.Trial)
    public void stop() {
      platform.shutdownNow();
      virtual.shutdownNow();
    }

    ExecutorService forImpl(String impl) {
      return impl.endsWith(VIRTUAL) ? virtual : platform;
    }
  }

  @State(Scope.Benchmark)
  public static class PingPong extends ChannelBenchmark.PingPongTrial {
    @Param({"jox", "jox-virtual", "jeton-virtual"})
    public String impl = "jox";

    @Override
    Pipe create(int capacity) {
      return JoxChannelBenchmark.create(impl, capacity);
    }
  }

  @Benchmark
  @OperationsPerInvocation(ChannelBenchmark.BATCH)
  public void pingPong(PingPong s, Workers w) throws Exception {
    ChannelBenchmark.pingPong(s.there, s.back, w.forImpl(s.impl));
  }

  @State(Scope.Benchmark)
  public static class Transfer extends ChannelBenchmark.TransferTrial {
    @Param({"jox", "jox-virtual", "jeton-virtual"})
    public String impl = "jox";

    @Override
    Pipe create(int capacity) {
      return JoxChannelBenchmark.create(impl, capacity);
    }
  }

  @Benchmark
  @OperationsPerInvocation(ChannelBenchmark.BATCH)
  public void transfer(Transfer s, Workers w) throws Exception {
    ChannelBenchmark.transfer(s.pipe, s.pairs, w.forImpl(s.impl));
  }

  @State(Scope.Benchmark)
  public static class Chain extends ChannelBenchmark.ChainTrial {
    @Param({"jox", "jox-virtual", "jeton-virtual"})
    public String impl = "jox";

    @Override
    Pipe create(int capacity) {
      return JoxChannelBenchmark.create(impl, capacity);
    }
  }

  @Benchmark
  @OperationsPerInvocation(ChannelBenchmark.BATCH)
  public void chain(Chain s, Workers w) throws Exception {
    ChannelBenchmark.chain(s.pipes, w.forImpl(s.impl));
  }
}
