package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The scope's state machine, model-checked: forks (blocking, asynchronous, failing), completions,
 * cancels of the scope and of one fork, and teardown registrations racing; its cancellation
 * linearizable against a sequential model, and always settling: once closed, no task is left
 * running and every hook accepted has run exactly once, each thread's hooks in reverse order.
 */
public class ScopeLincheckTest {
  /**
   * Interleavings per scenario: 200 of each of 10, half the locks' 400, to keep CI inside its
   * budget (400 took 160 s for the two checks on the idle CI machine).
   */
  private static final int INTERLEAVINGS = 200;

  @LincheckRun
  void linearizable_againstTheSequentialModel() {
    TestThreads.checkLinearizable(Linearizability.class, Model.class, INTERLEAVINGS);
  }

  @LincheckRun
  void racingForksCancelsAndTeardowns_settleWhenClosed() {
    TestThreads.checkSettles(Races.class, INTERLEAVINGS);
  }

  /** The stage of a task that runs until the test completes it. */
  static CompletableFuture<Integer> pendingStage(Queue<CompletableFuture<Integer>> stages) {
    CompletableFuture<Integer> stage = new CompletableFuture<>();
    stages.add(stage);
    return stage;
  }

  /** Ends the oldest task still running, if any. */
  static void completeOldest(Queue<CompletableFuture<Integer>> stages) {
    CompletableFuture<Integer> stage = stages.poll();
    if (stage != null) {
      stage.complete(1);
    }
  }

  /**
   * Asynchronous tasks whose stages the test completes, so that running tasks are state. What a
   * completion returns is not observed: a cancel changes the state at once but reaches the tasks
   * after, so a completion racing with it may still win, which no sequential model can say; the
   * Races check covers what happens to them.
   */
  public static class Linearizability {
    private final Scope scope = Scope.open();
    private final Queue<CompletableFuture<Integer>> stages = new ConcurrentLinkedQueue<>();

    /** True if the task was run, false if the scope refused it. */
    @Operation
    public boolean forkPending() {
      boolean[] ran = {false};
      CompletableFuture<Integer> unused =
          scope.forkAsync(
              () -> {
                ran[0] = true;
                return pendingStage(stages);
              });
      return ran[0];
    }

    @Operation
    public void completeOldest() {
      ScopeLincheckTest.completeOldest(stages);
    }

    @Operation
    public void forkFailing() {
      CompletableFuture<Integer> unused =
          scope.forkAsync(() -> CompletableFuture.failedFuture(new IllegalStateException()));
    }

    @Operation
    public boolean cancel() {
      return scope.cancel();
    }

    @Operation
    public boolean isCancelled() {
      return scope.isCancelled();
    }

    @Operation
    public int failures() {
      return scope.failures().size();
    }
  }

  /** Open until cancelled, by cancel() or by the first failure, which it records. */
  public static class Model {
    private boolean cancelled;
    private int failures;

    public boolean forkPending() {
      return !cancelled;
    }

    public void completeOldest() {}

    public void forkFailing() {
      if (!cancelled) {
        cancelled = true;
        failures = 1;
      }
    }

    public boolean cancel() {
      boolean was = cancelled;
      cancelled = true;
      return !was;
    }

    public boolean isCancelled() {
      return cancelled;
    }

    public int failures() {
      return failures;
    }
  }

  /** Everything racing; checked once the scope is closed. */
  public static class Races {
    private final Scope scope = Scope.builder().executor(Runnable::run).open();
    private final Queue<CompletableFuture<Integer>> stages = new ConcurrentLinkedQueue<>();
    private final Queue<CompletableFuture<Integer>> forks = new ConcurrentLinkedQueue<>();
    private final Queue<int[]> hooksRun = new ConcurrentLinkedQueue<>();
    private final Queue<int[]> hooksAccepted = new ConcurrentLinkedQueue<>();
    private final int[] registered = new int[TestThreads.LINCHECK_THREADS + 2];

    @Operation
    public void forkPending() {
      forks.add(scope.forkAsync(() -> pendingStage(stages)));
    }

    @Operation
    public void forkBlocking() {
      forks.add(scope.fork(() -> 1));
    }

    @Operation
    public void forkFailing() {
      forks.add(scope.forkAsync(() -> CompletableFuture.failedFuture(new IllegalStateException())));
    }

    @Operation
    public void completeOne() {
      ScopeLincheckTest.completeOldest(stages);
    }

    @Operation
    public void cancelAFork() {
      CompletableFuture<Integer> fork = forks.peek();
      if (fork != null) {
        fork.cancel(true);
      }
    }

    @Operation
    public void cancel() {
      scope.cancel();
    }

    @Operation
    public void teardown(@Param(gen = ThreadIdGen.class) int thread) {
      int[] hook = {thread, registered[thread]++};
      try {
        scope.teardown(() -> hooksRun.add(hook));
        hooksAccepted.add(hook);
      } catch (IllegalStateException ended) {
        // refused: never to run
      }
    }

    @Validate
    public void closed_nothingRuns_andEveryAcceptedHookRanOnce_inReverse() {
      scope.close();
      for (CompletableFuture<Integer> fork : forks) {
        if (!fork.isDone()) {
          throw new IllegalStateException("a task outlived its scope: " + scope);
        }
      }
      for (CompletableFuture<Integer> stage : stages) {
        if (!stage.isDone()) {
          throw new IllegalStateException("a stage outlived its scope: " + scope);
        }
      }
      List<int[]> run = new ArrayList<>(hooksRun);
      if (run.size() != hooksAccepted.size() || !run.containsAll(hooksAccepted)) {
        throw new IllegalStateException(
            run.size() + " hooks ran, " + hooksAccepted.size() + " were accepted");
      }
      int[] last = new int[registered.length];
      java.util.Arrays.fill(last, Integer.MAX_VALUE);
      for (int[] hook : run) {
        if (hook[1] >= last[hook[0]]) {
          throw new IllegalStateException("hooks of thread " + hook[0] + " not in reverse order");
        }
        last[hook[0]] = hook[1];
      }
    }
  }
}
