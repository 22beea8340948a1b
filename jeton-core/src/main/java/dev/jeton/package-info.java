/**
 * Jeton: semaphores that limit how many things run at once.
 *
 * <p>The entry point is {@link dev.jeton.Semaphore}: {@link dev.jeton.Semaphore#create(int)} for an
 * in-process, weighted, strictly FIFO semaphore, {@link dev.jeton.Semaphore#builder()} to name it,
 * set a completion executor or turn statistics on. Acquiring returns a {@link dev.jeton.Permit},
 * released once, by {@link dev.jeton.Permit#release()} or try-with-resources.
 *
 * <p>On the same wait-queue engine, and with the same rules (blocking and asynchronous requests in
 * one queue, withdrawal on cancel, timeout and interrupt, futures completed outside locks): {@link
 * dev.jeton.Mutex}, {@link dev.jeton.ReadWriteLock} (whose locks are {@link dev.jeton.Guard}s) and
 * {@link dev.jeton.Barrier}. All are strictly FIFO but the mutex, which lets a running thread take
 * a free lock ahead of the queue until a waiter has waited past a bound ({@link
 * dev.jeton.Fairness}).
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
 * <h2>The implementation</h2>
 *
 * <p>Each public type here has its implementation beside it, package-private ({@code Fifo*}, as in
 * {@code java.util.concurrent}); the ones that wait extend the engine's wait queue ({@code
 * dev.jeton.internal.engine}, not API), which knows none of them. Their fields follow the engine's
 * field-access conventions, written in that package's comment.
 */
@NullMarked
package dev.jeton;

import org.jspecify.annotations.NullMarked;
