package dev.jeton;

import org.jspecify.annotations.Nullable;

/**
 * A blocking action on one item that may throw a checked exception: what {@link
 * Parallel#forEach(Iterable, java.util.concurrent.Executor, BlockingAction)} calls on each item. A
 * checked exception it throws fails the run as it is, not wrapped.
 *
 * @param <T> the item
 * @param <X> what it throws
 */
@FunctionalInterface
public interface BlockingAction<T extends @Nullable Object, X extends Exception> {
  /** Acts on {@code item}. */
  void accept(T item) throws X;
}
