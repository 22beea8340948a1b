package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The mutex, model-checked: linearizable against a sequential model of a FIFO lock, and never
 * leaking or stranding the lock whatever gives up while it is granted.
 */
public class FifoMutexLincheckTest {
  @LincheckRun
  void linearizable_againstTheSequentialModel() {
    TestThreads.checkLinearizable(Linearizability.class, Model.class);
  }

  @LincheckRun
  void givingUp_neverLeaksOrStrandsTheLock() {
    TestThreads.checkSettles(Cancellation.class);
  }

  /**
   * Each thread keeps the guards its {@code tryLock} obtained and unlocks them one per {@code
   * unlock}. A queued {@code lockAsync} stays queued and, once granted, keeps the lock for good, so
   * the queue is part of the state every operation sees.
   */
  public static class Linearizability {
    private final Mutex mutex = Mutex.create();
    private final TestThreads.Held held = new TestThreads.Held();

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
  public static class Cancellation {
    private final Mutex mutex = Mutex.create();

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
