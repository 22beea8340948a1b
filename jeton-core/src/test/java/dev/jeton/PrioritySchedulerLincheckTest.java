package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * A {@link PriorityScheduler} of limit 2, under a semaphore the test can inspect, whose async tasks
 * are submitted with priorities, completed, cancelled and shut down from several threads in every
 * interleaving the model checker tries. Linearizability is checked on what is linearizable (see
 * {@link #unfinished()}); and after each run, the state must be one that no sequence of operations
 * could leave stuck or leaky: never more than the limit ran at once, every permit is either free or
 * held by a running task, and a task is queued only while every slot is taken and the scheduler has
 * its one request waiting at the semaphore.
 */
@Param(name = "priority", gen = IntGen.class, conf = "0:2")
@Param(name = "task", gen = IntGen.class, conf = "0:4")
@Param(name = "later", gen = IntGen.class, conf = "2:4") // a task submitted by an operation
public class PrioritySchedulerLincheckTest {
  private static final int LIMIT = 2;
  private static final int TASKS = 8;

  private final Semaphore semaphore = Semaphore.create(LIMIT);
  private final PriorityScheduler scheduler =
      PriorityScheduler.builder().semaphore(semaphore).build();
  private final AtomicInteger submitted = new AtomicInteger();
  private final AtomicReferenceArray<CompletableFuture<Integer>> futures =
      new AtomicReferenceArray<>(TASKS);
  private final CompletableFuture<?>[] stages = new CompletableFuture<?>[TASKS];
  private final AtomicIntegerArray started = new AtomicIntegerArray(TASKS);
  private final AtomicInteger inFlight = new AtomicInteger();
  private volatile boolean tooMany;

  public PrioritySchedulerLincheckTest() {
    for (int i = 0; i < TASKS; i++) {
      stages[i] = new CompletableFuture<Integer>();
    }
    // Tasks 0 and 1 take both slots, so the scenarios start where queueing, withdrawal and
    // hand-over happen, rather than spend their few operations getting there.
    submit(0);
    submit(0);
  }

  @SuppressWarnings("unchecked")
  private CompletableFuture<Integer> stage(int task) {
    return (CompletableFuture<Integer>) stages[task];
  }

  /**
   * Submits the next task; its index, or -1 if refused after shutdown. Submissions are taken one at
   * a time, so that index order is submission order, as when run alone.
   */
  @Operation
  public synchronized int submit(@Param(name = "priority") int priority) {
    int task = submitted.getAndIncrement();
    try {
      futures.set(
          task,
          scheduler.submitAsync(
              priority,
              () -> {
                started.set(task, 1);
                if (inFlight.incrementAndGet() > LIMIT) {
                  tooMany = true;
                }
                // in flight until the test completes its stage; counted down before the slot frees
                return stage(task)
                    .thenApply(
                        v -> {
                          inFlight.decrementAndGet();
                          return v;
                        });
              }));
      return task;
    } catch (RejectedExecutionException shutDown) {
      return -1;
    }
  }

  /**
   * Completes a started task's stage. A stage completed before its task starts would make the task
   * finish inside whichever operation starts it, and the intermediate "running" that a concurrent
   * count can see in between has no sequential equivalent: a test artifact.
   */
  @Operation
  public void complete(@Param(name = "task") int task) {
    if (started.get(task) != 0) {
      stage(task).complete(task);
    }
  }

  @Operation
  public boolean cancel(@Param(name = "later") int task) {
    CompletableFuture<Integer> f = futures.get(task);
    return f != null && f.cancel(false);
  }

  // shutdownNow's count, queued() and running() alone are not linearizable: a task passes
  // through the queue (and a freed permit through the semaphore) before it starts, outside the
  // scheduler's lock, so a concurrent shutdownNow can cancel a task that, run alone, would have
  // started at once. Their sum, the tasks accepted and not yet finished, is.
  @Operation
  public void shutdownNow() {
    scheduler.shutdownNow();
  }

  @Operation
  public int unfinished() {
    return scheduler.unfinished();
  }

  @Validate
  public void check() {
    if (tooMany) {
      throw new IllegalStateException("more than " + LIMIT + " tasks ran at once");
    }
    int queued = scheduler.queued();
    int running = scheduler.running();
    if (semaphore.available() + running != LIMIT) {
      throw new IllegalStateException(
          "permits lost or double-counted: "
              + semaphore.available()
              + " free, "
              + running
              + " running, "
              + scheduler);
    }
    if (queued > 0 && (running != LIMIT || semaphore.queueLength() != 1)) {
      throw new IllegalStateException(
          "a task is queued but no slot is awaited: "
              + scheduler
              + ", semaphore queue "
              + semaphore.queueLength());
    }
    if (queued == 0 && semaphore.queueLength() != 0) {
      throw new IllegalStateException("nothing queued but the semaphore is still asked");
    }
    if (scheduler.isShutdown() && queued == 0 && running == 0 && !scheduler.isTerminated()) {
      throw new IllegalStateException("shut down and idle but not terminated");
    }
    for (int i = 0; i < TASKS; i++) {
      CompletableFuture<Integer> f = futures.get(i);
      if (f != null && stage(i).isDone() && !f.isDone() && queued == 0 && running == 0) {
        throw new IllegalStateException("task " + i + " finished but its future did not");
      }
    }
  }

  @LincheckRun
  void modelCheck() {
    new ModelCheckingOptions()
        .iterations(30)
        .invocationsPerIteration(50)
        .threads(3)
        .actorsPerThread(2)
        .check(PrioritySchedulerLincheckTest.class);
  }
}
