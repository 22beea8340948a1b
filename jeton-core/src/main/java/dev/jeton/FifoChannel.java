package dev.jeton;

import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link Channel}, on the {@link WaitQueue} engine: a send or receive that waits
 * is a queued node.
 *
 * <p>The contract is on {@link Channel}; this comment explains how it is kept.
 */
final class FifoChannel<T> extends WaitQueue implements Channel<T> {
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
   * send: under the lock, if the state is not OPEN it fails; if receivers wait, the first one
   * that can be claimed (below) gets the value; else if the buffer has room the value is
   * appended; else the overflow policy drops the oldest or the newest, or (WAIT) the sender's
   * node is queued. receive: the buffer's head, then the first claimable sender's value moves
   * into the buffer (it was full); with nothing buffered, the first claimable sender's value is
   * taken directly (rendezvous); else, if closed, "closed"; else the receiver's node is queued.
   * What must happen outside the lock (deliveries, the undelivered hook) is collected in an
   * After and run once the lock is released.
   *
   * Claiming. A value handed over cannot be given back, so a node is matched only after
   * WaitNode.claimForOutcome succeeds; from then on, a completion of its future from outside is
   * refused (cancel returns false), and a blocked thread interrupted after the match keeps it
   * (keepsGrantWhenInterrupted). A node whose future won the claim (cancelled, timed out) is
   * unlinked by the matcher as CANCELLED, and its withdrawal then finds it gone; if it was a
   * sender, the matcher reports its value undelivered, since the withdrawal will not.
   *
   * How select will plug in: a select registers one node per channel, each pointing to one
   * shared selection whose state is claimed by CAS; claimForOutcome on such a node claims the
   * selection, so the first channel to match it wins and the others see the claim fail and
   * unlink their node as above (or the select withdraws its losing nodes once it has won). A
   * select's sender node carries its value as any sender's does; nothing else changes here.
   *
   * Invariants (lock held, or at any moment the lock is free):
   *   C1. The queue holds only senders or only receivers.
   *   C2. Receivers wait only if the buffer is empty; senders wait only if the buffer is full
   *       (size == capacity; capacity 0 for a rendezvous) and the overflow policy is WAIT.
   *   C3. After cancel, the buffer and the queue are empty, and stay so.
   *   C4. After close, no value enters the buffer except from a waiting sender's node, and no
   *       node is queued except a sender's (queued before) or none: receivers find the buffer
   *       and the senders, and then "closed".
   *   C5. Every value given to a send (not refused outright) ends exactly once: in a receiver's
   *       hands or in the undelivered hook. A queued sender's value is reported by whoever takes
   *       its node out without a match: cancel, its own withdrawal (withdrawn), or a matcher that
   *       finds it given up.
   *
   * Field access: every field below is guarded by the lock, except `closed`, written under it
   * and read without it by isClosed.
   */

  private static final int SEND = 1;
  private static final int RECEIVE = 2;
  private static final int RECEIVE_OR_CLOSED = 3;

  private static final int OPEN = 0;
  private static final int CLOSED = 1;
  private static final int CANCELLED = 2;

  /** What pollLocked returns when nothing is ready and the channel is open. */
  private static final Object NOTHING = new Object();

  /** What pollLocked returns when the channel is closed and drained, or cancelled. */
  private static final Object ENDED = new Object();

  private final int capacity;
  private final Overflow overflow;
  private final @Nullable Consumer<? super T> onUndelivered;
  private final ArrayDeque<Object> buffer = new ArrayDeque<>();
  private int state = OPEN;
  private @Nullable Throwable closeCause;
  private volatile boolean closed;

  FifoChannel(
      int capacity,
      Overflow overflow,
      @Nullable Consumer<? super T> onUndelivered,
      @Nullable Executor completionExecutor) {
    this(capacity, overflow, onUndelivered, completionExecutor, Timers.shared());
  }

  /** With the timers of timed asynchronous requests: for tests. */
  FifoChannel(
      int capacity,
      Overflow overflow,
      @Nullable Consumer<? super T> onUndelivered,
      @Nullable Executor completionExecutor,
      Timers timers) {
    super(completionExecutor, null, timers, null);
    this.capacity = capacity;
    this.overflow = overflow;
    this.onUndelivered = onUndelivered;
  }

