package dev.jeton.bench;

import dev.jeton.Barrier;
import dev.jeton.bench.LockWaiterMemory.AsyncCase;
import dev.jeton.bench.LockWaiterMemory.BlockingCase;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Phaser;

/**
 * Bytes of heap a barrier retains per waiting party: {@link LockWaiterMemory}'s method (that is,
 * {@link QueuedWaiterMemory}'s) applied to barriers. Not a JMH benchmark: run it from the
 * benchmarks jar,
 *
 * <pre>
 * java -Djdk.attach.allowAttachSelf=true -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.BarrierWaiterMemory
 * </pre>
 *
 * <p>In every case the barrier has one party more than the waiters, which all arrive and wait; this
 * thread then makes the last arrival, which lets them through. Asynchronous waiters ({@value
 * QueuedWaiterMemory#ASYNC_WAITERS}): Jeton's {@code awaitAsync()}, measured with JOL's {@code
 * GraphLayout} over the barrier and the returned futures. Blocking waiters ({@value
 * QueuedWaiterMemory#BLOCKED_THREADS} parked platform threads): Jeton's {@code await()}, {@code
 * CyclicBarrier.await()} and {@code Phaser.arriveAndAwaitAdvance()}, measured by the walk from the
 * barrier with {@code Thread} objects left out. See {@link QueuedWaiterMemory} for why.
 */
public final class BarrierWaiterMemory {
  private static final int ASYNC_WAITERS = QueuedWaiterMemory.ASYNC_WAITERS;
  private static final int BLOCKED_THREADS = QueuedWaiterMemory.BLOCKED_THREADS;

  private BarrierWaiterMemory() {}

  public static void main(String[] args) throws Exception {
    long plainFuture = QueuedWaiterMemory.start(BarrierWaiterMemory.class);

    List<String[]> rows = new ArrayList<>();
    List<String> breakdowns = new ArrayList<>();
    rows.add(LockWaiterMemory.async(jetonAsync(), plainFuture, breakdowns));
    for (BlockingCase c : blockingCases()) {
      rows.add(LockWaiterMemory.blocking(c, breakdowns));
    }
    LockWaiterMemory.printWaiters("barrier", plainFuture, rows, breakdowns);
  }

  private static AsyncCase jetonAsync() {
    Barrier barrier = Barrier.create(ASYNC_WAITERS + 1);
    return new AsyncCase(
        "jeton",
        barrier,
        barrier::awaitAsync,
        () -> {
          var unused = barrier.awaitAsync().join(); // the last arrival: completes every future
        },
        grant -> {
          // an Arrival, with nothing to give back
          var unused = (Barrier.Arrival) LockWaiterMemory.requireGrant(grant);
        });
  }

  private static List<BlockingCase> blockingCases() {
    List<BlockingCase> cases = new ArrayList<>();

    Barrier jeton = Barrier.create(BLOCKED_THREADS + 1);
    cases.add(
        new BlockingCase(
            "jeton",
            jeton,
            () -> {
              var unused = jeton.await();
            },
            jeton::arrived,
            () -> {
              var unused = jeton.arriveAndDeregister(); // the last arrival: trips the generation
            }));

    CyclicBarrier cyclic = new CyclicBarrier(BLOCKED_THREADS + 1);
    cases.add(
        new BlockingCase(
            "cyclic-barrier",
            cyclic,
            () -> {
              try {
                cyclic.await();
              } catch (BrokenBarrierException e) {
                throw new IllegalStateException("the CyclicBarrier broke", e);
              }
            },
            cyclic::getNumberWaiting,
            () -> {
              try {
                cyclic.await(); // the last arrival: returns at once
              } catch (InterruptedException | BrokenBarrierException e) {
                throw new IllegalStateException("the last arrival failed", e);
              }
            }));

    Phaser phaser = new Phaser(BLOCKED_THREADS + 1);
    cases.add(
        new BlockingCase(
            "phaser",
            phaser,
            () -> {
              var unused = phaser.arriveAndAwaitAdvance();
            },
            phaser::getArrivedParties,
            () -> {
              var unused = phaser.arrive(); // the last arrival: advances the phase
            }));
    return cases;
  }
}
