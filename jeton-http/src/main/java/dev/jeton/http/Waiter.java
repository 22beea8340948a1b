package dev.jeton.http;

import dev.jeton.internal.engine.ObtrudeRefusingFuture;
import dev.jeton.internal.engine.RankOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A request queued in an {@link AdmissionQueue}, and the future of its decision: decided by whoever
 * takes it out of the queue (see the queue's Overview). Its caller's {@code cancel}, {@code
 * complete} and {@code completeExceptionally} take it out if it still waits, and return false if
 * someone else has; the ways to complete it that would bypass that are refused.
 *
 * <p>A waiter in no queue (refused at the door, or waiting for a semaphore that may block to answer
 * in best-effort mode) is taken by the first {@link #take()}: its decider's, or its caller's cancel
 * or complete.
 *
 * <p>First completion wins here too, but the claim is not the core's {@code WithdrawingFuture}'s.
 * There the owner claims the future only as it completes it ({@code settle}), and a grant that
 * loses to a completion from outside is given back. Here whoever takes the waiter out of the queue,
 * under the queue's lock, has claimed it, before it makes its decision: the pump makes a ticket
 * (counted in flight, the start of an adaptive limit's sample) only for a waiter nobody else can
 * complete any more, so a grant is never made and retracted, and a caller's cancel that comes after
 * the removal answers false at once even though the decision is not visible yet. So it refuses
 * obtrude as every Jeton future does ({@link ObtrudeRefusingFuture}) and keeps its own claim;
 * {@code completeAsync}, which would complete it without the claim, is refused too.
 */
final class Waiter extends ObtrudeRefusingFuture<Decision> implements RankOrder.Ranked {
  final int priority;
  final long seq;
  final long enqueuedNanos;
  final boolean queued; // false: refused at the door, never in the queue
  private final @Nullable AdmissionQueue owner;
  private final AtomicBoolean taken = new AtomicBoolean(); // in no queue: who decides it

  Waiter(int priority, long seq, long enqueuedNanos, @Nullable AdmissionQueue owner) {
    this.priority = priority;
    this.seq = seq;
    this.enqueuedNanos = enqueuedNanos;
    this.queued = owner != null;
    this.owner = owner;
  }

  @Override
  public int priority() {
    return priority;
  }

  @Override
  public long enqueuedNanos() {
    return enqueuedNanos;
  }

  @Override
  public long seq() {
    return seq;
  }

  /** Takes a waiter in no queue to decide it: true for the first caller only. */
  boolean take() {
    return taken.compareAndSet(false, true);
  }

  /** Completes it with the control's decision: only by whoever took it out of the queue. */
  void decide(Decision decision) {
    super.complete(decision);
  }

  /**
   * Withdraws the request if it still waits, and only then: once someone has taken it out of the
   * queue to decide it (the pump, its timeout, a newcomer, close), its decision is on the way and
   * this returns false, as for a decided request.
   */
  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    return withdrawn() ? super.cancel(mayInterruptIfRunning) : isCancelled();
  }

  /** As {@link #cancel}, with the caller's own decision, which the control does not count. */
  @Override
  public boolean complete(Decision decision) {
    return withdrawn() && super.complete(decision);
  }

  /** As {@link #cancel}, with the caller's own failure. */
  @Override
  public boolean completeExceptionally(Throwable failure) {
    return withdrawn() && super.completeExceptionally(failure);
  }

  /** Refused: it would make a decision without taking the waiter out of the queue. */
  @Override
  public CompletableFuture<Decision> completeAsync(
      Supplier<? extends Decision> supplier, Executor executor) {
    throw new UnsupportedOperationException(
        "completeAsync is not supported by an admission's future: cancel or complete it to"
            + " withdraw the request");
  }

  /** Takes it out of the queue if it still waits there (else takes it); false if someone did. */
  private boolean withdrawn() {
    AdmissionQueue q = owner;
    return q == null ? take() || isDone() : isDone() || q.remove(this);
  }
}
