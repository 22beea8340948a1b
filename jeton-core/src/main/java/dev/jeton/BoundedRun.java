package dev.jeton;

import dev.jeton.internal.engine.PermitPump;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One run of {@link Parallel}: a function applied to the items of a source, at most a limit at a
 * time.
 *
 * <p>Algorithm. An in-process {@link Semaphore} of {@code limit} permits bounds the work. A single
 * <em>pump</em> pulls items: unweighted, it acquires one permit, then pulls the next item and
 * starts it holding that permit; weighted, it pulls the next item, then acquires the item's weight.
 * It loops while permits come at once; otherwise it leaves a callback on its one pending acquire
 * and returns, and the callback resumes the loop: that step is the engine's ({@link
 * PermitPump#acquireOrPark}), as under PriorityScheduler and admission. The rest of the engine's
 * pump does not fit, and is not used: it queues entries and gives each permit to the best one
 * queued when the permit comes, where a run has no queue but one source, read by the pump alone (no
 * lock), in its own order; a weighted item is pulled before its permits are asked for, since its
 * weight says how many; and the pump ends when the source does, or at the run's first failure, not
 * when a queue empties. Each started item releases its permits when it settles, which may grant the
 * pump's pending acquire. Stopping (the first failure in fail-fast mode, or the caller cancelling
 * the run) sets {@code stopped}, cancels the pump's pending acquire and every item in flight; the
 * pump, seeing {@code stopped}, ends.
 *
 * <p>The pump reads the source only through {@code pull()}, which catches what {@code hasNext()} or
 * {@code next()} throws and fails the run with it: a throw escaping the pump would leave it counted
 * in {@code open} for ever, and the run would never complete.
 *
 * <p>Invariants: only the pump touches the source, and there is at most one pump (running, or
 * waiting on its one pending acquire), so the source needs no lock and is never read ahead by more
 * than the one item waiting for its weight; the items in flight hold at most {@code limit} permits;
 * {@code open} counts the pump (until it ends) plus the items not yet settled, and the run
 * completes exactly once, when {@code open} reaches zero, so after everything it started has
 * settled.
 */
final class BoundedRun<T extends @Nullable Object, R extends @Nullable Object> {

  /** An item started: a future that completes when it has settled, and a way to cancel it. */
  record Handle<R extends @Nullable Object>(CompletableFuture<R> settled, Runnable cancel) {
    static <R extends @Nullable Object> Handle<R> failed(Throwable failure) {
      return new Handle<>(CompletableFuture.failedFuture(failure), () -> {});
    }
  }

  /** Starts one item. */
  interface Starter<T extends @Nullable Object, R extends @Nullable Object> {
    Handle<R> start(T item);

    static <T extends @Nullable Object, R extends @Nullable Object> Starter<T, R> async(
        Function<? super T, ? extends CompletionStage<R>> function) {
      return item -> {
        CompletionStage<R> stage;
        try {
          stage = Objects.requireNonNull(function.apply(item), "the function returned null");
        } catch (Throwable failure) {
          return Handle.failed(failure);
        }
        return new Handle<>(Tasks.settled(stage), () -> cancel(stage));
      };
    }

    static <T extends @Nullable Object, R extends @Nullable Object> Starter<T, R> blocking(
        Executor executor, BlockingFunction<? super T, ? extends R, ?> function) {
      return item -> {
        BlockingCall<R> call = new BlockingCall<>(() -> function.apply(item));
        try {
          executor.execute(call);
        } catch (RuntimeException rejected) {
          return Handle.failed(rejected);
        }
        return new Handle<>(call.settled(), call::cancel);
      };
    }
  }

  /** What {@link #pull()} returns when the pump has ended instead of pulling an item. */
  private static final Object END = new Object();

  private final Parallel options;
  private final Iterator<? extends T> source;
  private final @Nullable AutoCloseable closeable;
  private final Starter<T, R> starter;

