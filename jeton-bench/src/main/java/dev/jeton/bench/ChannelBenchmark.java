package dev.jeton.bench;

import dev.jeton.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import kotlin.coroutines.CoroutineContext;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlinx.coroutines.channels.BufferOverflow;
import kotlinx.coroutines.channels.ChannelKt;
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
 * Values handed between threads through Jeton's {@code Channel} (blocking {@code send} and {@code
 * receive}) beside {@code ArrayBlockingQueue}, {@code LinkedBlockingQueue} and {@code
 * SynchronousQueue} ({@code put} and {@code take}) and kotlinx.coroutines' {@code Channel}. Goal:
 * Jeton ahead of ArrayBlockingQueue and SynchronousQueue in every row. jox's channels need Java 21:
 * they are in {@code JoxChannelBenchmark} (src/main/java21), built on JDK 21 and newer, with the
 * same shapes; run both in one command to have them side by side.
 *
 * <ul>
 *   <li>{@code pingPong}: two threads, two rendezvous channels (or SynchronousQueues): one sends a
 *       value, the other receives it and sends it back; the time is per round trip.
 *   <li>{@code transfer}: {@code pairs} producers and as many consumers through one buffered
 *       channel (or queue) of {@code capacity}; the time is per value.
 *   <li>{@code chain}: {@value #CHAIN} channels in a row, one thread sending into the first, one
 *       thread for each next channel receiving from the one before and sending on, one thread
 *       receiving from the last ({@value #CHAIN} + 1 threads, jox's "chained" shape); the time is
 *       per hop (one send and its receive). {@code juc} is a SynchronousQueue at capacity 0 and an
 *       ArrayBlockingQueue otherwise.
 * </ul>
 *
 * <p>Every contender runs on platform threads, blocked in its send or receive when it must wait.
 * kotlinx's send and receive are suspend functions: {@code kotlinx} runs each thread's whole loop
 * as one coroutine in {@code runBlocking} on that thread (see KotlinxChannels.kt), which parks the
 * thread while the coroutine is suspended, as a blocking send or receive does; {@code
 * kotlinx-2threads} runs the loops as coroutines on a dispatcher of two threads (the threads
 * started here only wait for them), the coroutine-native shape, to be read beside virtual threads
 * rather than beside the platform-thread rows.
 *
 * <p>One invocation moves a fixed batch of values on threads started once per trial, so no thread
 * is ever left blocked when JMH ends an iteration. Run:
 *
 * <pre>
 * java -jar jeton-bench/target/benchmarks.jar ChannelBenchmark
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
public class ChannelBenchmark {
  static final int BATCH = 20_000;
  static final int CHAIN = 8;

  /**
   * One channel or queue under test, and the loops the shapes run on it; {@code to} and {@code
   * back} are pipes of the same kind.
   */
  interface Pipe {
    /** Sends 0 until {@code n}. */
    void sendAll(int n) throws InterruptedException;

    /** Receives {@code n} values. */
    void receiveAll(int n) throws InterruptedException;

    /** Receives {@code n} values and sends each into {@code to}. */
    void relay(Pipe to, int n) throws InterruptedException;

    /** {@code n} round trips: sends into this pipe, then receives the answer from {@code back}. */
    void ping(Pipe back, int n) throws InterruptedException;

    static Pipe create(String impl, int capacity) {
      return switch (impl) {
        case "jeton" -> BlockingPipe.of(channel(capacity));
        case "abq" -> BlockingPipe.of(new ArrayBlockingQueue<>(capacity));
        case "lbq" -> BlockingPipe.of(new LinkedBlockingQueue<>(capacity));
        case "sync" -> BlockingPipe.of(new SynchronousQueue<>());
        case "juc" -> create(capacity == 0 ? "sync" : "abq", capacity);
        case "kotlinx" -> new KotlinxPipe(capacity, EmptyCoroutineContext.INSTANCE);
        case "kotlinx-2threads" -> new KotlinxPipe(capacity, TwoThreads.DISPATCHER);
        default -> throw new IllegalArgumentException("unknown impl " + impl);
      };
    }
  }

  /** A Jeton channel of {@code capacity}: rendezvous at 0. */
  static Channel<Integer> channel(int capacity) {
    return capacity == 0 ? Channel.rendezvous() : Channel.buffered(capacity);
  }

  /** A pipe with a blocking put and take: every contender but kotlinx's. */
  static final class BlockingPipe implements Pipe {
    interface Put {
      void put(Integer v) throws InterruptedException;
    }

    interface Take {
      Integer take() throws InterruptedException;
    }

    private final Put put;
    private final Take take;

    BlockingPipe(Put put, Take take) {
      this.put = put;
      this.take = take;
    }

    static BlockingPipe of(BlockingQueue<Integer> q) {
      return new BlockingPipe(q::put, q::take);
    }

    static BlockingPipe of(Channel<Integer> ch) {
      return new BlockingPipe(ch::send, ch::receive);
    }

    @Override
    public void sendAll(int n) throws InterruptedException {
      for (int i = 0; i < n; i++) {
        put.put(i);
      }
    }

    @Override
    public void receiveAll(int n) throws InterruptedException {
      for (int i = 0; i < n; i++) {
        take.take();
      }
    }

    @Override
    public void relay(Pipe to, int n) throws InterruptedException {
      Put next = ((BlockingPipe) to).put;
      for (int i = 0; i < n; i++) {
        next.put(take.take());
      }
    }

    @Override
    public void ping(Pipe back, int n) throws InterruptedException {
      Take answer = ((BlockingPipe) back).take;
      for (int i = 0; i < n; i++) {
        put.put(i);
        answer.take();
      }
    }
  }

  /** A kotlinx channel, each loop one coroutine (KotlinxChannels.kt) in {@code context}. */
  static final class KotlinxPipe implements Pipe {
    private final kotlinx.coroutines.channels.Channel<Integer> channel;
    private final CoroutineContext context;

    KotlinxPipe(int capacity, CoroutineContext context) {
      this.channel = ChannelKt.Channel(capacity, BufferOverflow.SUSPEND, null);
      this.context = context;
    }

    @Override
    public void sendAll(int n) {
      KotlinxChannels.sendAll(channel, n, context);
    }

    @Override
    public void receiveAll(int n) {
      KotlinxChannels.receiveAll(channel, n, context);
    }

    @Override
    public void relay(Pipe to, int n) {
      KotlinxChannels.relay(channel, ((KotlinxPipe) to).channel, n, context);
    }

    @Override
    public void ping(Pipe back, int n) {
      KotlinxChannels.ping(channel, ((KotlinxPipe) back).channel, n, context);
    }
  }

  /** One dispatcher of two daemon threads per JVM, made on first use. */
  private static final class TwoThreads {
    static final CoroutineContext DISPATCHER = KotlinxChannels.twoThreads();
  }

  // ------------------------------------------------------------------ the shapes

  /** A task that may be interrupted. */
  interface Task {
    void run() throws InterruptedException;
  }

  /** Runs {@code tasks} on {@code pool}, one thread each, and waits for them all. */
  static void runAll(ExecutorService pool, List<Task> tasks) throws Exception {
    List<Future<?>> futures = new ArrayList<>();
    for (Task t : tasks) {
      futures.add(
          pool.submit(
              () -> {
                t.run();
                return null;
              }));
    }
    for (Future<?> f : futures) {
      f.get(5, TimeUnit.MINUTES); // a hang guard only
    }
  }

  static void pingPong(Pipe there, Pipe back, ExecutorService pool) throws Exception {
    runAll(pool, List.of(() -> there.ping(back, BATCH), () -> there.relay(back, BATCH)));
  }

  static void transfer(Pipe pipe, int pairs, ExecutorService pool) throws Exception {
    List<Task> tasks = new ArrayList<>();
    int each = BATCH / pairs;
    for (int p = 0; p < pairs; p++) {
      tasks.add(() -> pipe.sendAll(each));
      tasks.add(() -> pipe.receiveAll(each));
    }
    runAll(pool, tasks);
  }

  /** {@link #BATCH} hops: {@code BATCH / pipes.length} values through every pipe. */
  static void chain(Pipe[] pipes, ExecutorService pool) throws Exception {
    int values = BATCH / pipes.length;
    List<Task> tasks = new ArrayList<>();
    tasks.add(() -> pipes[0].sendAll(values));
    for (int k = 1; k < pipes.length; k++) {
      Pipe from = pipes[k - 1];
      Pipe to = pipes[k];
      tasks.add(() -> from.relay(to, values));
    }
    tasks.add(() -> pipes[pipes.length - 1].receiveAll(values));
    runAll(pool, tasks);
  }

  // ------------------------------------------------------------------ the benchmarks

  /** Platform threads started once per trial; each invocation gives them one batch. */
  @State(Scope.Benchmark)
  public static class Workers {
    ExecutorService pool;

    @Setup(Level.Trial)
    public void start() {
      pool = Executors.newCachedThreadPool();
    }

    @TearDown(Level.Trial)
    public void stop() {
      pool.shutdownNow();
    }
  }

  /**
   * The pipes of a trial of each shape, and its parameters but the contenders: each benchmark class
   * names its own in a subclass ({@code impl}), which makes the pipes.
   */
  @State(Scope.Benchmark)
  public abstract static class PingPongTrial {
    Pipe there;
    Pipe back;

    abstract Pipe create(int capacity);

    @Setup(Level.Trial)
    public void setUp() {
      there = create(0);
      back = create(0);
    }
  }

  /** See {@link PingPongTrial}. */
  @State(Scope.Benchmark)
  public abstract static class TransferTrial {
    @Param({"16", "100"})
    public int capacity = 16;

    @Param({"1", "4"})
    public int pairs = 1;

    Pipe pipe;

    abstract Pipe create(int capacity);

    @Setup(Level.Trial)
    public void setUp() {
      pipe = create(capacity);
    }
  }

  /** See {@link PingPongTrial}. */
  @State(Scope.Benchmark)
  public abstract static class ChainTrial {
    @Param({"0", "16"})
    public int capacity = 0;

    Pipe[] pipes;

    abstract Pipe create(int capacity);

    @Setup(Level.Trial)
    public void setUp() {
      pipes = new Pipe[CHAIN];
      for (int k = 0; k < CHAIN; k++) {
        pipes[k] = create(capacity);
      }
    }
  }

  @State(Scope.Benchmark)
  public static class PingPong extends PingPongTrial {
    @Param({"jeton", "sync", "kotlinx", "kotlinx-2threads"})
    public String impl = "jeton";

    @Override
    Pipe create(int capacity) {
      return Pipe.create(impl, capacity);
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void pingPong(PingPong s, Workers w) throws Exception {
    pingPong(s.there, s.back, w.pool);
  }

  @State(Scope.Benchmark)
  public static class Transfer extends TransferTrial {
    @Param({"jeton", "abq", "lbq", "kotlinx", "kotlinx-2threads"})
    public String impl = "jeton";

    @Override
    Pipe create(int capacity) {
      return Pipe.create(impl, capacity);
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void transfer(Transfer s, Workers w) throws Exception {
    transfer(s.pipe, s.pairs, w.pool);
  }

  @State(Scope.Benchmark)
  public static class Chain extends ChainTrial {
    @Param({"jeton", "juc", "kotlinx", "kotlinx-2threads"})
    public String impl = "jeton";

    @Override
    Pipe create(int capacity) {
      return Pipe.create(impl, capacity);
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void chain(Chain s, Workers w) throws Exception {
    chain(s.pipes, w.pool);
  }
}
