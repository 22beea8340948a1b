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
 * The read-write lock, model-checked: linearizable against a sequential model of a task-fair FIFO
 * read-write lock, and never leaking or stranding the lock whatever gives up, downgrades or unlocks
 * while it is granted.
 */
public class FifoReadWriteLockLincheckTest {
  /** What {@code unlock} reports it let go. */
  private static final int NOTHING = 0;

  private static final int READ = 1;
  private static final int WRITE = 2;

  @LincheckRun
  void linearizable_againstTheSequentialModel() {
    TestThreads.checkLinearizable(Linearizability.class, Model.class);
  }

  @LincheckRun
  void givingUp_neverLeaksOrStrandsTheLock() {
    TestThreads.checkSettles(Cancellation.class);
  }

  /**
   * Each thread keeps the guards its {@code tryRead} and {@code tryWrite} obtained, unlocks the
   * latest per {@code unlock}, and downgrades its latest if it is a write lock. Queued asynchronous
   * requests stay queued and, once granted, keep their lock for good.
   */
  public static class Linearizability {
    private final ReadWriteLock rw = ReadWriteLock.create();
    private final TestThreads.Held held = new TestThreads.Held();

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
  public static class Cancellation {
    private final ReadWriteLock rw = ReadWriteLock.create();

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
