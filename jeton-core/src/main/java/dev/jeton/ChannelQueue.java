package dev.jeton;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.Spin;
import dev.jeton.internal.engine.ThreadCensus;
import dev.jeton.internal.engine.WaitNode;
import dev.jeton.internal.engine.WaitQueue;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The state machine of the in-process {@link Channel}, on the {@link WaitQueue} engine: its buffer,
 * its dual queue of waiting sends and receives, closing and cancelling. {@link FifoChannel} gives
 * it the channel's API (blocking, timed, async and try forms, views), and {@link Selection} waits
 * on several channels through it.
 */
abstract class ChannelQueue extends WaitQueue {
  /*
   * Overview
   *
   * One lock (the queue's) guards the buffer, the state, and the one queue of waiters, which is
   * a dual queue (as in SynchronousQueue): it holds senders or receivers, never both. A node's
   * weight says which: SEND, RECEIVE (fails when closed), RECEIVE_OR_CLOSED (gets "closed" as
   * an empty Optional). A sender's node carries its value in `outcome` from before it is queued;
   * a receiver's node gets the value (or null for "closed") in `outcome` just before its status
   * becomes GRANTED, which publishes it.
   *
   * send (sendLocked): under the lock, if the state is not OPEN it fails; if receivers wait, the
   * first one that can be claimed (below) gets the value; else if the buffer has room the value
   * is appended; else the overflow policy drops the oldest or the newest, or (WAIT) the sender's
   * node is queued. receive (receiveLocked): the buffer's head, then the first claimable
   * sender's value moves into the buffer (it was full); with nothing buffered, the first
   * claimable sender's value is taken directly (rendezvous); else, if closed, "closed"; else the
   * receiver's node is queued. What must happen outside the lock (deliveries, the undelivered
   * hook) is collected in an AfterUnlock and run once the lock is released.
   *
   * Claiming. A value handed over cannot be given back, so a node is matched only after
   * WaitNode.claimForOutcome succeeds; from then on, a completion of its future from outside is
   * refused (cancel returns false), and a blocked thread interrupted after the match keeps it
   * (keepsOutcomeWhenInterrupted). A node whose future won the claim (cancelled, timed out) is
   * unlinked by the matcher as CANCELLED, and its withdrawal then finds it gone; if it was a
   * sender, that withdrawal reports its value undelivered (leftBeforeWithdrawal), on the thread
   * that gave it up. Never the matcher: a receive or a select that has queued its own node must
   * not then throw what the hook throws, leaving that node behind for nobody.
   *
   * Selects. A select queues one node per clause, each pointing to one Selection, whose state
   * claimForOutcome claims: the first channel to match one of its nodes wins, and matchers find
   * the others unclaimable and unlink them as above; the select withdraws those left once it has
   * won. Closing and cancelling claim a select's node before failing it, so that a closed
   * channel can win a select. A select's send value is the select's until its clause wins: a
   * select node that leaves unmatched never reports it undelivered. Selection holds the locks of
   * all its channels (in `id` order, so two selects never deadlock) while it looks for a clause
   * ready at once and queues its nodes; this class never holds one channel's lock while taking
   * another's.
   *
   * Invariants (lock held, or at any moment the lock is free):
   *   C1. The queue holds only senders or only receivers.
   *   C2. Receivers wait only if the buffer is empty; senders wait only if the buffer is full
   *       (size == capacity; capacity 0 for a rendezvous) and the overflow policy is WAIT.
   *   C3. After cancel, the buffer and the queue are empty, and stay so.
   *   C4. After close, no value enters the buffer except from a waiting sender's node, and no
   *       node is queued except a sender's (queued before) or none: receivers find the buffer
   *       and the senders, and then "closed".
   *   C5. Every value given to a send (not refused outright, and not a select's that lost)
   *       ends exactly once: in a receiver's hands or in the undelivered hook. A queued
   *       sender's value is reported by whoever takes its node out without a match: cancel, or
   *       its own withdrawal (withdrawn, or leftBeforeWithdrawal when a matcher found it given
   *       up and unlinked it first).
   *
   * Field access: the fields the lock guards, and the methods called with it held, carry
   * @GuardedBy("lock"), which the build checks. `closed` is written under the lock and read
   * without it by isClosed, so it is volatile and unannotated; briefSpin's own fields are raced
   * on purpose (see Spin.Score).
   */

