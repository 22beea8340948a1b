package dev.jeton;

import java.util.Objects;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The options every in-process primitive's builder shares: a name and a completion executor. Each
 * public builder ({@link Semaphore.Builder}, {@link KeyedSemaphore.Builder}, {@link Mutex.Builder},
 * {@link ReadWriteLock.Builder}, {@link Barrier.Builder}) extends it with itself as {@code B}, so
 * that these setters return that builder and chaining goes on; their javadoc shows these methods as
 * its own. ({@link Channel.Builder} has no name, so it keeps its one shared option itself.)
 *
 * @param <B> the builder itself
 */
abstract class PrimitiveBuilder<B extends PrimitiveBuilder<B>> {
  @Nullable String name;
  @Nullable Executor completionExecutor;

  PrimitiveBuilder() {}

  /**
   * A name shown by {@code toString()} and in exception messages.
   *
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public B name(String name) {
    this.name = Tasks.checkName(name);
    return self();
  }

  /**
   * Completes asynchronous requests on {@code executor} instead of on the thread whose release,
   * unlock or arrival granted them. If the executor rejects a completion (or throws), it runs on
   * that thread instead: no completion is dropped.
   */
  public B completionExecutor(Executor executor) {
    this.completionExecutor = Objects.requireNonNull(executor, "executor");
    return self();
  }

  @SuppressWarnings("unchecked") // B is the class that extends this one, by the type's contract
  final B self() {
    return (B) this;
  }
}
