package dev.jeton.internal.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A queued request of a {@link WaitQueue}: a node of its doubly linked queue.
 *
 * <p>A node is either blocking (it has a {@link #thread}, which parks until {@link #status} is
 * final), asynchronous (it has a {@link #future}, completed by {@link WaitQueue}'s delivery), or
 * one of the nodes of a {@link Claimant} that waits on several queues at once (a select), told of
 * its delivery. What {@link #weight} means is the primitive's business: the permits of a semaphore
 * request, 0 for an {@code awaitIdle} request.
 *
 * <p>The status leaves {@link #WAITING} exactly once, under the queue's lock, and the node leaves
 * the queue at the same moment: to a final status, or to {@link #SETTLING} when the primitive
 * decides the outcome under the lock but finishes it outside (a barrier runs its action first), and
 * then to a final status without the lock. Unparking and completing the future happen after the
 * lock is released. The primitive reads and writes a node through its accessors under the same
 * rules: {@link #setStatus} before the node is queued, or under the lock, or from SETTLING.
 */
public final class WaitNode implements Spin.Awaited {
  public static final int WAITING = 0;
  public static final int GRANTED = 1;
  public static final int CANCELLED = 2;
  public static final int TIMED_OUT = 3;

  /** Failed by the primitive; {@link WaitQueue#failure} says why. */
  public static final int FAILED_CLOSED = 4;

  public static final int FAILED_LIMIT = 5;
  public static final int FAILED_BROKEN = 6;

  /** Out of the queue, no longer withdrawable, outcome still to come. Not final. */
  public static final int SETTLING = 7;

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
  private final int weight;

  /**
   * The blocked {@link Thread}, the {@link NodeFuture} of an asynchronous request, or the {@link
   * Claimant} of a select's clause: one field, not three, because a node is one of them and every
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
  private @Nullable Object outcome;

  /**
   * Queue links, guarded by the queue's lock; {@code next} also chains delivered nodes. Not
   * {@code @GuardedBy}: the lock is the queue's, which a node does not know (a blocking node has no
   * reference to it), so the annotation could not name it; WaitQueue touches them only in its own
   * {@code @GuardedBy("lock")} methods.
   */
  @Nullable WaitNode prev;

  @Nullable WaitNode next;

  /** {@code System.nanoTime()} when queued, kept only when the queue stamps arrivals. */
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

  /**
   * A requester that waits on several queues at once, with one node in each, and takes the first
   * outcome: a select. The engine asks it before it decides a node's outcome, and tells it when a
   * node is delivered, instead of unparking a thread or completing a future.
   */
  public interface Claimant {
    /**
     * Claims the claimant for {@code node}'s outcome: true for the first claim only; false once
     * another of its nodes won, or the claimant gave up. Called under {@code node}'s queue's lock.
     */
    boolean claim(WaitNode node);

    /** {@code node} left its queue and is delivered; without any lock. */
    void delivered(WaitNode node);
  }

  /** The size of the request, as the primitive defines it. */
  public int weight() {
    return weight;
  }

  /** The status: WAITING, SETTLING, or a final one. A volatile read. */
  public int status() {
    return status;
  }

  /**
   * Sets the status: of a node not yet queued (decided at once), of a queued one under its queue's
   * lock, or from SETTLING to a final status (see the class comment).
   */
  public void setStatus(int status) {
    this.status = status;
  }

  /** What the primitive attached to the outcome; read after the final status. */
  public @Nullable Object outcome() {
    return outcome;
  }

  /** Attaches {@code outcome}, before the status that publishes it is written. */
  public void setOutcome(@Nullable Object outcome) {
    this.outcome = outcome;
  }

  /** The node behind this one in its queue, or in a chain of delivered nodes. Lock held. */
  public @Nullable WaitNode next() {
    return next;
  }

  /**
   * How long the node has been queued at {@code now} (a {@code System.nanoTime()}), if its queue
   * stamps arrivals (WaitQueue's constructor); else meaningless. Lock held.
   */
  public long waitedNanos(long now) {
    return now - queuedAt;
  }

  /** Chain {@code a} followed by chain {@code b} (chains of nodes delivered, through next). */
  public static @Nullable WaitNode concat(@Nullable WaitNode a, @Nullable WaitNode b) {
    if (a == null) {
      return b;
    }
    WaitNode end = a;
    while (end.next != null) {
      end = end.next;
    }
    end.next = b;
    return a;
  }

  /** The blocked thread of a blocking request; null for an asynchronous one. */
  public @Nullable Thread thread() {
    return requester instanceof Thread ? (Thread) requester : null;
  }

  /** The future of an asynchronous request; null for a blocking one. */
  public @Nullable NodeFuture<?> future() {
    return requester instanceof NodeFuture ? (NodeFuture<?>) requester : null;
  }

  /** The claimant of a select's node; null for any other request. */
  public @Nullable Claimant claimant() {
    return requester instanceof Claimant ? (Claimant) requester : null;
  }

  /** A node that {@code claimant} queues, one of its several. */
  public static WaitNode claimedBy(Claimant claimant, int weight) {
    return new WaitNode(weight, claimant);
  }

  /** A request of the calling thread, which blocks. */
  public static WaitNode blocking(int weight) {
    return new WaitNode(weight, Thread.currentThread());
  }

  /**
   * The future of a new asynchronous request of {@code queue}, whose node is {@link
   * NodeFuture#node()}: when granted it completes with what {@code grant} makes of the node. A
   * {@code timed} one gets its timer once queued.
   */
  public static <T extends @Nullable Object> NodeFuture<T> async(
      WaitQueue queue, Grant<T> grant, int weight, boolean timed) {
    NodeFuture<T> future = new NodeFuture<>(queue, grant);
    if (timed) {
      future.expectTimer();
    }
    future.node = new WaitNode(weight, future);
    return future;
  }

  /**
   * What a granted request gets, made from its node: the typed grant of one kind of request (a
   * semaphore's permit, a lock's guard, a received value). Made once per primitive and kind, never
   * per request.
   */
  @FunctionalInterface
  public interface Grant<T extends @Nullable Object> {
    /** The grant of {@code node}, granted; called at most once per node. */
    T of(WaitNode node);

    /** The grant of a request that gets nothing: its {@code Void} future completes with null. */
    @SuppressWarnings("NullAway") // null is the one value of Void
    static Void nothing(WaitNode node) {
      return null;
    }
  }

  @Override
  public boolean isPending() {
    return status == WAITING;
  }

  /** Whether the status is final: neither WAITING nor SETTLING. */
  public boolean isFinal() {
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
  public boolean claimForOutcome() {
    Object r = requester;
    if (r instanceof Claimant) {
      return ((Claimant) r).claim(this);
    }
    return CLAIM.compareAndSet(this, OPEN, TAKEN);
  }

  /** Whether a completion of the future from outside may go ahead: false once claimed. */
  public boolean claimForWithdrawal() {
    int c = claim;
    return c == GIVEN_UP || (c == OPEN && CLAIM.compareAndSet(this, OPEN, GIVEN_UP));
  }

  /** True once a completion of the future from outside has claimed the node. */
  public boolean isGivenUp() {
    return claim == GIVEN_UP;
  }

  /** The future of an asynchronous request; completing it from outside withdraws the request. */
  public static final class NodeFuture<T extends @Nullable Object> extends WithdrawingFuture<T> {
    final WaitQueue queue;
    private final Grant<T> grant;

    /** Set once, before the future is returned to anyone. */
    @Nullable WaitNode node;

    /** The request of this future. */
    public WaitNode node() {
      return Objects.requireNonNull(node);
    }

    NodeFuture(WaitQueue queue, Grant<T> grant) {
      this.queue = queue;
      this.grant = grant;
    }

    /** Completes the future with the grant of its node, unless it was given up first. */
    void settleGranted() {
      var unused = settle(grant.of(node())); // false only if given up meanwhile: see Delivery
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
          Objects.requireNonNull(node), timedOut ? TIMED_OUT : CANCELLED, complete);
    }
  }
}
