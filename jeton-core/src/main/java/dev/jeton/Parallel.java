package dev.jeton;

import dev.jeton.internal.Arguments;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Runs a function over many items, at most a limit at a time: "fetch these 10,000 URLs, 8 at a
 * time".
 *
 * <pre>{@code
 * CompletableFuture<List<Page>> pages = Parallel.limit(8).mapAsync(urls, http::fetchAsync);
 * CompletableFuture<List<Report>> reports =
 *     Parallel.limit(4).map(files, virtualThreads, Report::parse); // blocking function
 * List<String> texts = Parallel.limit(4).mapAll(paths, Files::readString); // blocks; IOException
 * }</pre>
 *
 * <p>A {@code Parallel} is an immutable set of options; each method that takes items starts a run
 * and returns its future at once, except {@code mapAll}, which waits for the run and returns its
 * results or throws its failure. In a run:
 *
 * <ul>
 *   <li><b>At most {@code limit} items are in flight</b> (with {@link #weighted}, at most {@code
 *       limit} permits' worth), and items are pulled from the source lazily: an item is taken only
 *       when it can start (weighted: when the previous item has its permits), so the source may be
 *       unbounded and the run holds O(limit) items, besides the results of {@code map}.
 *   <li><b>Results are in input order</b>, whatever order the items finish in.
 *   <li><b>Fail fast</b> (the default): the first failure stops pulling items, cancels the items in
 *       flight (an async item's future is cancelled; a blocking item's thread is interrupted),
 *       waits until every one of them has settled, and then fails the run with that first failure,
 *       later failures attached as {@linkplain Throwable#getSuppressed() suppressed}. With {@link
 *       #collectingAllErrors()} every item runs, and the run fails at the end with the first
 *       failure and all the others suppressed.
 *   <li><b>Cancelling the returned future</b> cancels the items in flight and starts no more.
 *   <li>Async functions ({@code mapAsync}, {@code forEachAsync}) are called on the thread that
 *       frees a slot (the first ones on the thread that starts the run) and must not block;
 *       blocking functions ({@code map}, {@code forEach}) run on the given executor (virtual
 *       threads are a good fit). No thread of the caller's is blocked in either case. Blocking
 *       functions may throw checked exceptions, which fail the run as they are.
 * </ul>
 *
 * <p>A source given as a {@link Stream} is closed when the run ends. A source that throws fails the
 * run like an item would.
 */
public final class Parallel {
  /** Numbers the threads {@link #mapAll(Iterable, BlockingFunction)} makes, for their names. */
  private static final AtomicInteger THREADS = new AtomicInteger();

  private final int limit;
  private final @Nullable ToIntFunction<Object> weight;
  private final boolean collectAllErrors;

  private Parallel(int limit, @Nullable ToIntFunction<Object> weight, boolean collectAllErrors) {
    this.limit = limit;
    this.weight = weight;
    this.collectAllErrors = collectAllErrors;
  }

  /**
   * Runs at most {@code limit} items at a time.
   *
   * @throws IllegalArgumentException if {@code limit} is below 1
   */
  public static Parallel limit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, was " + limit);
    }
    Arguments.checkLimit(limit);
    return new Parallel(limit, null, false);
  }

  /**
   * Gives each item the weight {@code weight} says (from 1 to the limit), and runs items while
   * their weights add up to at most the limit. Items still start in input order: a heavy item waits
   * for room and holds back the lighter ones behind it.
   *
   * <p>An item whose weight is out of range fails the run with {@link IllegalArgumentException}.
   */
  @SuppressWarnings("unchecked") // only ever applied to the run's own items
  public <T> Parallel weighted(ToIntFunction<? super T> weight) {
    Objects.requireNonNull(weight, "weight");
    return new Parallel(limit, (ToIntFunction<Object>) weight, collectAllErrors);
  }

  /** Runs every item even after failures, and reports them all at the end. */
  public Parallel collectingAllErrors() {
    return new Parallel(limit, weight, true);
  }

  /** The most items (or, weighted, permits) in flight at once. */
  public int limit() {
    return limit;
  }

  // ------------------------------------------------------------------ async functions

  /** Maps the async {@code function} over {@code items}; the results in input order. */
  public <T extends @Nullable Object, R extends @Nullable Object>
      CompletableFuture<List<R>> mapAsync(
          Iterable<? extends T> items, Function<? super T, ? extends CompletionStage<R>> function) {
    return mapAsync(iterator(items), function);
  }

  /** Maps the async {@code function} over {@code items}; the results in input order. */
  public <T extends @Nullable Object, R extends @Nullable Object>
      CompletableFuture<List<R>> mapAsync(
          Iterator<? extends T> items, Function<? super T, ? extends CompletionStage<R>> function) {
    return BoundedRun.<T, R>start(this, items, null, asyncItems(function), true);
  }

  /** Maps the async {@code function} over {@code items}, closing the stream at the end. */
  public <T extends @Nullable Object, R extends @Nullable Object>
      CompletableFuture<List<R>> mapAsync(
          Stream<? extends T> items, Function<? super T, ? extends CompletionStage<R>> function) {
    Objects.requireNonNull(items, "items");
    return BoundedRun.<T, R>start(this, items.iterator(), items, asyncItems(function), true);
  }

  /** Calls the async {@code action} on every item; completes when all have. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEachAsync(
      Iterable<? extends T> items, Function<? super T, ? extends CompletionStage<?>> action) {
    return forEachAsync(iterator(items), action);
  }

  /** Calls the async {@code action} on every item; completes when all have. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEachAsync(
      Iterator<? extends T> items, Function<? super T, ? extends CompletionStage<?>> action) {
    return BoundedRun.<T, @Nullable Object>start(
            this, items, null, asyncItems(results(action)), false)
        .thenApply(none -> null);
  }

  /** Calls the async {@code action} on every item, closing the stream at the end. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEachAsync(
      Stream<? extends T> items, Function<? super T, ? extends CompletionStage<?>> action) {
    Objects.requireNonNull(items, "items");
    return BoundedRun.<T, @Nullable Object>start(
            this, items.iterator(), items, asyncItems(results(action)), false)
        .thenApply(none -> null);
  }

  // ------------------------------------------------------------------ blocking functions

  /**
   * Maps the blocking {@code function} over {@code items} on {@code executor}, in input order. A
   * checked exception the function throws fails the run as it is ({@code get()} throws an {@code
   * ExecutionException} whose cause it is).
   */
  public <T extends @Nullable Object, R extends @Nullable Object> CompletableFuture<List<R>> map(
      Iterable<? extends T> items,
      Executor executor,
      BlockingFunction<? super T, ? extends R, ? extends Exception> function) {
    return map(iterator(items), executor, function);
  }

  /** Maps the blocking {@code function} over {@code items} on {@code executor}, in input order. */
  public <T extends @Nullable Object, R extends @Nullable Object> CompletableFuture<List<R>> map(
      Iterator<? extends T> items,
      Executor executor,
      BlockingFunction<? super T, ? extends R, ? extends Exception> function) {
    return BoundedRun.<T, R>start(this, items, null, blockingItems(executor, function), true);
  }

  /**
   * Maps the blocking {@code function} over {@code items} on {@code executor}; closes the stream.
   */
  public <T extends @Nullable Object, R extends @Nullable Object> CompletableFuture<List<R>> map(
      Stream<? extends T> items,
      Executor executor,
      BlockingFunction<? super T, ? extends R, ? extends Exception> function) {
    Objects.requireNonNull(items, "items");
    return BoundedRun.<T, R>start(
        this, items.iterator(), items, blockingItems(executor, function), true);
  }

  /** Calls the blocking {@code action} on every item on {@code executor}. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEach(
      Iterable<? extends T> items,
      Executor executor,
      BlockingAction<? super T, ? extends Exception> action) {
    return forEach(iterator(items), executor, action);
  }

  /** Calls the blocking {@code action} on every item on {@code executor}. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEach(
      Iterator<? extends T> items,
      Executor executor,
      BlockingAction<? super T, ? extends Exception> action) {
    Objects.requireNonNull(action, "action");
    return BoundedRun.<T, @Nullable Object>start(
            this, items, null, blockingItems(executor, asFunction(action)), false)
        .thenApply(none -> null);
  }

  /** Calls the blocking {@code action} on every item on {@code executor}; closes the stream. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEach(
      Stream<? extends T> items,
      Executor executor,
      BlockingAction<? super T, ? extends Exception> action) {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(action, "action");
    return BoundedRun.<T, @Nullable Object>start(
            this, items.iterator(), items, blockingItems(executor, asFunction(action)), false)
        .thenApply(none -> null);
  }

  // ------------------------------------------------------------------ blocking the caller

  /**
   * Maps the blocking {@code function} over {@code items} and returns the results in input order,
   * blocking the calling thread until the run ends. The items run on threads made for the run
   * (about as many as run at once), which end with it. The run fails as {@link #map(Iterable,
   * Executor, BlockingFunction)}'s does, and its first failure is thrown as it is:
   *
   * <pre>{@code
   * List<String> texts = Parallel.limit(4).mapAll(paths, Files::readString); // throws IOException
   * }</pre>
   *
   * @throws X what the function threw first (later failures are attached as suppressed)
   * @throws InterruptedException if the calling thread is interrupted while it waits: the run is
   *     cancelled (the items in flight are interrupted) and this does not wait for them to end
   */
  public <T extends @Nullable Object, R extends @Nullable Object, X extends Exception>
      List<R> mapAll(
          Iterable<? extends T> items, BlockingFunction<? super T, ? extends R, X> function)
          throws X, InterruptedException {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(function, "function");
    ExecutorService threads = Executors.newCachedThreadPool(Parallel::runThread);
    try {
      return mapAll(items, threads, function);
    } finally {
      threads.shutdown();
    }
  }

  /**
   * As {@link #mapAll(Iterable, BlockingFunction)}, with the items run on {@code executor} (on Java
   * 21, {@code Executors.newVirtualThreadPerTaskExecutor()} fits well).
   *
   * @throws X what the function threw first (later failures are attached as suppressed)
   * @throws InterruptedException if the calling thread is interrupted while it waits: the run is
   *     cancelled (the items in flight are interrupted) and this does not wait for them to end
   */
  public <T extends @Nullable Object, R extends @Nullable Object, X extends Exception>
      List<R> mapAll(
          Iterable<? extends T> items,
          Executor executor,
          BlockingFunction<? super T, ? extends R, X> function)
          throws X, InterruptedException {
    CompletableFuture<List<R>> run = map(items, executor, function);
    try {
      return run.get();
    } catch (InterruptedException interrupted) {
      run.cancel(true);
      throw interrupted;
    } catch (ExecutionException failed) {
      throw Parallel.<X>asThrown(Tasks.unwrap(Objects.requireNonNull(failed.getCause())));
    }
  }

  /**
   * The run's failure, as the caller should see it: unchecked ones as they are, and a checked one
   * as an {@code X}, since only the function throws checked exceptions (the source and a stream's
   * close cannot).
   */
  @SuppressWarnings("unchecked")
  private static <X extends Exception> X asThrown(Throwable failure) {
    if (failure instanceof RuntimeException) {
      throw (RuntimeException) failure;
    }
    if (failure instanceof Error) {
      throw (Error) failure;
    }
    if (failure instanceof Exception) {
      return (X) failure;
    }
    throw new IllegalStateException("the run failed with a bare Throwable", failure);
  }

  private static Thread runThread(Runnable item) {
    Thread thread = new Thread(item, "jeton-parallel-" + THREADS.incrementAndGet());
    thread.setDaemon(true); // an abandoned run (its caller interrupted) does not hold the JVM
    return thread;
  }

  // ------------------------------------------------------------------ for BoundedRun

  int weightOf(Object item) {
    ToIntFunction<Object> w = weight;
    return w == null ? 1 : w.applyAsInt(item);
  }

  boolean isWeighted() {
    return weight != null;
  }

  boolean collectsAllErrors() {
    return collectAllErrors;
  }

  private static <T> Iterator<T> iterator(Iterable<T> items) {
    return Objects.requireNonNull(items, "items").iterator();
  }

  private static <T extends @Nullable Object, R extends @Nullable Object>
      BoundedRun.Starter<T, R> asyncItems(
          Function<? super T, ? extends CompletionStage<R>> function) {
    Objects.requireNonNull(function, "function");
    return BoundedRun.Starter.async(function);
  }

  private static <T extends @Nullable Object, R extends @Nullable Object>
      BoundedRun.Starter<T, R> blockingItems(
          Executor executor, BlockingFunction<? super T, ? extends R, ?> function) {
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(function, "function");
    return BoundedRun.Starter.blocking(executor, function);
  }

  /** An action's stages, typed as stages of the results a forEach throws away. */
  @SuppressWarnings("unchecked") // read only as "completed or failed"
  private static <T extends @Nullable Object>
      Function<T, CompletionStage<@Nullable Object>> results(
          Function<? super T, ? extends CompletionStage<?>> action) {
    Objects.requireNonNull(action, "action");
    return item -> (CompletionStage<@Nullable Object>) action.apply(item);
  }

  private static <T extends @Nullable Object>
      BlockingFunction<T, @Nullable Object, Exception> asFunction(
          BlockingAction<? super T, ?> action) {
    return item -> {
      action.accept(item);
      return null;
    };
  }

  @Override
  public String toString() {
    return "Parallel[limit="
        + limit
        + (weight != null ? ", weighted" : "")
        + (collectAllErrors ? ", collecting all errors" : "")
        + "]";
  }
}
