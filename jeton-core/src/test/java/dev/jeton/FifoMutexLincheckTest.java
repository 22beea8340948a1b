package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The mutex, model-checked in both modes: linearizable against a sequential model of a FIFO lock,
 * and never leaking or stranding the lock whatever gives up while it is granted.
 *
 * <p>One model serves both modes: the asynchronous requests of the first test are handed the lock
 * in both (they have no thread to wake), so barging shows only with blocking requests, which the
 * second test runs with every way of giving up, waking and barging there too.
 */
public class FifoMutexLincheckTest {
  /**
   * Half the default per scenario: the five checks below share most of their paths (the modes
   * differ only where a lock is let go while someone waits), so together they explore 2.5 times
   * what the two checks of one mode did, in 40 s rather than 80 on the 2-core CI machine.
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

  /** {@link Linearizability} of the default mutex, bounded barging. */
  public static class BargingLinearizability extends Linearizability {
    public BargingLinearizability() {
      super(Fairness.boundedBarging());
    }
  }

  /** {@link Linearizability} of a strict FIFO mutex. */
  public static class StrictLinearizability extends Linearizability {
    public StrictLinearizability() {
      super(Fairness.strictFifo());
    }
  }

  /**
   * {@link Cancellation} of a barging mutex whose bound is one nanosecond, so that a waiter that
   * looks once turns the queue to handoffs: barging and the way out of it in a few steps.
   */
  public static class BargingCancellation extends Cancellation {
    public BargingCancellation() {
      super(Fairness.boundedBarging(java.time.Duration.ofNanos(1)));
    }
  }

  /**
   * {@link Cancellation} of a barging mutex whose bound no run reaches: every release wakes, and
   * every woken head takes the lock or parks again, without handoffs.
   */
  public static class NeverStarvingCancellation extends Cancellation {
    public NeverStarvingCancellation() {
      super(Fairness.boundedBarging(java.time.Duration.ofHours(1)));
    }
  }

  /** {@link Cancellation} of a strict FIFO mutex. */
  public static class StrictCancellation extends Cancellation {
    public StrictCancellation() {
      super(Fairness.strictFifo());
    }
  }

  /**
   * Each thread keeps the guards its {@code tryLock} obtained and unlocks them one per {@code
   * unlock}. A queued {@code lockAsync} stays queued and, once granted, keeps the lock for good, so
   * the queue is part of the state every operation sees.
   */
  public abstract static class Linearizability {
    private final Mutex mutex;
    private final TestThreads.Held held = new TestThreads.Held();

    Linearizability(Fairness fairness) {
      this.mutex = Mutex.builder().fairness(fairness).build();
    }

    @Operation
    public boolean tryLock(@Param(gen = ThreadIdGen.class) int thread) {
      return held.keep(thread, mutex.tryLock());
    }

    @Operation
    public boolean unlock(@Param(gen = ThreadIdGen.class) int thread) {
      Guard guard = held.take(thread);
      if (guard == null) {
        return false;
      }
      guard.unlock();
      return true;
    }

    @Operation
    public void lockAsync() {
      CompletableFuture<Guard> unused = mutex.lockAsync();
    }

    @Operation
    public boolean isLocked() {
      return mutex.isLocked();
    }

    @Operation
    public int queueLength() {
      return mutex.queueLength();
    }
  }

  /** The sequential specification: a flag, a count of queued requests, and guards per thread. */
  public static class Model {
    private boolean locked;
    private int queued;
    private final int[] held = new int[TestThreads.LINCHECK_THREADS + 2];

    public boolean tryLock(int thread) {
      if (locked || queued > 0) {
        return false;
      }
      locked = true;
      held[thread]++;
      return true;
    }

    public boolean unlock(int thread) {
      if (held[thread] == 0) {
        return false;
      }
      held[thread]--;
      if (queued > 0) {
        queued--; // handed to the head of the queue, which keeps it
      } else {
        locked = false;
      }
      return true;
    }

    public void lockAsync() {
      if (locked || queued > 0) {
        queued++;
      } else {
        locked = true;
      }
    }

    public boolean isLocked() {
      return locked;
    }

    public int queueLength() {
      return queued;
    }
  }

  /**
   * Requests that block, give up, or unlock as soon as they are granted: whatever the interleaving,
   * the mutex ends free with no one queued.
   */
  public abstract static class Cancellation {
    private final Mutex mutex;

    Cancellation(Fairness fairness) {
      this.mutex = Mutex.builder().fairness(fairness).build();
    }

    @Operation
    public void tryLockAndUnlock() {
      mutex.tryLock().ifPresent(Guard::unlock);
    }

    @Operation
    public void lockAndUnlock() throws InterruptedException {
      mutex.lock().unlock();
    }

    @Operation
    public void lockAsyncThenCancel() {
      CompletableFuture<Guard> future = mutex.lockAsync();
      if (!future.cancel(false)) {
        future.join().unlock(); // granted before the cancel: ours to unlock
      }
    }

    @Operation
    public void lockAsyncAndUnlockWhenGranted() {
      CompletableFuture<Void> unused = mutex.lockAsync().thenAccept(Guard::unlock);
    }

    @Validate
    public void theLockIsFreeAndNoOneQueued() {
      if (mutex.isLocked() || mutex.queueLength() != 0) {
        throw new IllegalStateException("leaked or stranded: " + mutex);
      }
    }
  }
}
