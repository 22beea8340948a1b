package dev.jeton;

import dev.jeton.internal.Arguments;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.Timer;
import dev.jeton.internal.engine.WaitNode;
import java.time.Duration;
import java.util.Iterator;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The in-process {@link Channel}: its API (blocking, timed, asynchronous and try forms, views,
 * select clauses) over the state machine of {@link ChannelQueue}, where a send or receive that
 * waits is a queued node. The contract is on {@link Channel}; ChannelQueue explains how it is kept.
 */
final class FifoChannel<T> extends ChannelQueue implements Channel<T> {
  FifoChannel(
      int capacity,
      Overflow overflow,
      @Nullable Consumer<? super T> onUndelivered,
      @Nullable Executor completionExecutor) {
    this(capacity, overflow, onUndelivered, completionExecutor, Timer.shared());
  }

  /** With the timers of timed asynchronous requests: for tests. */
  FifoChannel(
      int capacity,
      Overflow overflow,
      @Nullable Consumer<? super T> onUndelivered,
      @Nullable Executor completionExecutor,
      Deadlines timers) {
    super(capacity, overflow, onUndelivered, completionExecutor, timers);
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
    Object result = sendOrQueue(value, null, true);
    if (result instanceof WaitNode) {
      awaitBlocking((WaitNode) result, nanos, timeout); // a withdrawal reports the value
    } else if (result == CLOSED_FOR_SEND) {
      throw sendFailure();
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
    WaitNode.NodeFuture<Void> f =
        WaitNode.async(this, WaitNode.Grant::nothing, SEND, nanos != Long.MAX_VALUE);
    WaitNode w = f.node();
    Object result = sendOrQueue(value, w, true);
    if (result == SENT) {
      w.setStatus(WaitNode.GRANTED);
    } else if (result == CLOSED_FOR_SEND) {
      w.setOutcome(sendFailure());
      w.setStatus(WaitNode.FAILED_CLOSED);
    }
    return futureOf(
        f, result == w, nanos, () -> timeoutException(w, Objects.requireNonNull(timeout)));
  }

  @Override
  public boolean trySend(T value) {
    Objects.requireNonNull(value, "value");
    return sendOrQueue(value, null, false) == SENT;
  }

  // ---------------------------------------------------------------- receiving

  @Override
  public T receive() throws InterruptedException {
    try {
      return valueOf(Objects.requireNonNull(receive(RECEIVE, Long.MAX_VALUE, null)));
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public T receive(Duration timeout) throws InterruptedException, TimeoutException {
    return valueOf(Objects.requireNonNull(receive(RECEIVE, Arguments.toNanos(timeout), timeout)));
  }

  @Override
  public Optional<T> receiveOrClosed() throws InterruptedException {
    try {
      return valueOrClosed(receive(RECEIVE_OR_CLOSED, Long.MAX_VALUE, null));
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
    Object result = receiveOrQueue(kind, null);
    WaitNode w;
    if (result instanceof WaitNode) {
      w = (WaitNode) result;
      awaitBlocking(w, nanos, timeout);
    } else if (result == ENDED) {
      w = WaitNode.blocking(kind);
      ended(w);
      if (w.status() != WaitNode.GRANTED) {
        throw failure(w);
      }
    } else {
      return result; // received at once: no node made
    }
    return w.outcome();
  }

  @Override
  public CompletableFuture<T> receiveAsync() {
    return receiveAsync(RECEIVE, FifoChannel::received, Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<T> receiveAsync(Duration timeout) {
    return receiveAsync(RECEIVE, FifoChannel::received, Arguments.toNanos(timeout), timeout);
  }

  @Override
  public CompletableFuture<Optional<T>> receiveOrClosedAsync() {
    return receiveAsync(RECEIVE_OR_CLOSED, FifoChannel::receivedOrClosed, Long.MAX_VALUE, null);
  }

  /** A receive of {@code kind}, whose future completes with what {@code grant} makes of it. */
  private <R> CompletableFuture<R> receiveAsync(
      int kind, WaitNode.Grant<R> grant, long nanos, @Nullable Duration timeout) {
    WaitNode.NodeFuture<R> f = WaitNode.async(this, grant, kind, nanos != Long.MAX_VALUE);
    WaitNode w = f.node();
    Object result = receiveOrQueue(kind, w);
    if (result == ENDED) {
      ended(w);
    } else if (result != w) {
      w.setOutcome(result);
      w.setStatus(WaitNode.GRANTED);
    }
    return futureOf(
        f, result == w, nanos, () -> timeoutException(w, Objects.requireNonNull(timeout)));
  }

  /**
   * A value of this channel, as held in its buffer or a node: only values of type T are ever sent
   * into it ({@link #send} and its forms take a T), which is why this cast holds.
   */
  @SuppressWarnings("unchecked")
  private static <T> T valueOf(Object value) {
    return (T) value;
  }

  /** What receiveOrClosed returns for a value, or for null ("closed"). */
  private static <T> Optional<T> valueOrClosed(@Nullable Object value) {
    return value == null ? Optional.empty() : Optional.of(valueOf(value));
  }

  /** A granted receive's value. */
  private static <T> T received(WaitNode node) {
    return valueOf(Objects.requireNonNull(node.outcome()));
  }

  /** A granted receiveOrClosed's value, or "closed". */
  private static <T> Optional<T> receivedOrClosed(WaitNode node) {
    return valueOrClosed(node.outcome());
  }

  @Override
  public Optional<T> tryReceive() {
    Object v;
    AfterUnlock after = new AfterUnlock(this);
    lock.lock();
    try {
      v = pollLocked(after);
    } finally {
      lock.unlock();
    }
    after.run();
    return v == NOTHING || v == ENDED ? Optional.empty() : Optional.of(valueOf(v));
  }

  // ---------------------------------------------------------------- one call, under the lock

  /**
   * Sends {@code value} now, or queues it: SENT (accepted, or dropped by the overflow policy);
   * CLOSED_FOR_SEND (the value went to the undelivered hook if {@code wait}: a trySend's stays the
   * caller's; sendFailure says why); NOTHING (it would wait, and not {@code wait}); or, having
   * queued it, the node: {@code w}, or when null a new blocking node of this thread. A blocking
   * send makes its node only then: through a buffer most sends never wait, and a node per call was
   * most of what a value cost to allocate (BENCHMARKS.md, issue 15).
   */
  private Object sendOrQueue(T value, @Nullable WaitNode w, boolean wait) {
    AfterUnlock after = new AfterUnlock(this);
    Object result;
    lock.lock();
    try {
      result = sendLocked(value, after);
      if (result == CLOSED_FOR_SEND && wait) {
        after.undelivered(value);
      } else if (result == NOTHING && wait) {
        WaitNode node = w != null ? w : WaitNode.blocking(SEND);
        node.setOutcome(value);
        append(node);
        result = node;
      }
    } finally {
      lock.unlock();
    }
    after.run();
    return result;
  }

  /**
   * Why a send found the channel closed (CLOSED_FOR_SEND). The state only moves on (closed, then
   * cancelled), so what is read here is still true when the send returns.
   */
  private ChannelClosedException sendFailure() {
    lock.lock();
    try {
      return closedForSend();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Receives now, or queues: the value received (never a WaitNode: values come from users, who
   * cannot make one); ENDED (closed and drained, or cancelled: see ended); or, having queued it,
   * the node: {@code w}, or when null a new blocking node of this thread for a receive of {@code
   * kind}. A blocking receive makes its node only then, as a send does.
   */
  private Object receiveOrQueue(int kind, @Nullable WaitNode w) {
    AfterUnlock after = new AfterUnlock(this);
    Object result;
    lock.lock();
    try {
      result = pollLocked(after);
      if (result == NOTHING) {
        WaitNode node = w != null ? w : WaitNode.blocking(kind);
        append(node);
        result = node;
      }
    } finally {
      lock.unlock();
    }
    after.run();
    return result;
  }

  /**
   * Gives receiver node {@code w}, never queued, the outcome of a receive that found the channel
   * ended (ENDED): "closed" or the failure. Nothing happened at that receive, and an ended channel
   * stays ended, so the receive takes effect here, where the state is read.
   */
  private void ended(WaitNode w) {
    lock.lock();
    try {
      endLocked(w);
    } finally {
      lock.unlock();
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

  // ---------------------------------------------------------------- select clauses

  @Override
  @SuppressWarnings("unchecked")
  public <R> SelectClause<R> onReceive(Function<? super T, ? extends R> then) {
    Objects.requireNonNull(then, "then");
    // the function itself, not a lambda around it: a clause made inline costs 16 B less; a
    // receive clause's outcome is always a value of the channel (SelectClause.complete)
    return new SelectClause<>(this, RECEIVE, null, (Function<@Nullable Object, R>) then);
  }

  @Override
  public <R> SelectClause<R> onReceiveOrClosed(Function<? super Optional<T>, ? extends R> then) {
    Objects.requireNonNull(then, "then");
    return new SelectClause<>(this, RECEIVE_OR_CLOSED, null, v -> then.apply(valueOrClosed(v)));
  }

  @Override
  public <R> SelectClause<R> onSend(T value, Supplier<? extends R> then) {
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(then, "then");
    return new SelectClause<>(this, SEND, value, v -> then.get());
  }
}
