package dev.jeton;

import dev.jeton.ReadWriteLock.WriteGuard;
import dev.jeton.contract.LincheckRun;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The read-write lock, model-checked in both modes: linearizable against a sequential model of a
 * task-fair FIFO read-write lock, and never leaking or stranding the lock whatever gives up,
 * downgrades or unlocks while it is granted.
 *
 * <p>One model serves both modes: the asynchronous requests of the first test are handed the lock
 * in both (they have no thread to wake), and a {@code tryRead} never gets in past a queued writer
 * that waits for readers to leave, so barging shows only with blocking requests, which the second
 * test runs with every way of giving up, waking and barging there too.
 */
public class FifoReadWriteLockLincheckTest {
  /** What {@code unlock} reports it let go. */
  private static final int NOTHING = 0;

  private static final int READ = 1;
  private static final int WRITE = 2;

  /**
   * Half the default per scenario, as the mutex's (FifoMutexLincheckTest): the five checks share
   * most of their paths, and together explore 1.25 times what the two checks of one mode did.
   */
  private static final int INTERLEAVINGS = 200;

  @LincheckRun
  void boundedBarging_linearizable_againstTheSequentialModel() {
    TestThreads.checkLinearizable(BargingLinearizability.class, Model.class, INTERLEAVINGS);
  }

  @LincheckRun
  void strictFifo_linearizable_againstTheSequentialModel() {
    TestThreads.checkLinearizable(StrictLinearizability.class, Model.class, INTERLEAVINGS);
  }

  @LincheckRun
  void boundedBarging_givingUp_neverLeaksOrStrandsTheLock() {
    TestThreads.checkSettles(BargingCancellation.class, INTERLEAVINGS);
  }

  @LincheckRun
  void unboundedBarging_givingUp_neverLeaksOrStrandsTheLock() {
    TestThreads.checkSettles(NeverStarvingCancellation.class, INTERLEAVINGS);
  }

  @LincheckRun
  void strictFifo_givingUp_neverLeaksOrStrandsTheLock() {
    TestThreads.checkSettles(StrictCancellation.class, INTERLEAVINGS);
  }

  /** {@link Linearizability} of the default lock, bounded barging. */
  public static class BargingLinearizability extends Linearizability {
    public BargingLinearizability() {
      super(Fairness.boundedBarging());
    }
  }

  /** {@link Linearizability} of a strict FIFO lock. */
  public static class StrictLinearizability extends Linearizability {
    public StrictLinearizability() {
      super(Fairness.strictFifo());
    }
  }

  /**
   * {@link Cancellation} of a barging lock whose bound is one nanosecond, so that a waiter that
   * looks once turns the queue to handoffs: barging and the way out of it in a few steps.
   */
  public static class BargingCancellation extends Cancellation {
    public BargingCancellation() {
      super(Fairness.boundedBarging(java.time.Duration.ofNanos(1)));
    }
  }

  /** {@link Cancellation} of a barging lock whose bound no run reaches: no handoffs to blocked. */
  public static class NeverStarvingCancellation extends Cancellation {
    public NeverStarvingCancellation() {
      super(Fairness.boundedBarging(java.time.Duration.ofHours(1)));
    }
  }

  /** {@link Cancellation} of a strict FIFO lock. */
  public static class StrictCancellation extends Cancellation {
    public StrictCancellation() {
      super(Fairness.strictFifo());
    }
  }

  /**
   * Each thread keeps the guards its {@code tryRead} and {@code tryWrite} obtained, unlocks the
   * latest per {@code unlock}, and downgrades its latest if it is a write lock. Queued asynchronous
   * requests stay queued and, once granted, keep their lock for good.
   */
  public abstract static class Linearizability {
    private final ReadWriteLock rw;
    private final TestThreads.Held held = new TestThreads.Held();

    Linearizability(Fairness fairness) {
      this.rw = ReadWriteLock.builder().fairness(fairness).build();
    }

    @Operation
    public boolean tryRead(@Param(gen = ThreadIdGen.class) int thread) {
      return held.keep(thread, rw.tryRead());
    }

    @Operation
    public boolean tryWrite(@Param(gen = ThreadIdGen.class) int thread) {
      return held.keep(thread, rw.tryWrite().map(Guard.class::cast));
    }

    @Operation
    public int unlock(@Param(gen = ThreadIdGen.class) int thread) {
      Guard guard = held.take(thread);
      if (guard == null) {
        return NOTHING;
      }
      guard.unlock();
      return guard instanceof WriteGuard ? WRITE : READ;
    }

