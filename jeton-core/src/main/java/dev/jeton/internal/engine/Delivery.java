package dev.jeton.internal.engine;

import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The delivery of the nodes that left a {@link WaitQueue}: blocked threads are unparked, futures
 * completed, claimants told, always after the queue's lock is released.
 */
final class Delivery {
  /*
   * Completing a future runs its callbacks, which may release, which may grant and complete
   * another future: to keep that in constant stack, each thread delivers through a thread-local
   * trampoline, and a delivery started inside another one is queued for the outer loop instead of
   * recursing. The trampoline is per thread, not per queue: a delivery that releases another
   * primitive queues that one's nodes here, and each node is completed by its own queue.
   *
   * The outermost loop runs with no tracker on its thread (WaitTracking.suspend): the callbacks
   * of the futures it completes are not the tracker's, though a release or send of the tracked
   * code ran them, so a request they queue is not tracked by it (one more thread-local read a
   * delivery).
   *
   * Invariant: `running` is true exactly while the outermost loop of this thread runs; every node
   * added to `pending` is delivered by that loop, once.
   */

  private static final ThreadLocal<Trampoline> TRAMPOLINE =
      ThreadLocal.withInitial(Trampoline::new);

  private Delivery() {}

  /** Delivers a chain of nodes that left {@code queue}, and prewakes its new head. */
  static void deliver(WaitQueue queue, @Nullable WaitNode chain) {
    if (chain == null) {
      queue.prewakeHead();
      return;
    }
    Trampoline t = TRAMPOLINE.get();
    for (WaitNode w = chain; w != null; ) {
      WaitNode next = w.next;
      w.next = null;
      t.pending.add(w);
      w = next;
    }
    queue.prewakeHead();
    if (t.running) {
      return; // an outer deliver() on this thread will get to them
    }
    t.running = true;
    WaitTracking.Tracker tracker = WaitTracking.suspend();
    try {
      WaitNode w;
      while ((w = t.pending.poll()) != null) {
        deliverOne(w);
      }
    } finally {
      t.running = false;
      WaitTracking.resume(tracker);
    }
  }

  /** Delivers one node, which may belong to another queue: its own queue completes it. */
  private static void deliverOne(WaitNode w) {
    Thread thread = w.thread();
    if (thread != null) {
      LockSupport.unpark(thread);
      return;
    }
    WaitNode.NodeFuture<?> future = w.future();
    if (future == null) {
      Objects.requireNonNull(w.claimant()).delivered(w);
      return;
    }
    WaitQueue queue = future.queue;
    if (queue.completionExecutor == null) {
      complete(w); // no executor: no need to wrap the completion
    } else {
      queue.runCompletion(() -> complete(w));
    }
  }

  /** Completes the future of a delivered asynchronous node with its outcome, by its queue. */
  static void complete(WaitNode w) {
    WaitNode.NodeFuture<?> f = Objects.requireNonNull(w.future());
    f.stopTimer();
    if (w.status == WaitNode.GRANTED) {
      if (!f.isGivenUp()) { // else the completion from outside that won gives the grant back
        f.settleGranted();
      }
    } else {
      f.settleExceptionally(f.queue.failure(w));
    }
  }

  /** Per-thread queue of deliveries; see the comment at the top. */
  private static final class Trampoline {
    final ArrayDeque<WaitNode> pending = new ArrayDeque<>();
    boolean running;
  }
}
