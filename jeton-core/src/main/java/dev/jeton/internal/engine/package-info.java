/**
 * Not API: the engine under every waiting primitive of Jeton, as {@code AbstractQueuedSynchronizer}
 * is under {@code java.util.concurrent}'s. Exported only to Jeton's own modules.
 *
 * <p>What is here: the wait queue ({@link dev.jeton.internal.engine.WaitQueue}, with its queued
 * requests, {@link dev.jeton.internal.engine.WaitNode}), its delivery and its blocking wait; the
 * future whose first completion wins ({@link dev.jeton.internal.engine.WithdrawingFuture}); the
 * statistics a queue keeps; the spin policy and its one spinner gate ({@link
 * dev.jeton.internal.engine.Spin}); and the one timer ({@link dev.jeton.internal.engine.Timer}). A
 * primitive extends {@code WaitQueue}, implements its protected hooks, and makes the grants of its
 * requests ({@link dev.jeton.internal.engine.WaitNode.Grant}, typed per kind of request).
 *
 * <p>The engine knows none of its clients: what it needs of them are interfaces it owns, which they
 * implement. A select, which waits on several queues at once, is a {@link
 * dev.jeton.internal.engine.WaitNode.Claimant}; a scope's task, which must withdraw the requests
 * queued while it runs, is the thread's {@link dev.jeton.internal.engine.WaitTracking.Tracker}.
 * Nothing here imports {@code dev.jeton}.
 *
 * <h2>Field-access conventions</h2>
 *
 * <p>Fields updated atomically are {@code volatile}; their atomic updates (compare-and-set,
 * get-and-set) go through a {@code VarHandle} named after the field in upper case ({@code state} /
 * {@code STATE}), and every other read or write of them is a volatile one. Fields written only
 * while holding a queue's lock are plain unless a method reads them without the lock, in which case
 * they are {@code volatile} and the comment on the field says who reads them. A field the lock
 * guards, and a method called with the lock held, carries {@code @GuardedBy("lock")}, which the
 * build checks (Error Prone); where the lock cannot be named from the field's class (a node's
 * links, the statistics' figures: the lock is their queue's), the field's comment says so. No field
 * is written by more than one thread without the lock except through its {@code VarHandle}. Fields
 * set once before their object is shared (and never after) are plain, as are fields of objects
 * confined to one thread. The primitives built on the engine ({@code dev.jeton}) follow the same
 * conventions.
 */
@NullMarked
package dev.jeton.internal.engine;

import org.jspecify.annotations.NullMarked;
