package dev.jeton;

import org.jspecify.annotations.Nullable;

/**
 * A blocking task that may throw a checked exception, such as {@code () -> Files.readString(path)}:
 * what {@link Semaphore#call(int, BlockingTask)} runs. Unlike a {@link
 * java.util.concurrent.Callable}, it names what it throws, so the caller catches exactly that.
 *
 * @param <T> the result
 * @param <X> what it throws: inferred from the lambda, {@code RuntimeException} if it throws no
 *     checked exception
 */
@FunctionalInterface
public interface BlockingTask<T extends @Nullable Object, X extends Exception> {
  /** Runs the task. */
  T call() throws X;
}