    @Operation
    public boolean downgrade(@Param(gen = ThreadIdGen.class) int thread) {
      Guard guard = held.peek(thread);
      if (!(guard instanceof WriteGuard write)) {
        return false;
      }
      held.take(thread);
      held.keep(thread, Optional.of(write.downgrade()));
      return true;
    }

    @Operation
    public void readAsync() {
      CompletableFuture<Guard> unused = rw.readAsync();
    }

    @Operation
    public void writeAsync() {
      CompletableFuture<WriteGuard> unused = rw.writeAsync();
    }

    @Operation
    public int readers() {
      return rw.readers();
    }

    @Operation
    public boolean isWriteLocked() {
      return rw.isWriteLocked();
    }

    @Operation
    public int queueLength() {
      return rw.queueLength();
    }
  }

  /**
   * The sequential specification: readers, a writer flag, the queue of kept asynchronous requests
   * (true for a writer), and the guards per thread. The head of the queue is granted whenever it
   * fits, and a writer at the head holds back everyone behind it.
   */
  public static class Model {
    private int readers;
    private boolean writer;
    private final ArrayDeque<Boolean> queue = new ArrayDeque<>();
    private final ArrayDeque<Integer>[] held = TestThreads.Held.slots();

    public boolean tryRead(int thread) {
      if (writer || !queue.isEmpty()) {
        return false;
      }
      readers++;
      held[thread].push(READ);
      return true;
    }

    public boolean tryWrite(int thread) {
      if (writer || readers > 0 || !queue.isEmpty()) {
        return false;
      }
      writer = true;
      held[thread].push(WRITE);
      return true;
    }

    public int unlock(int thread) {
      Integer kind = held[thread].poll();
      if (kind == null) {
        return NOTHING;
      }
      if (kind == WRITE) {
        writer = false;
      } else {
        readers--;
      }
      grantFromTheHead();
      return kind;
    }

    public boolean downgrade(int thread) {
      Integer kind = held[thread].peek();
      if (kind == null || kind != WRITE) {
        return false;
      }
      held[thread].pop();
      held[thread].push(READ);
      writer = false;
      readers++;
      grantFromTheHead();
      return true;
    }

    public void readAsync() {
      queue.add(false);
      grantFromTheHead();
    }

    public void writeAsync() {
      queue.add(true);
      grantFromTheHead();
    }

    public int readers() {
      return readers;
    }

    public boolean isWriteLocked() {
      return writer;
    }

    public int queueLength() {
      return queue.size();
    }

    private void grantFromTheHead() {
      while (!queue.isEmpty()) {
        boolean wantsWrite = queue.peek();
        if (writer || (wantsWrite && readers > 0)) {
          return;
        }
        queue.poll();
        if (wantsWrite) {
          writer = true; // kept for good
        } else {
          readers++;
        }
      }
    }
  }

  /**
   * Requests of both kinds that block, give up, downgrade, or unlock as soon as they are granted:
   * whatever the interleaving, the lock ends free with no one queued.
   */
  public abstract static class Cancellation {
    private final ReadWriteLock rw;

    Cancellation(Fairness fairness) {
      this.rw = ReadWriteLock.builder().fairness(fairness).build();
    }

    @Operation
    public void readAndUnlock() throws InterruptedException {
      rw.read().unlock();
    }

    @Operation
    public void writeDowngradeAndUnlock() throws InterruptedException {
      rw.write().downgrade().unlock();
    }

    @Operation
    public void readAsyncThenCancel() {
      CompletableFuture<Guard> future = rw.readAsync();
      if (!future.cancel(false)) {
        future.join().unlock(); // granted before the cancel: ours to unlock
      }
    }

    @Operation
    public void writeAsyncThenCancel() {
      CompletableFuture<WriteGuard> future = rw.writeAsync();
      if (!future.cancel(false)) {
        future.join().unlock();
      }
    }

    @Operation
    public void writeAsyncAndUnlockWhenGranted() {
      CompletableFuture<Void> unused = rw.writeAsync().thenAccept(Guard::unlock);
    }

    @Operation
    public void tryWriteAndUnlock() {
      rw.tryWrite().ifPresent(Guard::unlock);
    }

    @Validate
    public void theLockIsFreeAndNoOneQueued() {
      if (rw.readers() != 0 || rw.isWriteLocked() || rw.queueLength() != 0) {
        throw new IllegalStateException("leaked or stranded: " + rw);
      }
    }
  }
}
