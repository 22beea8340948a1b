package dev.jeton;

import org.jspecify.annotations.Nullable;

/**
 * A blocking function of one item that may throw a checked exception, such as {@code
 * Files::readString}: what {@link Parallel}'s blocking methods apply to each item. A checked
 * exception it throws fails the run as it is, not wrapped.
 *
 * @param <T> the item
 * @param <R> the result
 * @param <X> what it throws: inferred from the lambda, {@code RuntimeException} if it throws no
 *     checked exception
 */
@FunctionalInterface
public interface BlockingFunction<
    T extends @Nullable Object, R extends @Nullable Object, X extends Exception> {
  /** Applies the function to {@code item}. */
  R apply(T item) throws X;
}
