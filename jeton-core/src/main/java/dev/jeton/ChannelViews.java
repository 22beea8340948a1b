package dev.jeton;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.jspecify.annotations.Nullable;

/** The blocking and asynchronous iteration of a {@link FifoChannel}: a receive loop each. */
final class ChannelViews {
  private ChannelViews() {}

  /** Receives in hasNext, one value ahead; see {@link Channel#iterator()}. */
  static <T> Iterator<T> iterator(Channel<T> channel) {
    return new Iterator<T>() {
      private @Nullable T next;
      private boolean ended;

      @Override
      public boolean hasNext() {
        if (next != null) {
          return true;
        }
        if (ended) {
          return false;
        }
        Optional<T> v;
        try {
          v = channel.receiveOrClosed();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          CancellationException c =
              new CancellationException("interrupted while waiting for the channel's next value");
          c.initCause(e);
          throw c;
        }
        ended = v.isEmpty();
        next = v.orElse(null);
        return !ended;
      }

      @Override
      public T next() {
        if (!hasNext()) {
          throw new NoSuchElementException("the channel is closed and drained");
        }
        T v = Objects.requireNonNull(next);
        next = null;
        return v;
      }
    };
  }

  static <T> Stream<T> stream(Channel<T> channel) {
    return StreamSupport.stream(
        Spliterators.spliteratorUnknownSize(
            iterator(channel), Spliterator.ORDERED | Spliterator.NONNULL),
        false);
  }

  /** See {@link Channel#forEachAsync}. */
  static <T> CompletableFuture<Void> forEachAsync(
      FifoChannel<T> channel, Consumer<? super T> action) {
    ForEach<T> loop = new ForEach<>(channel, Objects.requireNonNull(action, "action"));
    loop.done.whenComplete((v, e) -> loop.stop());
    loop.run();
    return loop.done;
  }

  /**
   * The receive loop of {@link Channel#forEachAsync}: values ready at once are handled in a loop,
   * and a receive that waits continues the loop from its completion, so the stack stays flat.
   * `current` is the receive in flight, which completing `done` (a cancel, say) withdraws.
   */
  private static final class ForEach<T> {
    final CompletableFuture<Void> done = new CompletableFuture<>();
    private final FifoChannel<T> channel;
    private final Consumer<? super T> action;
    private volatile @Nullable CompletableFuture<Optional<T>> current;

    ForEach(FifoChannel<T> channel, Consumer<? super T> action) {
      this.channel = channel;
      this.action = action;
    }

    void stop() {
      CompletableFuture<Optional<T>> f = current;
      if (f != null) {
        f.cancel(false); // refused if its value is taken already: handle() passes it on
      }
    }

    void run() {
      while (!done.isDone()) {
        CompletableFuture<Optional<T>> f = channel.receiveOrClosedAsync();
        current = f;
        if (done.isDone()) {
          f.cancel(false); // stopped as it started
        }
        if (!f.isDone()) {
          f.whenComplete(
              (v, e) -> {
                if (handle(f)) {
                  run();
                }
              });
          return;
        }
        if (!handle(f)) {
          return;
        }
      }
    }

    /** Passes on the outcome of a receive: true to go on. */
    private boolean handle(CompletableFuture<Optional<T>> f) {
      Optional<T> v;
      try {
        v = f.join();
      } catch (CancellationException stopped) {
        return false; // withdrawn by stop()
      } catch (CompletionException e) {
        done.completeExceptionally(e.getCause());
        return false;
      }
      if (v.isEmpty()) {
        done.complete(null);
        return false;
      }
      if (done.isDone()) {
        channel.undelivered(v.get()); // stopped meanwhile: taken, but never handed on
        return false;
      }
      try {
        action.accept(v.get());
      } catch (Throwable t) { // an Error too: the loop ends, and says why
        done.completeExceptionally(t);
        return false;
      }
      return true;
    }
  }
}