  /** What an operation decided under the lock and does once it is released. */
  private final class After {
    @Nullable WaitNode deliveries;
    @Nullable List<Object> undelivered;

    void toDeliver(@Nullable WaitNode chain) {
      deliveries = concat(deliveries, chain);
    }

    void undelivered(Object value) {
      if (undelivered == null) {
        undelivered = new ArrayList<>();
      }
      undelivered.add(value);
    }

    void run() {
      FifoChannel.this.deliver(deliveries);
      if (undelivered != null) {
        undelivered.forEach(FifoChannel.this::undelivered);
      }
    }
  }

  // ---------------------------------------------------------------- sending

  @Override
  public void send(T value) throws InterruptedException {
    try {
      send(value, Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public void send(T value, Duration timeout) throws InterruptedException, TimeoutException {
    send(value, Arguments.toNanos(timeout), timeout);
  }

  private void send(T value, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    Objects.requireNonNull(value, "value");
    if (Thread.interrupted()) {
      undelivered(value);
      throw new InterruptedException();
    }
    WaitNode w = WaitNode.blocking(SEND);
    if (offer(w, value, true)) {
      awaitBlocking(w, nanos, timeout); // a withdrawal reports the value (withdrawn)
    } else if (w.status != WaitNode.GRANTED) {
      throw failure(w);
    }
  }

  @Override
  public CompletableFuture<Void> sendAsync(T value) {
    return sendAsync(value, Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<Void> sendAsync(T value, Duration timeout) {
    return sendAsync(value, Arguments.toNanos(timeout), timeout);
  }

  private CompletableFuture<Void> sendAsync(T value, long nanos, @Nullable Duration timeout) {
    Objects.requireNonNull(value, "value");
    WaitNode w = WaitNode.async(this, SEND, nanos != Long.MAX_VALUE);
    boolean queued = offer(w, value, true);
    return futureOf(w, queued, nanos, () -> timeoutException(w, Objects.requireNonNull(timeout)));
  }

  @Override
  public boolean trySend(T value) {
    Objects.requireNonNull(value, "value");
    WaitNode w = WaitNode.blocking(SEND);
    var unused = offer(w, value, false);
    return w.status == WaitNode.GRANTED;
  }

  /**
   * Offers {@code value} for node {@code w}: true if {@code w} was queued (only if {@code wait});
   * else {@code w}'s status is GRANTED (accepted) or FAILED_CLOSED, and a failed value went to
   * the undelivered hook if {@code wait} (a trySend's stays the caller's).
   */
  private boolean offer(WaitNode w, Object value, boolean wait) {
    w.outcome = value;
    After after = new After();
    boolean queued = false;
    lock.lock();
    try {
      if (state != OPEN) {
        w.outcome = closedForSend();
        w.status = WaitNode.FAILED_CLOSED;
        if (wait) {
          after.undelivered(value);
        }
      } else if (offerLocked(value, after)) {
        w.status = WaitNode.GRANTED;
      } else if (wait) {
        append(w);
        queued = true;
      } else {
        w.status = WaitNode.FAILED_CLOSED; // full: only trySend gets here, and looks at GRANTED
      }
    } finally {
      lock.unlock();
    }
    after.run();
    return queued;
  }

  /** Hands {@code value} to a receiver or the buffer, or drops it by policy; false if full. */
  private boolean offerLocked(Object value, After after) {
    WaitNode r = claimHead(false, after);
    if (r != null) {
      r.outcome = value;
      after.toDeliver(unlinkRun(r.next, WaitNode.GRANTED));
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
   * The head of the queue, claimed, if it is a sender ({@code senders}) or a receiver (not);
   * heads given up on the way are unlinked, a sender's value reported undelivered. Lock held.
   */
  private @Nullable WaitNode claimHead(boolean senders, After after) {
    for (WaitNode h; (h = head()) != null && (h.weight == SEND) == senders; ) {
      if (h.claimForOutcome()) {
        return h;
      }
      var unused = unlinkRun(h.next, WaitNode.CANCELLED); // its withdrawal will find it gone
      if (senders) {
        after.undelivered(Objects.requireNonNull(h.outcome));
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- receiving

  @Override
  @SuppressWarnings("unchecked")
  public T receive() throws InterruptedException {
    try {
      return (T) Objects.requireNonNull(receive(RECEIVE, Long.MAX_VALUE, null));
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public T receive(Duration timeout) throws InterruptedException, TimeoutException {
    return (T) Objects.requireNonNull(receive(RECEIVE, Arguments.toNanos(timeout), timeout));
  }

  @Override
  @SuppressWarnings("unchecked")
  public Optional<T> receiveOrClosed() throws InterruptedException {
    try {
      return Optional.ofNullable((T) receive(RECEIVE_OR_CLOSED, Long.MAX_VALUE, null));
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  /** The value received, or null for "closed" (only for RECEIVE_OR_CLOSED). */
  private @Nullable Object receive(int kind, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    WaitNode w = WaitNode.blocking(kind);
    if (poll(w)) {
      awaitBlocking(w, nanos, timeout);
    } else if (w.status != WaitNode.GRANTED) {
      throw failure(w);
    }
    return w.outcome;
  }

  @Override
  public CompletableFuture<T> receiveAsync() {
    return receiveAsync(RECEIVE, Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<T> receiveAsync(Duration timeout) {
    return receiveAsync(RECEIVE, Arguments.toNanos(timeout), timeout);
  }

  @Override
  public CompletableFuture<Optional<T>> receiveOrClosedAsync() {
    return receiveAsync(RECEIVE_OR_CLOSED, Long.MAX_VALUE, null);
  }

  private <R> CompletableFuture<R> receiveAsync(int kind, long nanos, @Nullable Duration timeout) {
    WaitNode w = WaitNode.async(this, kind, nanos != Long.MAX_VALUE);
    boolean queued = poll(w);
    return futureOf(w, queued, nanos, () -> timeoutException(w, Objects.requireNonNull(timeout)));
  }

  @Override
  @SuppressWarnings("unchecked")
  public Optional<T> tryReceive() {
    Object v;
    After after = new After();
    lock.lock();
    try {
      v = pollLocked(after);
    } finally {
      lock.unlock();
    }
    after.run();
    return v == NOTHING || v == ENDED ? Optional.empty() : Optional.of((T) v);
  }

  /**
   * Receives for node {@code w}: true if it was queued; else its status is GRANTED with the value
   * (or null for "closed") as outcome, or FAILED_CLOSED with the exception.
   */
  private boolean poll(WaitNode w) {
    After after = new After();
    boolean queued = false;
    lock.lock();
    try {
      Object v = pollLocked(after);
      if (v == NOTHING) {
        append(w);
        queued = true;
      } else if (v == ENDED) {
        endLocked(w);
      } else {
        w.outcome = v;
        w.status = WaitNode.GRANTED;
      }
    } finally {
      lock.unlock();
    }
    after.run();
    return queued;
  }

  /** The next value, or NOTHING (none ready, open), or ENDED (closed and drained, or cancelled). */
  private Object pollLocked(After after) {
    Object v = buffer.poll();
    WaitNode s = claimHead(true, after);
    if (s != null) {
      Object offered = Objects.requireNonNull(s.outcome);
      after.toDeliver(unlinkRun(s.next, WaitNode.GRANTED));
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

  /** Gives a receiver that finds the channel ended its outcome: "closed" or the failure. Lock held. */
  private void endLocked(WaitNode w) {
    if (state == CLOSED && closeCause == null && w.weight == RECEIVE_OR_CLOSED) {
      w.outcome = null;
      w.status = WaitNode.GRANTED;
    } else {
      w.outcome = closedForReceive();
      w.status = WaitNode.FAILED_CLOSED;
    }
  }

  // ---------------------------------------------------------------- iterating

  @Override
  public Iterator<T> iterator() {
    return ChannelViews.iterator(this);
  }

  @Override
  public Stream<T> stream() {
    return ChannelViews.stream(this);
  }

  @Override
  public CompletableFuture<Void> forEachAsync(Consumer<? super T> action) {
    return ChannelViews.forEachAsync(this, action);
  }

  @Override
  public Flow.Publisher<T> asPublisher() {
    return new ChannelPublisher<>(this);
  }

  // ---------------------------------------------------------------- closing

  @Override
  public boolean close() {
    return closeWith(null);
  }

  @Override
  public boolean close(Throwable cause) {
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
      if (h == null || h.weight == SEND) {
        return true;
      }
      for (WaitNode w = h; w != null; w = w.next) {
        w.outcome = w.weight == RECEIVE_OR_CLOSED && cause == null ? null : closedForReceive();
      }
      chain =
          concat(
              removeLocked(w -> w.outcome == null, WaitNode.GRANTED),
              unlinkRun(null, WaitNode.FAILED_CLOSED));
    } finally {
      lock.unlock();
    }
    deliver(chain);
    return true;
  }

  @Override
  public void cancel() {
    After after = new After();
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
      for (WaitNode w = head(); w != null; w = w.next) {
        if (w.weight == SEND) {
          after.undelivered(Objects.requireNonNull(w.outcome));
        }
        w.outcome = failure;
      }
      after.toDeliver(unlinkRun(null, WaitNode.FAILED_CLOSED));
    } finally {
      lock.unlock();
    }
    after.run();
  }

  // ---------------------------------------------------------------- the engine's hooks

  @Override
  @Nullable WaitNode afterWithdrawLocked() {
    return null; // a withdrawn send or receive makes nothing else possible (C2)
  }

  /**
   * A waiting sender or receiver waits for the other side, which needs a core to get there: as
   * at a barrier, spinning at the head takes it. Measured with ChannelBenchmark on 2 loaded
   * cores (decision 49): 5 to 15 times slower with the spin in every row.
   */
  @Override
  boolean spinAtHead() {
    return false;
  }

  @Override
  boolean keepsGrantWhenInterrupted() {
    return true; // a value handed over cannot be given back
  }

  @Override
  void withdrawn(WaitNode node) {
    if (node.weight == SEND) {
      undelivered(Objects.requireNonNull(node.outcome)); // C5
    }
  }

  @Override
  @Nullable Object grantedValue(WaitNode node) {
    switch (node.weight) {
      case SEND:
        return null;
      case RECEIVE_OR_CLOSED:
        return Optional.ofNullable(node.outcome);
      default:
        return node.outcome;
    }
  }

  @Override
  void giveBack(WaitNode node, @Nullable Object value) {
    // Claimed nodes refuse completions from outside, so a grant always reaches its requester;
    // were one lost all the same, the value must not be.
    Object v = node.weight == SEND ? null : node.outcome;
    if (v != null) {
      undelivered(v);
    }
  }

  @Override
  RuntimeException failure(WaitNode node) {
    return (ChannelClosedException) Objects.requireNonNull(node.outcome);
  }

  @Override
  TimeoutException timeoutException(WaitNode node, Duration timeout) {
    return new TimeoutException(
        "timed out after "
            + Arguments.format(timeout)
            + (node.weight == SEND ? " waiting to send" : " waiting to receive"));
  }

  /** Passes a value that no receiver will get to the hook, if any. */
  @SuppressWarnings("unchecked")
  void undelivered(Object value) {
    Consumer<? super T> hook = onUndelivered;
    if (hook != null) {
      hook.accept((T) value);
    }
  }

  private ChannelClosedException closedForSend() {
    return new ChannelClosedException(
        state == CANCELLED ? "channel was cancelled" : "channel is closed for sending", closeCause);
  }

  /** Lock held. */
  private ChannelClosedException closedForReceive() {
    return new ChannelClosedException(
        state == CANCELLED
            ? "channel was cancelled"
            : closeCause != null ? "channel was closed: " + closeCause : "channel is closed",
        closeCause);
  }

  // ---------------------------------------------------------------- inspection

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public int size() {
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
  boolean hasEnded() {
    lock.lock();
    try {
      WaitNode h = head();
      return state == CANCELLED
          || (state == CLOSED && buffer.isEmpty() && (h == null || h.weight != SEND));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int capacity() {
    return capacity;
  }

  @Override
  public String toString() {
    lock.lock();
    try {
      return "Channel[capacity="
          + (capacity == Integer.MAX_VALUE ? "unlimited" : capacity)
          + (overflow != Overflow.WAIT ? ", overflow=" + overflow : "")
          + ", size="
          + buffer.size()
          + ", waiting="
          + queueLengthLocked()
          + (head() == null ? "" : head().weight == SEND ? " senders" : " receivers")
          + (state == OPEN ? "" : state == CLOSED ? ", closed" : ", cancelled")
          + "]";
    } finally {
      lock.unlock();
    }
  }
}
