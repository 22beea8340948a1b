package dev.jeton.internal.engine;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The wait of a blocked thread for the outcome of its queued node: it spins while it is at the head
 * of the queue ({@link Spin}), then parks, until its outcome, its deadline or an interrupt.
 */
final class BlockingWait {
  /*
   * Every turn of the loop looks at the interrupt, then the outcome, then the deadline, and only
   * then spins one step or parks: so a spinning waiter sees an interrupt or its deadline at the
   * next step. The interrupt comes first: an interrupted request that can still be withdrawn
   * throws; one whose outcome was decided meanwhile gives back its grant and throws, unless the
   * outcome cannot be given back (WaitQueue.keepsOutcomeWhenInterrupted).
   *
   * A waiter at the head spins (busy-waits, then yields: Spin's head spin) before it parks, while
   * its queue says so (WaitQueue.spinAtHead), and the granter prewakes a new head
   * (WaitQueue.prewakeHead), so that a strict FIFO handoff costs a cache miss rather than a context
   * switch. The budget is spent once per request (a node reaches the head once), never refilled by
   * a wake-up. Whether to spin is asked once per wake-up, not at each step: the answer may read
   * the primitive's state, the word its holders are writing. A queue whose head may take its grant
   * itself (a barging lock's) is asked to, at the head, before each park (WaitQueue.tryTakeAtHead).
   * A queue whose head
   * waits for another thread that may well be running (a channel's) first spins briefly through
   * Spin's gate, by its score.
   *
   * A turn may park only after reading the status once more since it last took a lock: the park
   * of a thread blocked on the queue's lock (inside tryTakeAtHead) can spend the one unpark that a
   * grant made meanwhile sends, and then the park here would never end.
   *
   * Invariant: the wait returns only with the node GRANTED, and throws only with the node out of
   * the queue and any grant it got given back (unless kept, see above).
   */

  private BlockingWait() {}

  /** See {@link WaitQueue#awaitBlocking}. */
  static void await(WaitQueue queue, WaitNode w, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    long start = System.nanoTime();
    boolean timed = nanos != Long.MAX_VALUE;
    int spins = Spin.HEAD_STEPS;
    boolean spinning = queue.spinAtHead(); // asked again after each park, not at each step
    Spin.Score briefSpin = queue.briefSpin();
    if (briefSpin != null && queue.head() == w) {
      Spin.await(w, briefSpin); // the loop below sees what happened meanwhile
    }
    for (; ; ) {
      if (Thread.interrupted()) {
        if (!queue.withdraw(w, WaitNode.CANCELLED)) {
          awaitFinal(queue, w);
          if (queue.keepsOutcomeWhenInterrupted(w)) {
            Thread.currentThread().interrupt(); // the interrupt came too late, but is kept
            if (w.status == WaitNode.GRANTED) {
              return;
            }
            throw queue.failure(w);
          }
          if (w.status == WaitNode.GRANTED) {
            queue.giveBack(w); // granted as we were interrupted
          }
        }
        throw new InterruptedException();
      }
      int status = w.status;
      if (status == WaitNode.GRANTED) {
        return;
      }
      if (status == WaitNode.SETTLING) {
        LockSupport.park(queue); // no longer withdrawable; its outcome unparks us
        continue;
      }
      if (status != WaitNode.WAITING) {
        throw queue.failure(w);
      }
      long remaining = timed ? nanos - (System.nanoTime() - start) : Long.MAX_VALUE;
      if (remaining <= 0L) {
        if (queue.withdraw(w, WaitNode.TIMED_OUT)) {
          throw queue.timeoutException(w, timeout != null ? timeout : Duration.ofNanos(nanos));
        }
        continue; // left the queue meanwhile: the status says how
      }
      boolean atHead = queue.head() == w;
      if (atHead && spinning && spins > 0) {
        spins--;
        Runnable hook = queue.spinStep;
        if (hook != null) {
          hook.run();
        }
        Spin.headStep(spins);
        continue;
      }
      if (atHead) {
        if (queue.tryTakeAtHead(w)) {
          return; // took its grant itself (a barging lock's head)
        }
        if (w.status != WaitNode.WAITING) {
          continue; // decided meanwhile: and the unpark that told us may be spent, see above
        }
      }
      if (timed) {
        LockSupport.parkNanos(queue, remaining);
      } else {
        LockSupport.park(queue);
      }
      spinning = queue.spinAtHead();
    }
  }

  /**
   * Waits, ignoring interrupts (the caller has one to report), until the node's status is final.
   */
  private static void awaitFinal(WaitQueue queue, WaitNode w) {
    while (!w.isFinal()) {
      LockSupport.park(queue);
    }
  }
}
