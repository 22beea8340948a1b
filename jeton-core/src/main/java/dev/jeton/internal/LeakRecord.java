package dev.jeton.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import org.jspecify.annotations.Nullable;

/**
 * A watched grant (see {@link LeakTracker}): a phantom reference to it, with what a report needs.
 * The registry holds the record until the grant is released ({@link #forget}) or collected; the
 * grant holds it too, to forget it, but nothing else does, so a record whose grant was released is
 * garbage with it.
 *
 * <p>Fields: all final but the registry's place ({@code stripe}, {@code slot}, written under the
 * stripe's lock before the grant is handed out) and {@code forgotten}, written once by the thread
 * that released the grant (a release store) and read by the reporter (an acquire load): the
 * volatile write it was cost a fence on every release at {@code paranoid}.
 */
public final class LeakRecord extends PhantomReference<Object> {
  private static final VarHandle FORGOTTEN;

  static {
    try {
      FORGOTTEN =
          MethodHandles.lookup().findVarHandle(LeakRecord.class, "forgotten", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final LeakTracker tracker;
  final String kind;
  final int permits;

  /**
   * When the grant was made: {@code System.nanoTime()} for a sampled grant (one with {@code
   * acquiredAt}), else the registry's coarse clock.
   */
  final long acquiredNanos;

  final @Nullable Throwable acquiredAt;
  final @Nullable Runnable giveBack;

  LeakRegistry.@Nullable Stripe stripe;
  int slot;

  @SuppressWarnings("unused") // through FORGOTTEN
  private boolean forgotten;

  LeakRecord(
      Object grant,
      ReferenceQueue<Object> collected,
      LeakTracker tracker,
      String kind,
      int permits,
      long acquiredNanos,
      @Nullable Throwable acquiredAt,
      @Nullable Runnable giveBack) {
    super(grant, collected);
    this.tracker = tracker;
    this.kind = kind;
    this.permits = permits;
    this.acquiredNanos = acquiredNanos;
    this.acquiredAt = acquiredAt;
    this.giveBack = giveBack;
  }

  /**
   * {@code grant}, watched by {@code record}, was released: it is no leak. For a grant that may be
   * released more than once, from any thread (a guard unlocked twice): it empties the record's slot
   * by compare-and-set. The fence keeps the grant reachable until the record is forgotten; without
   * it the collector could find the grant unreachable, and the reporter the record not yet
   * forgotten, while the release still runs. A static method of its own, so that the JIT leaves
   * this rare path out of line.
   */
  public static void forget(LeakRecord record, Object grant) {
    FORGOTTEN.setRelease(record, true);
    LeakRegistry.removeIfHeld(record);
    Reference.reachabilityFence(grant);
  }

  /**
   * As {@link #forget}, for a {@link ReleaseOnce}, which calls it once ({@link ReleaseOnce#end()}):
   * a release store empties the slot, which saves a fence at {@code paranoid}.
   */
  static void forgetOnce(LeakRecord record, Object grant) {
    FORGOTTEN.setRelease(record, true);
    LeakRegistry.removeReleased(record);
    Reference.reachabilityFence(grant);
  }

  boolean isForgotten() {
    return (boolean) FORGOTTEN.getAcquire(this);
  }
}
