/**
 * Jeton: semaphores that limit how many things run at once.
 *
 * <p>The entry point is {@link dev.jeton.Semaphore}: {@link dev.jeton.Semaphore#create(int)} for an
 * in-process, weighted, strictly FIFO semaphore, {@link dev.jeton.Semaphore#builder()} to name it,
 * set a completion executor or turn statistics on. Acquiring returns a {@link dev.jeton.Permit},
 * released once, by {@link dev.jeton.Permit#release()} or try-with-resources.
 *
 * <p>On the same wait-queue engine, and with the same rules (strict arrival order, blocking and
 * asynchronous requests in one queue, withdrawal on cancel, timeout and interrupt, futures
 * completed outside locks): {@link dev.jeton.Mutex}, {@link dev.jeton.ReadWriteLock} (whose locks
 * are {@link dev.jeton.Guard}s) and {@link dev.jeton.Barrier}.
 *
 * <p>{@link dev.jeton.Scope} owns the tasks started in it: cancelling it cancels them, withdraws
 * the waits they queued on any of the primitives above, and then runs its teardown hooks.
 *
 * <p>Every future these hand out for a request or a task follows one rule: completing it from
 * outside ({@code cancel}, {@code complete}, {@code completeExceptionally}, so {@code orTimeout}
 * and {@code completeOnTimeout} too) gives the request up, which leaves its queue, and a grant made
 * at the same moment goes back, before the future completes (unless its outcome can no longer be
 * taken back: a channel's value handed over, a barrier's arrival counted). {@code obtrudeValue} and
 * {@code obtrudeException}, which would bypass that, throw {@link
 * java.lang.UnsupportedOperationException}.
 *
 * <p>Every type in this package is null-marked: no parameter or result is {@code null} unless it is
 * annotated {@code @Nullable}.
 *
 * <h2>Field-access conventions in the implementation</h2>
 *
 * <p>Fields updated atomically are {@code volatile}; their atomic updates (compare-and-set,
 * get-and-set) go through a {@code VarHandle} named after the field in upper case ({@code state} /
 * {@code STATE}), and every other read or write of them is a volatile one. Fields written only
 * while holding a semaphore's lock are plain unless a method reads them without the lock, in which
 * case they are {@code volatile} and the comment on the field says who reads them. No field is
 * written by more than one thread without the lock except through its {@code VarHandle}. Fields set
 * once before their object is shared (and never after) are plain, as are fields of objects confined
 * to one thread.
 */
@NullMarked
package dev.jeton;

import org.jspecify.annotations.NullMarked;