  static final int SEND = 1;
  static final int RECEIVE = 2;
  static final int RECEIVE_OR_CLOSED = 3;

  private static final int OPEN = 0;
  private static final int CLOSED = 1;
  private static final int CANCELLED = 2;

  /** What pollLocked returns when nothing is ready and the channel is open. */
  static final Object NOTHING = new Object();

  /** What pollLocked returns when the channel is closed and drained, or cancelled. */
  static final Object ENDED = new Object();

  /** What a send returns when the value was accepted (or dropped by the overflow policy). */
  static final Object SENT = new Object();

  /** What a send returns when the channel is closed for sending. */
  static final Object CLOSED_FOR_SEND = new Object();

  private static final AtomicLong IDS = new AtomicLong();

  /** The order in which a select takes the locks of its channels. */
  final long id = IDS.incrementAndGet();

  private final int capacity;
  private final Channel.Overflow overflow;
  private final @Nullable Consumer<Object> onUndelivered;

  @GuardedBy("lock")
  private final ArrayDeque<Object> buffer = new ArrayDeque<>();

  @GuardedBy("lock")
  private int state = OPEN;

  @GuardedBy("lock")
  private @Nullable Throwable closeCause;

  private volatile boolean closed;

  /** Whether this channel's waiters spin before they park. */
  final Spin.Score briefSpin;

  @SuppressWarnings("unchecked")
  ChannelQueue(
      int capacity,
      Channel.Overflow overflow,
      @Nullable Consumer<?> onUndelivered,
      @Nullable Executor completionExecutor,
      Deadlines timers) {
    super(completionExecutor, null, timers, null, false);
    this.capacity = capacity;
    this.briefSpin = new Spin.Score(ThreadCensus.CHANNELS);
    this.overflow = overflow;
    this.onUndelivered = (Consumer<Object>) onUndelivered;
  }

  // ---------------------------------------------------------------- sending

  /**
   * Sends the value in sender node {@code w}'s outcome, if that can be done now: true, and its
   * status is GRANTED (accepted) or FAILED_CLOSED (with the exception as outcome); false if it
   * would have to wait, and {@code w} is untouched. Lock held.
   */
  @GuardedBy("lock")
  final boolean sendLocked(WaitNode w, AfterUnlock after) {
    Object sent = sendLocked(Objects.requireNonNull(w.outcome()), after);
    if (sent == NOTHING) {
      return false;
    }
    if (sent == SENT) {
      w.setStatus(WaitNode.GRANTED);
    } else {
      w.setOutcome(closedForSend());
      w.setStatus(WaitNode.FAILED_CLOSED);
    }
    return true;
  }

  /**
   * Sends {@code value} if that can be done now: SENT (accepted, or dropped by the overflow
   * policy), CLOSED_FOR_SEND, or NOTHING (it would have to wait). Lock held.
   */
  @GuardedBy("lock")
  final Object sendLocked(Object value, AfterUnlock after) {
    if (state != OPEN) {
      return CLOSED_FOR_SEND;
    }
    return offerLocked(value, after) ? SENT : NOTHING;
  }

  /** Hands {@code value} to a receiver or the buffer, or drops it by policy; false if full. */
  @GuardedBy("lock")
  private boolean offerLocked(Object value, AfterUnlock after) {
    WaitNode r = claimHead(false);
    if (r != null) {
      r.setOutcome(value);
      after.toDeliver(unlinkRun(r.next(), WaitNode.GRANTED));
      return true;
    }
    if (buffer.size() < capacity) {
      buffer.add(value);
      return true;
    }
    switch (overflow) {
      case DROP_OLDEST:
        after.undelivered(Objects.requireNonNull(buffer.poll()));
        buffer.add(value);
        return true;
      case DROP_NEWEST:
        after.undelivered(value);
        return true;
      default:
        return false;
    }
  }

  /**
   * The head of the queue, claimed, if it is a sender ({@code senders}) or a receiver (not); heads
   * given up on the way are unlinked (a plain sender's value is then reported by its withdrawal:
   * leftBeforeWithdrawal). Lock held.
   */
  @GuardedBy("lock")
  private @Nullable WaitNode claimHead(boolean senders) {
    for (WaitNode h; (h = head()) != null && (h.weight() == SEND) == senders; ) {
      if (h.claimForOutcome()) {
        return h;
      }
      var unused = unlinkRun(h.next(), WaitNode.CANCELLED); // its withdrawal will find it gone
    }
    return null;
  }

