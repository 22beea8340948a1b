package dev.jeton;

import dev.jeton.Barrier.Arrival;
import dev.jeton.contract.LincheckRun;
import dev.jeton.internal.engine.WaitNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jspecify.annotations.Nullable;

/**
 * A barrier of two parties under arrivals, cancellations, registrations, deregistrations and
 * breaks: the results are those of some sequential order ({@link Spec}), and afterwards every
 * generation that passed released distinct indices from 0 and ran the action once, and exactly the
 * futures still pending are the parties still counted as arrived.
 *
 * <p>Each thread cancels only its latest arrival, in one step: cancelling several would not be one
 * atomic operation, since a generation can trip between two cancels.
 */
public class FifoBarrierLincheckTest {
  private static final int THREADS = 3;

  private final AtomicInteger actions = new AtomicInteger();
  private final Barrier barrier =
      Barrier.builder().parties(2).action(actions::incrementAndGet).build();
  private final Queue<CompletableFuture<Arrival>> futures = new ConcurrentLinkedQueue<>();

  /** Each thread's latest arrival; Lincheck numbers the init part 0 and the post part THREADS+1. */
  @SuppressWarnings("unchecked")
  private final @Nullable CompletableFuture<Arrival>[] latest = new CompletableFuture[THREADS + 2];

  /** Arrives; 0, or -1 if the barrier had no parties. */
  @Operation
  public int awaitAsync(@Param(gen = ThreadIdGen.class) int thread) {
    try {
      CompletableFuture<Arrival> f = barrier.awaitAsync();
      futures.add(f);
      latest[thread] = f;
      return 0;
    } catch (IllegalStateException noParties) {
      return -1;
    }
  }

  /**
   * Cancels this thread's latest arrival, once: true if that took it back. {@code cancel} alone
   * does not say: it answers true too for a future cancelled already, and for one cancelled after
   * its generation tripped but before it was released (while the action runs), whose arrival
   * counted. So the node's status says.
   */
  @Operation
  public boolean cancelLatest(@Param(gen = ThreadIdGen.class) int thread) {
    CompletableFuture<Arrival> f = latest[thread];
    latest[thread] = null;
    return f != null
        && f.cancel(false)
        && ((WaitNode.NodeFuture<?>) f).node().status() == WaitNode.CANCELLED;
  }

  @Operation
  public long register() {
    return barrier.register();
  }

  /** The generation arrived in, or -1 if the barrier had no parties. */
  @Operation
  public long arriveAndDeregister() {
    try {
      return barrier.arriveAndDeregister();
    } catch (IllegalStateException noParties) {
      return -1;
    }
  }

  @Operation
  public void breakBarrier() {
    barrier.breakBarrier(new IllegalStateException("broken by the test"));
  }

  @Operation
  public int arrived() {
    return barrier.arrived();
  }

  @Operation
  public long generation() {
    return barrier.generation();
  }

  @Validate
  public void everyGenerationPassedWhole() {
    Map<Long, TreeSet<Integer>> indices = new HashMap<>();
    int pending = 0;
    for (CompletableFuture<Arrival> f : futures) {
      if (!f.isDone()) {
        pending++;
      } else if (!f.isCompletedExceptionally()) {
        Arrival a = f.join();
        if (!indices.computeIfAbsent(a.generation(), g -> new TreeSet<>()).add(a.index())) {
          throw new IllegalStateException("index given twice: " + a);
        }
      }
    }
    for (Map.Entry<Long, TreeSet<Integer>> e : indices.entrySet()) {
      TreeSet<Integer> got = e.getValue();
      if (got.first() != 0 || got.last() != got.size() - 1) {
        throw new IllegalStateException("generation " + e.getKey() + " released " + got);
      }
    }
    if (actions.get() != indices.size()) {
      throw new IllegalStateException(
          actions.get() + " actions for " + indices.size() + " generations passed");
    }
    if (pending != barrier.arrived()) {
      throw new IllegalStateException(pending + " futures pending, " + barrier);
    }
  }

  /**
   * The sequential specification: parties, generation, and the queue of arrivals by id; a trip or a
   * break empties the queue, a cancel takes the thread's latest arrival out if it is still there.
   */
  public static final class Spec {
    private int parties = 2;
    private long generation;
    private final List<Integer> queue = new ArrayList<>();
    private final int[] latest = new int[THREADS + 2];
    private int nextId = 1; // 0 in `latest`: no arrival yet

    public int awaitAsync(int thread) {
      if (parties == 0) {
        return -1;
      }
      int id = nextId++;
      latest[thread] = id;
      if (queue.size() + 1 == parties) {
        trip();
      } else {
        queue.add(id);
      }
      return 0;
    }

    public boolean cancelLatest(int thread) {
      int id = latest[thread];
      latest[thread] = 0;
      return queue.remove(Integer.valueOf(id));
    }

    public long register() {
      parties++;
      return generation;
    }

    public long arriveAndDeregister() {
      if (parties == 0) {
        return -1;
      }
      long arrivedIn = generation;
      if (!queue.isEmpty() && queue.size() + 1 == parties) {
        trip();
      }
      parties--;
      return arrivedIn;
    }

    public void breakBarrier() {
      trip();
    }

    public int arrived() {
      return queue.size();
    }

    public long generation() {
      return generation;
    }

    private void trip() {
      queue.clear();
      generation++;
    }
  }

  @LincheckRun
  void modelCheck() {
    // 4,500 interleavings: 70 s on a 2-core machine at load 11, so well under 30 s idle.
    new ModelCheckingOptions()
        .iterations(15)
        .invocationsPerIteration(300)
        .threads(THREADS)
        .actorsPerThread(2)
        .sequentialSpecification(Spec.class)
        .check(FifoBarrierLincheckTest.class);
  }
}