  // Its elements are guarded by its own monitor; null for forEach. Not @GuardedBy: the check
  // guards reads of the field, and this final reference is read freely (the null checks).
  private final @Nullable List<@Nullable R> results;

  private final Semaphore permits;
  private final CompletableFuture<@Nullable List<R>> result = new CompletableFuture<>();
  private final AtomicInteger open = new AtomicInteger(1); // the pump, plus items in flight
  private final Map<Long, Handle<R>> inFlight = new ConcurrentHashMap<>();
  private final AtomicReference<@Nullable Throwable> firstFailure = new AtomicReference<>();
  private final Queue<Throwable> laterFailures = new ConcurrentLinkedQueue<>();
  private volatile boolean stopped;
  private volatile @Nullable CompletableFuture<Permit> pendingAcquire;
  private long nextIndex; // the pump's

  private BoundedRun(
      Parallel options,
      Iterator<? extends T> source,
      @Nullable AutoCloseable closeable,
      Starter<T, R> starter,
      boolean keepResults) {
    this.options = options;
    this.source = source;
    this.closeable = closeable;
    this.starter = starter;
    if (keepResults) {
      this.results = new ArrayList<@Nullable R>();
    } else {
      this.results = null;
    }
    this.permits = Semaphore.create(options.limit());
  }

  /** Starts a run; its future fails at once with a null source. */
  @SuppressWarnings("unchecked") // a run without results completes with null, typed as a list
  static <T extends @Nullable Object, R extends @Nullable Object> CompletableFuture<List<R>> start(
      Parallel options,
      Iterator<? extends T> source,
      @Nullable AutoCloseable closeable,
      Starter<T, R> starter,
      boolean keepResults) {
    Objects.requireNonNull(source, "items");
    BoundedRun<T, R> run = new BoundedRun<>(options, source, closeable, starter, keepResults);
    // Whoever completes the run's future from outside (cancel, complete) stops the run.
    var unused = run.result.whenComplete((value, failure) -> run.stop());
    run.pump();
    return (CompletableFuture<List<R>>) (CompletableFuture<?>) run.result;
  }

  /** Pulls and starts items while permits come at once; see the class comment. */
  private void pump() {
    while (true) {
      if (stopped) {
        endPump();
        return;
      }
      T item = null;
      int weight = 1;
      if (options.isWeighted()) {
        Object pulled = pull();
        if (pulled == END) {
          return;
        }
        item = item(pulled);
        try {
          weight = options.weightOf(item);
        } catch (Throwable failure) {
          failAndEndPump(failure);
          return;
        }
        if (weight < 1 || weight > options.limit()) {
          failAndEndPump(
              new IllegalArgumentException(
                  "the weight of item "
                      + (nextIndex - 1)
                      + " must be 1 to the limit "
                      + options.limit()
                      + ", was "
                      + weight));
          return;
        }
      }
      int w = weight;
      T waitingItem = item;
      CompletableFuture<Permit> acquiring =
          PermitPump.acquireOrPark(
              () -> permits.acquireAsync(w),
              this::publish,
              (parked, permit, failure) -> resume(permit, failure, waitingItem));
      if (acquiring == null) {
        return; // parked
      }
      if (!startNext(item, acquiring.join())) {
        return;
      }
    }
  }

  /** Publishes the pump's acquire, which {@link #stop()} cancels: still needed unless stopped. */
  private boolean publish(CompletableFuture<Permit> acquiring) {
    pendingAcquire = acquiring;
    return !stopped;
  }

  private void resume(@Nullable Permit permit, @Nullable Throwable failure, @Nullable T item) {
    pendingAcquire = null;
    if (failure != null || permit == null) {
      endPump(); // cancelled: the run is stopping
    } else if (startNext(item, permit)) {
      pump();
    }
  }