  // ---------------------------------------------------------------- receiving

  /**
   * Receives for receiver node {@code w}, if that can be done now: true, and its status is GRANTED
   * with the value (or null for "closed") as outcome, or FAILED_CLOSED with the exception; false if
   * it would have to wait. Lock held.
   */
  @GuardedBy("lock")
  final boolean receiveLocked(WaitNode w, AfterUnlock after) {
    Object v = pollLocked(after);
    if (v == NOTHING) {
      return false;
    }
    if (v == ENDED) {
      endLocked(w);
    } else {
      w.setOutcome(v);
      w.setStatus(WaitNode.GRANTED);
    }
    return true;
  }

  /** The next value, or NOTHING (none ready, open), or ENDED (closed and drained, or cancelled). */
  @GuardedBy("lock")
  final Object pollLocked(AfterUnlock after) {
    Object v = buffer.poll();
    WaitNode s = claimHead(true);
    if (s != null) {
      Object offered = Objects.requireNonNull(s.outcome());
      after.toDeliver(unlinkRun(s.next(), WaitNode.GRANTED));
      if (v == null) {
        return offered; // rendezvous, or a buffer that was empty: straight from the sender
      }
      buffer.add(offered); // it was full (C2)
    }
    if (v != null) {
      return v;
    }
    return state == OPEN ? NOTHING : ENDED;
  }

  /**
   * Gives a receiver that finds the channel ended its outcome: "closed" or the failure. Lock held.
   */
  @GuardedBy("lock")
  final void endLocked(WaitNode w) {
    if (state == CLOSED && closeCause == null && w.weight() == RECEIVE_OR_CLOSED) {
      w.setOutcome(null);
      w.setStatus(WaitNode.GRANTED);
    } else {
      w.setOutcome(closedForReceive());
      w.setStatus(WaitNode.FAILED_CLOSED);
    }
  }

  // ---------------------------------------------------------------- closing

  public final boolean close() {
    return closeWith(null);
  }

  public final boolean close(Throwable cause) {
    return closeWith(Objects.requireNonNull(cause, "cause"));
  }

  private boolean closeWith(@Nullable Throwable cause) {
    WaitNode chain;
    lock.lock();
    try {
      if (state != OPEN) {
        return false;
      }
      state = CLOSED;
      closeCause = cause;
      closed = true;
      // Waiting senders stay (C4). Waiting receivers mean an empty buffer and no senders (C1,
      // C2): they all end now.
      WaitNode h = head();
      if (h == null || h.weight() == SEND) {
        return true;
      }
      for (WaitNode w = h; w != null; w = w.next()) {
        if (w.claimant() != null) {
          var unused = w.claimForOutcome(); // false: its select won elsewhere, it just leaves
        }
        w.setOutcome(w.weight() == RECEIVE_OR_CLOSED && cause == null ? null : closedForReceive());
      }
      chain =
          WaitNode.concat(
              removeLocked(w -> w.outcome() == null, WaitNode.GRANTED),
              unlinkRun(null, WaitNode.FAILED_CLOSED));
    } finally {
      lock.unlock();
    }
    deliver(chain);
    return true;
  }

  public final void cancel() {
    AfterUnlock after = new AfterUnlock(this);
    lock.lock();
    try {
      if (state == CANCELLED) {
        return;
      }
      state = CANCELLED;
      closed = true;
      buffer.forEach(after::undelivered);
      buffer.clear();
      ChannelClosedException failure = closedForReceive();
      for (WaitNode w = head(); w != null; w = w.next()) {
        if (w.claimant() != null) {
          var unused = w.claimForOutcome(); // the select fails, or has won elsewhere
        } else if (w.weight() == SEND) {
          after.undelivered(Objects.requireNonNull(w.outcome()));
        }
        w.setOutcome(failure);
      }
      after.toDeliver(unlinkRun(null, WaitNode.FAILED_CLOSED));
    } finally {
      lock.unlock();
    }
    after.run();
  }

  // ---------------------------------------------------------------- the engine's hooks

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode afterWithdrawLocked() {
    return null; // a withdrawn send or receive makes nothing else possible (C2)
  }

  /**
   * A waiting sender or receiver waits for the other side, which needs a core to get there: as at a
   * barrier, the engine's long spin at the head takes it (5 to 15 times slower in every row of
   * ChannelBenchmark on 2 loaded cores, decision 49). A brief one, by at most half the cores'
   * threads at once, pays instead (decision 54).
   */
  @Override
  protected boolean spinAtHead() {
    return false;
  }

