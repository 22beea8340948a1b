package dev.jeton.internal;

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
 * that released the grant and read by the reporter.
 */
public final class LeakRecord extends PhantomReference<Object> {
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
  private volatile boolean forgotten;

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
   * {@code grant}, watched by {@code record}, was released: it is no leak. The fence keeps the
   * grant reachable until the record is forgotten; without it the collector could find the grant
   * unreachable, and the reporter the record not yet forgotten, while the release still runs. A
   * static method of its own, so that the JIT leaves this rare path out of line.
   */
  public static void forget(LeakRecord record, Object grant) {
    record.forgotten = true;
    LeakRegistry.instance().remove(record);
    Reference.reachabilityFence(grant);
  }

  boolean isForgotten() {
    return forgotten;
  }
}