  /**
   * Starts the next item holding {@code permit}: {@code item} if weighted (already pulled), else
   * the source's next. False if the pump has ended (stopped, or the source is exhausted).
   */
  @SuppressWarnings("NullAway") // pulled is the item (a T, null only if T allows it) when weighted
  private boolean startNext(@Nullable T pulled, Permit permit) {
    if (stopped) {
      permit.release();
      endPump();
      return false;
    }
    T item;
    if (options.isWeighted()) {
      item = pulled;
    } else {
      Object next = pull();
      if (next == END) {
        permit.release();
        return false;
      }
      item = item(next);
    }
    start(item, nextIndex - 1, permit);
    return true;
  }

  /**
   * The source's next item, or {@link #END} if it has none or throws: then the pump has ended, and
   * a throw has failed the run. Both {@code hasNext()} and {@code next()} are guarded: a source is
   * user code, and a throw escaping here would end the pump without counting it off, leaving the
   * run open for ever.
   */
  private @Nullable Object pull() {
    boolean more;
    Object item = null;
    try {
      more = source.hasNext();
      if (more) {
        item = source.next();
      }
    } catch (Throwable failure) {
      failAndEndPump(failure);
      return END;
    }
    if (!more) {
      endPump();
      return END;
    }
    nextIndex++;
    if (results != null) {
      synchronized (results) {
        results.add(null);
      }
    }
    return item;
  }

  @SuppressWarnings({"unchecked", "NullAway"}) // pull() returned it from the source of Ts
  private T item(@Nullable Object pulled) {
    return (T) pulled;
  }

  private void start(T item, long index, Permit permit) {
    open.incrementAndGet();
    Handle<R> handle;
    try {
      handle = starter.start(item);
    } catch (Throwable failure) {
      handle = Handle.failed(failure);
    }
    Handle<R> started = handle;
    inFlight.put(index, started);
    if (stopped) {
      started.cancel().run(); // the run stopped while this item was starting
    }
    var unused =
        started
            .settled()
            .whenComplete(
                (value, failure) -> {
                  inFlight.remove(index);
                  if (failure == null) {
                    if (results != null) {
                      synchronized (results) {
                        results.set((int) index, value);
                      }
                    }
                  } else {
                    fail(Tasks.unwrap(failure)); // first: the permit must not start another item
                  }
                  permit.release();
                  oneLess();
                });
  }

  private void fail(Throwable failure) {
    if (stopped && failure instanceof CancellationException) {
      return; // we cancelled it
    }
    if (!firstFailure.compareAndSet(null, failure) && firstFailure.get() != failure) {
      laterFailures.add(failure);
    }
    if (!options.collectsAllErrors()) {
      stop();
    }
  }

  private void failAndEndPump(Throwable failure) {
    fail(failure);
    endPump();
  }

  private void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    CompletableFuture<Permit> acquiring = pendingAcquire;
    if (acquiring != null) {
      acquiring.cancel(false);
    }
    inFlight.values().forEach(handle -> handle.cancel().run());
  }

  private void endPump() {
    oneLess();
  }

  /** One fewer open part; the last one completes the run. */
  private void oneLess() {
    if (open.decrementAndGet() != 0) {
      return;
    }
    AutoCloseable toClose = closeable;
    if (toClose != null) {
      try {
        toClose.close();
      } catch (Throwable failure) {
        fail(failure);
      }
    }
    Throwable first = firstFailure.get();
    if (first != null) {
      for (Throwable later : laterFailures) {
        if (later != first) {
          first.addSuppressed(later);
        }
      }
      result.completeExceptionally(first);
    } else if (results != null) {
      synchronized (results) {
        result.complete(Collections.unmodifiableList(new ArrayList<>(results)));
      }
    } else {
      result.complete(null);
    }
  }

  private static void cancel(CompletionStage<?> stage) {
    try {
      stage.toCompletableFuture().cancel(true);
    } catch (UnsupportedOperationException notCancellable) {
      // a stage that cannot be cancelled is waited for
    }
  }
}
