/**
 * Jeton: semaphores that limit how many things run at once.
 *
 * <p>The entry point is {@link dev.jeton.Semaphore}: {@link dev.jeton.Semaphore#create(int)} for
 * an in-process, weighted, strictly FIFO semaphore, {@link dev.jeton.Semaphore#builder()} to name
 * it, set a completion executor or turn statistics on. Acquiring returns a {@link
 * dev.jeton.Permit}, released once, by {@link dev.jeton.Permit#release()} or try-with-resources.
 *
 * <p>Every type in this package is null-marked: no parameter or result is {@code null} unless it
 * is annotated {@code @Nullable}.
 *
 * <h2>Field-access conventions in the implementation</h2>
 *
 * <p>Fields updated atomically are {@code volatile} and accessed through a {@code VarHandle}
 * named after the field in upper case ({@code state} / {@code STATE}). Fields written only while
 * holding a semaphore's lock are plain unless a method reads them without the lock, in which
 * case they are {@code volatile} and the comment on the field says who reads them.
 */
@NullMarked
package dev.jeton;

import org.jspecify.annotations.NullMarked;
