package dev.jeton;

import dev.jeton.internal.WithdrawingFuture;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * A queued request of a {@link WaitQueue}: a node of its doubly linked queue.
 *
 * <p>A node is either blocking (it has a {@link #thread}, which parks until {@link #status} is
 * final), asynchronous (it has a {@link #future}, completed by {@link WaitQueue}'s delivery), or
 * one clause of a select (it has a {@link #selection}, told of its delivery). What {@link #weight}
 * means is the primitive's business: the permits of a semaphore request, 0 for an {@code awaitIdle}
 * request.
 *
 * <p>The status leaves {@link #WAITING} exactly once, under the queue's lock, and the node leaves
 * the queue at the same moment: to a final status, or to {@link #SETTLING} when the primitive
 * decides the outcome under the lock but finishes it outside (a barrier runs its action first), and
 * then to a final status without the lock. Unparking and completing the future happen after the
 * lock is released.
 */
final class WaitNode implements BriefSpin.Awaited {
  static final int WAITING = 0;
  static final int GRANTED = 1;
  static final int CANCELLED = 2;
  static final int TIMED_OUT = 3;

  /** Failed by the primitive; {@link WaitQueue#failure} says why. */
  static final int FAILED_CLOSED = 4;

  static final int FAILED_LIMIT = 5;
  static final int FAILED_BROKEN = 6;

  /** Out of the queue, no longer withdrawable, outcome still to come. Not final. */
  static final int SETTLING = 7;

  private static final VarHandle PREWOKEN;
  private static final VarHandle CLAIM;

  /** {@link #claim}: nobody has claimed the node. */
  private static final int OPEN = 0;

  /** {@link #claim}: the primitive has decided an outcome it cannot take back. */
  private static final int TAKEN = 1;

  /** {@link #claim}: its future was completed from outside (cancelled, timed out). */
  private static final int GIVEN_UP = 2;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      PREWOKEN = lookup.findVarHandle(WaitNode.class, "prewoken", boolean.class);
      CLAIM = lookup.findVarHandle(WaitNode.class, "claim", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The size of the request, as the primitive defines it. */
  final int weight;

  /**
   * The blocked {@link Thread}, the {@link NodeFuture} of an asynchronous request, or the {@link
   * Selection} of a select's clause: one field, not three, because a node is one of them and every
   * queued request pays for its fields.
   */
  private final Object requester;

  /** Read by the blocked thread without the lock; see the class comment. */
  volatile int status;

  /**
   * What the primitive attaches to the outcome (a barrier's arrival, or the failure of a broken
   * generation), written before the final status is and read after it: set once, published by the
   * volatile write of {@link #status}.
   */
  @Nullable Object outcome;

  /** Queue links, guarded by the queue's lock; {@code next} also chains delivered nodes. */
  @Nullable WaitNode prev;

  @Nullable WaitNode next;

  /** {@code System.nanoTime()} when queued, kept only when statistics are on. */
  long queuedAt;

  /**
   * Set by the one thread that unparks this blocked node ahead of its grant (see "Blocking waiters"
   * in WaitQueue). Claimed by CAS without the lock: {@link #claimPrewake}.
   */
  private volatile boolean prewoken;

  /**
   * Who decides an asynchronous node's outcome, when the primitive's outcome cannot be given back
   * (a channel's value, once handed over, cannot be): OPEN, then TAKEN by the primitive under the
   * lock ({@link #claimForOutcome}) or GIVEN_UP by a completion of its future from outside ({@link
   * #claimForWithdrawal}), whichever CAS comes first. Primitives that can give a grant back (a
   * semaphore's permits) never claim, and their futures are never refused. A barrier gives up a
   * node only under its lock, while it waits (WaitQueue.mayGiveUp), and the trip needs no claim:
   * the lock orders them.
   */
  private volatile int claim;

  private WaitNode(int weight, Object requester) {
    this.weight = weight;
    this.requester = requester;
  }

  /** The blocked thread of a blocking request; null for an asynchronous one. */
  @Nullable Thread thread() {
    return requester instanceof Thread ? (Thread) requester : null;
  }

  /** The future of an asynchronous request; null for a blocking one. */
  @Nullable NodeFuture<?> future() {
    return requester instanceof NodeFuture ? (NodeFuture<?>) requester : null;
  }

  /** The selection of a select's node; null for any other request. */
  @Nullable Selection<?> selection() {
    return requester instanceof Selection ? (Selection<?>) requester : null;
  }

  /** A node that a select queues for one of its clauses. */
  static WaitNode selecting(Selection<?> selection, int weight) {
    return new WaitNode(weight, selection);
  }

  static WaitNode blocking(int weight) {
    return new WaitNode(weight, Thread.currentThread());
  }

  /** An asynchronous request of {@code queue}; a {@code timed} one gets its timer once queued. */
  static WaitNode async(WaitQueue queue, int weight, boolean timed) {
    NodeFuture<Object> future = new NodeFuture<>(queue);
    if (timed) {
      future.expectTimer();
    }
    WaitNode node = new WaitNode(weight, future);
    future.node = node;
    return node;
  }

  @Override
  public boolean isPending() {
    return status == WAITING;
  }

  boolean isFinal() {
    int s = status;
    return s != WAITING && s != SETTLING;
  }

  /** True for the one caller that is to unpark this blocked node ahead of its grant. */
  boolean claimPrewake() {
    return !prewoken && PREWOKEN.compareAndSet(this, false, true);
  }

  /**
   * Claims the node for the primitive's outcome: true, and a completion of its future from outside
   * is refused from now on; false if its future was completed from outside first, and its
   * withdrawal is on the way. Lock held. A select's node claims its whole selection: false if
   * another of its clauses won, or the select gave up.
   */
  boolean claimForOutcome() {
    Object r = requester;
    if (r instanceof Selection) {
      return ((Selection<?>) r).claim(this);
    }
    return CLAIM.compareAndSet(this, OPEN, TAKEN);
  }

  /** Whether a completion of the future from outside may go ahead: false once claimed. */
  boolean claimForWithdrawal() {
    int c = claim;
    return c == GIVEN_UP || (c == OPEN && CLAIM.compareAndSet(this, OPEN, GIVEN_UP));
  }

  /** True once a completion of the future from outside has claimed the node. */
  boolean isGivenUp() {
    return claim == GIVEN_UP;
  }

  /** The future of an asynchronous request; completing it from outside withdraws the request. */
  static final class NodeFuture<T extends @Nullable Object> extends WithdrawingFuture<T> {
    final WaitQueue queue;

    /** Set once, before the future is returned to anyone. */
    @Nullable WaitNode node;

    NodeFuture(WaitQueue queue) {
      this.queue = queue;
    }

    @Override
    protected boolean mayCompleteFromOutside() {
      WaitNode n = node;
      return n == null || queue.mayGiveUp(n);
    }

    /** The engine's one way out for a future completed from outside: WaitQueue decides it. */
    @Override
    protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
      queue.withdrawFromOutside(
          java.util.Objects.requireNonNull(node), timedOut ? TIMED_OUT : CANCELLED, complete);
    }
  }
}
