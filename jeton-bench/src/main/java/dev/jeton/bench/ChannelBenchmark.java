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
 * Values handed between threads through Jeton's {@code Channel} (blocking {@code send} and
 * {@code receive}) beside {@code ArrayBlockingQueue}, {@code LinkedBlockingQueue} and {@code
 * SynchronousQueue} ({@code put} and {@code take}). Goal: Jeton ahead of ArrayBlockingQueue and
 * SynchronousQueue in every row.
 *
 * <ul>
 *   <li>{@code pingPong}: two threads, two rendezvous channels (or SynchronousQueues): one sends
 *       a value, the other receives it and sends it back; the time is per round trip.
 *   <li>{@code transfer}: {@code pairs} producers and as many consumers through one buffered
 *       channel (or queue) of {@code capacity}; the time is per value.
 * </ul>
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
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class ChannelBenchmark {
  static final int BATCH = 20_000;

  /** put and take: one shape over a channel and the queues. */
  static final class Pipe {
    interface Put {
      void put(Integer v) throws InterruptedException;
    }

    interface Take {
      Integer take() throws InterruptedException;
    }

    private final Put put;
    private final Take take;

    private Pipe(Put put, Take take) {
      this.put = put;
      this.take = take;
    }

    void put(Integer v) throws InterruptedException {
      put.put(v);
    }

    Integer take() throws InterruptedException {
      return take.take();
    }

    static Pipe create(String impl, int capacity) {
      switch (impl) {
        case "jeton":
          Channel<Integer> ch = capacity == 0 ? Channel.rendezvous() : Channel.buffered(capacity);
          return new Pipe(ch::send, ch::receive);
        case "abq":
          return of(new ArrayBlockingQueue<>(capacity));
        case "lbq":
          return of(new LinkedBlockingQueue<>(capacity));
        case "sync":
          return of(new SynchronousQueue<>());
        default:
          throw new IllegalArgumentException("unknown impl " + impl);
      }
    }

    private static Pipe of(BlockingQueue<Integer> q) {
      return new Pipe(q::put, q::take);
    }
  }

  /** Threads started once per trial; each invocation gives them one batch. */
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

    void runAll(List<Callable> tasks) throws Exception {
      List<Future<?>> futures = new ArrayList<>();
      for (Callable t : tasks) {
        futures.add(pool.submit(() -> {
          t.call();
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get(5, TimeUnit.MINUTES); // a hang guard only
      }
    }
  }

  /** A task that may be interrupted. */
  interface Callable {
    void call() throws InterruptedException;
  }

  @State(Scope.Benchmark)
  public static class PingPong {
    @Param({"jeton", "sync"})
    public String impl = "jeton";

    Pipe there;
    Pipe back;

    @Setup(Level.Trial)
    public void setUp() {
      there = Pipe.create(impl, 0);
      back = Pipe.create(impl, 0);
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void pingPong(PingPong s, Workers w) throws Exception {
    w.runAll(
        List.of(
            () -> {
              for (int i = 0; i < BATCH; i++) {
                s.there.put(i);
                s.back.take();
              }
            },
            () -> {
              for (int i = 0; i < BATCH; i++) {
                s.back.put(s.there.take());
              }
            }));
  }

  @State(Scope.Benchmark)
  public static class Transfer {
    @Param({"jeton", "abq", "lbq"})
    public String impl = "jeton";

    @Param({"16", "100"})
    public int capacity = 16;

    @Param({"1", "4"})
    public int pairs = 1;

    Pipe pipe;

    @Setup(Level.Trial)
    public void setUp() {
      pipe = Pipe.create(impl, capacity);
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void transfer(Transfer s, Workers w) throws Exception {
    List<Callable> tasks = new ArrayList<>();
    int each = BATCH / s.pairs;
    for (int p = 0; p < s.pairs; p++) {
      tasks.add(
          () -> {
            for (int i = 0; i < each; i++) {
              s.pipe.put(i);
            }
          });
      tasks.add(
          () -> {
            for (int i = 0; i < each; i++) {
              s.pipe.take();
            }
          });
    }
    w.runAll(tasks);
  }
}
