package dev.jeton;

import dev.jeton.internal.Arguments;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
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
 * }</pre>
 *
 * <p>A {@code Parallel} is an immutable set of options; each method that takes items starts a
 * run and returns its future at once. In a run:
 *
 * <ul>
 *   <li><b>At most {@code limit} items are in flight</b> (with {@link #weighted}, at most {@code
 *       limit} permits' worth), and items are pulled from the source lazily: an item is taken
 *       only when it can start (weighted: when the previous item has its permits), so the source
 *       may be unbounded and the run holds O(limit) items, besides the results of {@code map}.
 *   <li><b>Results are in input order</b>, whatever order the items finish in.
 *   <li><b>Fail fast</b> (the default): the first failure stops pulling items, cancels the
 *       items in flight (an async item's future is cancelled; a blocking item's thread is
 *       interrupted), waits until every one of them has settled, and then fails the run with
 *       that first failure, later failures attached as {@linkplain Throwable#getSuppressed()
 *       suppressed}. With {@link #collectingAllErrors()} every item runs, and the run fails at
 *       the end with the first failure and all the others suppressed.
 *   <li><b>Cancelling the returned future</b> cancels the items in flight and starts no more.
 *   <li>Async functions ({@code mapAsync}, {@code forEachAsync}) are called on the thread that
 *       frees a slot (the first ones on the thread that starts the run) and must not block;
 *       blocking functions ({@code map}, {@code forEach}) run on the given executor (virtual
 *       threads are a good fit). No thread of the caller's is blocked in either case.
 * </ul>
 *
 * <p>A source given as a {@link Stream} is closed when the run ends. A source that throws fails
 * the run like an item would.
 */
public final class Parallel {
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
   * their weights add up to at most the limit. Items still start in input order: a heavy item
   * waits for room and holds back the lighter ones behind it.
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
    return BoundedRun.<T, @Nullable Object>start(this, items, null, asyncItems(results(action)), false)
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

  /** Maps the blocking {@code function} over {@code items} on {@code executor}, in input order. */
  public <T extends @Nullable Object, R extends @Nullable Object> CompletableFuture<List<R>> map(
      Iterable<? extends T> items, Executor executor, Function<? super T, ? extends R> function) {
    return map(iterator(items), executor, function);
  }

  /** Maps the blocking {@code function} over {@code items} on {@code executor}, in input order. */
  public <T extends @Nullable Object, R extends @Nullable Object> CompletableFuture<List<R>> map(
      Iterator<? extends T> items, Executor executor, Function<? super T, ? extends R> function) {
    return BoundedRun.<T, R>start(this, items, null, blockingItems(executor, function), true);
  }

  /** Maps the blocking {@code function} over {@code items} on {@code executor}; closes the stream. */
  public <T extends @Nullable Object, R extends @Nullable Object> CompletableFuture<List<R>> map(
      Stream<? extends T> items, Executor executor, Function<? super T, ? extends R> function) {
    Objects.requireNonNull(items, "items");
    return BoundedRun.<T, R>start(
        this, items.iterator(), items, blockingItems(executor, function), true);
  }

  /** Calls the blocking {@code action} on every item on {@code executor}. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEach(
      Iterable<? extends T> items, Executor executor, Consumer<? super T> action) {
    return forEach(iterator(items), executor, action);
  }

  /** Calls the blocking {@code action} on every item on {@code executor}. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEach(
      Iterator<? extends T> items, Executor executor, Consumer<? super T> action) {
    Objects.requireNonNull(action, "action");
    return BoundedRun.<T, @Nullable Object>start(
            this, items, null, blockingItems(executor, asFunction(action)), false)
        .thenApply(none -> null);
  }

  /** Calls the blocking {@code action} on every item on {@code executor}; closes the stream. */
  public <T extends @Nullable Object> CompletableFuture<Void> forEach(
      Stream<? extends T> items, Executor executor, Consumer<? super T> action) {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(action, "action");
    return BoundedRun.<T, @Nullable Object>start(
            this, items.iterator(), items, blockingItems(executor, asFunction(action)),
            false)
        .thenApply(none -> null);
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
      Executor executor, Function<? super T, ? extends R> function) {
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

  private static <T extends @Nullable Object> Function<T, @Nullable Object> asFunction(
      Consumer<? super T> action) {
    return item -> {
      action.accept(item);
      return null;
    };
  }

  @Override
  public String toString() {
    return "Parallel[limit=" + limit + (weight != null ? ", weighted" : "")
        + (collectAllErrors ? ", collecting all errors" : "") + "]";
  }
}
