package dev.jeton;

import dev.jeton.internal.engine.WithdrawingFuture;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** The task helpers shared by every {@link Semaphore} implementation. */
final class Tasks {
  private Tasks() {}

  /**
   * Starts {@code task} once {@code acquiring} yields a permit and releases the permit when the
   * task's stage completes; see {@link Semaphore#callAsync}.
   */
  static <T extends @Nullable Object> CompletableFuture<T> callAsync(
      CompletableFuture<Permit> acquiring, Supplier<? extends CompletionStage<T>> task) {
    return callAsync(acquiring, Permit::release, task);
  }

  /**
   * Starts {@code task} once {@code acquiring} yields a grant (a permit, a guard) and lets the
   * grant go with {@code release} when the task's stage completes.
   *
   * <p>The result is a {@link WithdrawingFuture}: a completion from outside (the caller gives up)
   * withdraws the request before the result completes, so that its callbacks find it gone, as for
   * the request's own future; once the task has started this withdraws nothing, and the task keeps
   * its grant until its stage completes.
   */
  static <G, T extends @Nullable Object> CompletableFuture<T> callAsync(
      CompletableFuture<G> acquiring,
      Consumer<? super G> release,
      Supplier<? extends CompletionStage<T>> task) {
    WithdrawingFuture<T> result =
        new WithdrawingFuture<>() {
          @Override
          protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
            acquiring.cancel(false); // a grant that won it sees isGivenUp() and lets go
            complete.run();
          }
        };
    CompletableFuture<?> unusedStartOnGrant =
        acquiring.whenComplete(
            (grant, failure) -> {
              if (failure != null) {
                result.settleExceptionally(failure);
              } else if (result.isGivenUp() || result.isDone()) {
                release.accept(grant); // the caller gave up before the task could start
              } else {
                start(grant, release, task, result);
              }
            });
    return result;
  }

  /**
   * A future that completes as {@code stage} does, failures unwrapped: what the rest of Jeton waits
   * on to know a task's work has settled, whatever kind of stage the task returned.
   */
  static <T extends @Nullable Object> CompletableFuture<T> settled(CompletionStage<T> stage) {
    CompletableFuture<T> settled = new CompletableFuture<>();
    var unused =
        stage.whenComplete(
            (value, failure) -> {
              if (failure != null) {
                settled.completeExceptionally(unwrap(failure));
              } else {
                settled.complete(value);
              }
            });
    return settled;
  }

  /** The cause of a {@link CompletionException}, which stages wrap around failures; else itself. */
  static Throwable unwrap(Throwable failure) {
    Throwable cause = failure.getCause();
    return failure instanceof CompletionException && cause != null ? cause : failure;
  }

  private static <G, T extends @Nullable Object> void start(
      G grant,
      Consumer<? super G> release,
      Supplier<? extends CompletionStage<T>> task,
      WithdrawingFuture<T> result) {
    CompletionStage<T> stage;
    try {
      stage = Objects.requireNonNull(task.get(), "the task returned a null stage");
    } catch (Throwable failure) {
      release.accept(grant);
      result.settleExceptionally(failure);
      return;
    }
    stage.whenComplete(
        (value, failure) -> {
          release.accept(grant); // before the caller sees the outcome
          if (failure != null) {
            result.settleExceptionally(failure);
          } else {
            result.settle(value);
          }
        });
  }

  /** A primitive's name, checked: what every builder's {@code name(String)} takes. */
  static String checkName(String name) {
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank");
    }
    return name;
  }
}