  @Override
  protected Spin.Score briefSpin() {
    return briefSpin;
  }

  @Override
  protected boolean keepsOutcomeWhenInterrupted(WaitNode node) {
    return node.status() == WaitNode.GRANTED; // a value handed over cannot be given back
  }

  @Override
  protected void withdrawn(WaitNode node) {
    if (node.weight() == SEND && node.claimant() == null) {
      undelivered(Objects.requireNonNull(node.outcome())); // C5
    }
  }

  @Override
  protected void leftBeforeWithdrawal(WaitNode node) {
    // Unlinked as CANCELLED only by a matcher that found it given up (claimHead), which left
    // its value to us (C5); close and cancel end nodes otherwise, and cancel reports them.
    if (node.status() == WaitNode.CANCELLED && node.weight() == SEND && node.claimant() == null) {
      undelivered(Objects.requireNonNull(node.outcome()));
    }
  }

  @Override
  @GuardedBy("lock")
  protected @Nullable WaitNode giveBackLocked(WaitNode node) {
    // A node is matched only once claimed: a completion of its future from outside is refused
    // from then on, and its interrupted thread keeps what it got (keepsOutcomeWhenInterrupted).
    throw new AssertionError("a channel's grant always reaches its requester: " + node);
  }

  @Override
  protected RuntimeException failure(WaitNode node) {
    return (ChannelClosedException) Objects.requireNonNull(node.outcome());
  }

  @Override
  protected TimeoutException timeoutException(WaitNode node, Duration timeout) {
    return new TimeoutException(
        "timed out after "
            + Arguments.format(timeout)
            + (node.weight() == SEND ? " waiting to send" : " waiting to receive"));
  }

  /** Does what {@code after} collected under the lock, once it is released. */
  final void finish(AfterUnlock after) {
    deliver(after.deliveries);
    if (after.undelivered != null) {
      after.undelivered.forEach(this::undelivered);
    }
  }

  /** Takes this channel's lock, for a select that queues on several channels at once. */
  final void lockForSelect() {
    lock.lock();
  }

  /** Releases the lock {@link #lockForSelect} took. */
  final void unlockForSelect() {
    lock.unlock();
  }

  /** Queues a select's node; lock held ({@link #lockForSelect}). */
  @GuardedBy("lock")
  final void appendForSelect(WaitNode w) {
    append(w);
  }

  /** Passes a value that no receiver will get to the hook, if any. */
  final void undelivered(Object value) {
    Consumer<Object> hook = onUndelivered;
    if (hook != null) {
      hook.accept(value);
    }
  }

  /** Lock held. */
  @GuardedBy("lock")
  final ChannelClosedException closedForSend() {
    return new ChannelClosedException(
        state == CANCELLED ? "channel was cancelled" : "channel is closed for sending", closeCause);
  }

  /** Lock held. */
  @GuardedBy("lock")
  private ChannelClosedException closedForReceive() {
    return new ChannelClosedException(
        state == CANCELLED
            ? "channel was cancelled"
            : closeCause != null ? "channel was closed: " + closeCause : "channel is closed",
        closeCause);
  }

  // ---------------------------------------------------------------- inspection

  public final boolean isClosed() {
    return closed;
  }

  public final int size() {
    lock.lock();
    try {
      return buffer.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether the channel has ended: cancelled, or closed with nothing buffered and no sender
   * waiting, so that a receive now ends at once and never takes a value. Once true, stays true.
   */
  final boolean hasEnded() {
    lock.lock();
    try {
      WaitNode h = head();
      return state == CANCELLED
          || (state == CLOSED && buffer.isEmpty() && (h == null || h.weight() != SEND));
    } finally {
      lock.unlock();
    }
  }

  public final int capacity() {
    return capacity;
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      WaitNode h = head();
      return "Channel[capacity="
          + (capacity == Integer.MAX_VALUE ? "unlimited" : capacity)
          + (overflow != Channel.Overflow.WAIT ? ", overflow=" + overflow : "")
          + ", size="
          + buffer.size()
          + ", waiting="
          + queueLengthLocked()
          + (h == null ? "" : h.weight() == SEND ? " senders" : " receivers")
          + (state == OPEN ? "" : state == CLOSED ? ", closed" : ", cancelled")
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
