package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * A run of {@link Parallel} (limit 2, four items) whose items are completed, failed, and the run
 * cancelled, from several threads in every interleaving the model checker tries: never more than
 * two items in flight; a failed or finished run has nothing left in flight; a run that succeeded
 * has every result in order; and a run whose items all succeeded is done.
 */
@Param(name = "item", gen = IntGen.class, conf = "0:3")
public class ParallelLincheckTest {
  private static final int ITEMS = 4;

  @SuppressWarnings("unchecked")
  private final CompletableFuture<Integer>[] items = new CompletableFuture[ITEMS];

  private final AtomicInteger started = new AtomicInteger();
  private volatile boolean tooMany;
  private final CompletableFuture<List<Integer>> run;

  public ParallelLincheckTest() {
    for (int i = 0; i < ITEMS; i++) {
      items[i] = new CompletableFuture<>();
    }
    run =
        Parallel.limit(2)
            .mapAsync(
                List.of(0, 1, 2, 3),
                i -> {
                  if (inFlight() >= 2) {
                    tooMany = true;
                  }
                  started.incrementAndGet();
                  return items[i];
                });
  }

  private int inFlight() {
    int n = 0;
    for (int i = 0; i < started.get(); i++) {
      if (!items[i].isDone()) {
        n++;
      }
    }
    return n;
  }

  @Operation
  public void complete(@Param(name = "item") int item) {
    items[item].complete(item);
  }

  @Operation
  public void fail(@Param(name = "item") int item) {
    items[item].completeExceptionally(new IllegalStateException("item " + item));
  }

  @Operation
  public void cancelRun() {
    run.cancel(false);
  }

  @Validate
  public void check() {
    if (tooMany) {
      throw new IllegalStateException("more than 2 items in flight");
    }
    if (run.isDone() && !run.isCancelled() && inFlight() != 0) {
      throw new IllegalStateException("the run completed with items in flight");
    }
    if (run.isDone()
        && !run.isCompletedExceptionally()
        && !run.join().equals(List.of(0, 1, 2, 3))) {
      throw new IllegalStateException("results out of order: " + run.join());
    }
    boolean allSucceeded = true;
    for (CompletableFuture<Integer> item : items) {
      allSucceeded &= item.isDone() && !item.isCompletedExceptionally();
    }
    if (allSucceeded && !run.isDone()) {
      throw new IllegalStateException("every item succeeded but the run is not done");
    }
  }

  @LincheckRun
  void modelCheck() {
    new ModelCheckingOptions()
        .iterations(30)
        .invocationsPerIteration(500)
        .threads(3)
        .actorsPerThread(2)
        .check(ParallelLincheckTest.class);
  }
}
