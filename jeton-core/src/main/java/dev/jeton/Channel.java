package dev.jeton;

import java.time.Duration;
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
 * A queue through which senders hand values to receivers, one value to one receiver, waiting by
 * blocking or asynchronously: a CSP channel.
 *
 * <h2>Capacity and overflow</h2>
 *
 * <p>A {@linkplain #rendezvous() rendezvous} channel holds nothing: a send waits until a receiver
 * takes its value. A {@linkplain #buffered(int) buffered} channel holds up to its capacity; when it
 * is full, its {@link Overflow} policy decides: a send waits ({@link Overflow#WAIT}, the default),
 * or the oldest buffered value is dropped to make room ({@link Overflow#DROP_OLDEST}; a buffer of 1
 * that drops the oldest is a <em>conflated</em> channel, which keeps the latest value), or the
 * value being sent is dropped ({@link Overflow#DROP_NEWEST}). An {@linkplain #unlimited()
 * unlimited} channel never makes a send wait.
 *
 * <h2>Order</h2>
 *
 * <p>Values are received in the order they were accepted. Waiting senders are served in arrival
 * order, and so are waiting receivers; blocking and asynchronous callers share those queues. {@link
 * #trySend} and {@link #tryReceive} never jump ahead of anyone waiting.
 *
 * <h2>Closing and cancelling</h2>
 *
 * <p>{@link #close()} refuses new sends; receivers drain what is buffered, and the sends already
 * waiting, then learn that the channel is closed: {@link #receive()} throws {@link
 * ChannelClosedException}, {@link #receiveOrClosed()} returns an empty {@code Optional}, and
 * iteration ends. {@link #close(Throwable)} does the same, except that once drained, receivers fail
 * with a {@code ChannelClosedException} whose cause is the given cause. {@link #cancel()} drops
 * what is buffered and fails every waiting sender and receiver, and every later one.
 *
 * <h2>Undelivered values</h2>
 *
 * <p>A value given to a send belongs to the channel from the moment the send is called (unless the
 * call refuses it outright: a {@code null}, {@link #trySend} returning false, or a {@link #onSend
 * select's send clause} that did not win, or won on a closed or cancelled channel): it reaches
 * exactly one receiver, or else the {@link Builder#onUndelivered onUndelivered} hook, exactly once.
 * The hook sees values dropped by overflow, buffered at {@link #cancel()}, and given to a send that
 * failed (the channel was closed or cancelled, the send timed out, was cancelled or interrupted),
 * so values that hold resources can be released. It runs without any internal lock held, on the
 * thread that dropped the value (for a send that gave up, the thread that gave it up); what it
 * throws is not caught.
 *
 * <h2>Giving up</h2>
 *
 * <p>A send or receive that gives up (its timeout expires, its future is cancelled or completed
 * from outside, its thread is interrupted) leaves its queue, before its future completes. Once its
 * value is handed over it can no longer give up: cancelling its future returns {@code false} and
 * the future completes as usual, a blocked caller interrupted then returns normally with its
 * interrupt status set. So a send that gave up never delivers its value, and a receive that gave up
 * never took one.
 *
 * <h2>Memory consistency</h2>
 *
 * <p>Actions in a thread before it sends a value happen-before the actions after the receive of
 * that value returns (or its future completes) in another thread.
 *
 * <h2>Futures</h2>
 *
 * <p>Futures are never completed while an internal lock is held; by default by the thread that
 * matched them, in constant stack however long a chain of callbacks sends or receives again. {@link
 * Builder#completionExecutor(Executor)} moves completions to an executor instead.
 *
 * @param <T> the type of the values
 */
public interface Channel<T> extends Iterable<T> {

  /** Creates a channel that holds nothing: each send waits for a receiver. */
  static <T> Channel<T> rendezvous() {
    return Channel.<T>builder().build();
  }

  /**
   * Creates a channel that holds up to {@code capacity} values; a send to a full one waits.
   *
   * @throws IllegalArgumentException if {@code capacity} is negative
   */
  static <T> Channel<T> buffered(int capacity) {
    return Channel.<T>builder().capacity(capacity).build();
  }

  /** Creates a channel without a bound: a send never waits. */
  static <T> Channel<T> unlimited() {
    return Channel.<T>builder().unlimited().build();
  }

  /** Returns a builder for a channel; by default a rendezvous channel. */
  static <T> Builder<T> builder() {
    return new Builder<>();
  }

  /** What a send to a full buffered channel does. */
  enum Overflow {
    /** The send waits for room. */
    WAIT,
    /** The oldest buffered value is dropped (to the undelivered hook) to make room. */
    DROP_OLDEST,
    /** The value being sent is dropped (to the undelivered hook); the send succeeds. */
    DROP_NEWEST
  }

  // ---------------------------------------------------------------- sending

  /**
   * Sends {@code value}, waiting while the channel is full (or, for a rendezvous channel, until a
   * receiver takes it).
   *
   * @throws NullPointerException if {@code value} is null
   * @throws ChannelClosedException if the channel is closed or cancelled, or is cancelled while the
   *     send waits
   * @throws InterruptedException if the thread is interrupted before the value is handed over
   */
  void send(T value) throws InterruptedException;

  /**
   * Sends {@code value}, waiting at most {@code timeout}.
   *
   * @throws NullPointerException if {@code value} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws ChannelClosedException if the channel is closed or cancelled, or is cancelled while the
   *     send waits
   * @throws TimeoutException if the value could not be handed over in time
   * @throws InterruptedException if the thread is interrupted before the value is handed over
   */
  void send(T value, Duration timeout) throws InterruptedException, TimeoutException;

  /**
   * Sends {@code value} asynchronously: the future completes when the value is accepted, or fails
   * with {@link ChannelClosedException}. Cancelling it withdraws the send if the value is not
   * handed over yet.
   *
   * @throws NullPointerException if {@code value} is null
   */
  CompletableFuture<Void> sendAsync(T value);

  /**
   * Sends {@code value} asynchronously, failing the future with {@link TimeoutException} if the
   * value is not accepted within {@code timeout}.
   *
   * @throws NullPointerException if {@code value} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  CompletableFuture<Void> sendAsync(T value, Duration timeout);

  /**
   * Sends {@code value} if that needs no wait: true if it was accepted (a full channel with a drop
   * policy accepts it), false if the channel is full or closed, in which case the value stays the
   * caller's and the undelivered hook does not see it.
   *
   * @throws NullPointerException if {@code value} is null
   */
  boolean trySend(T value);

  // ---------------------------------------------------------------- receiving

  /**
   * Receives the next value, waiting for one.
   *
   * @throws ChannelClosedException if the channel is closed and drained (with the close's cause, if
   *     any), or cancelled
   * @throws InterruptedException if the thread is interrupted before a value is taken
   */
  T receive() throws InterruptedException;

  /**
   * Receives the next value, waiting at most {@code timeout}.
   *
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws ChannelClosedException if the channel is closed and drained (with the close's cause, if
   *     any), or cancelled
   * @throws TimeoutException if no value came in time
   * @throws InterruptedException if the thread is interrupted before a value is taken
   */
  T receive(Duration timeout) throws InterruptedException, TimeoutException;

  /**
   * Receives the next value, or an empty {@code Optional} once the channel is closed and drained:
   * the form for a receive loop.
   *
   * @throws ChannelClosedException if the channel was closed with a cause, or cancelled
   * @throws InterruptedException if the thread is interrupted before a value is taken
   */
  Optional<T> receiveOrClosed() throws InterruptedException;

  /**
   * Receives the next value asynchronously; the future fails with {@link ChannelClosedException}
   * when the channel is closed and drained, or cancelled. Cancelling it withdraws the receive if no
   * value was taken yet.
   */
  CompletableFuture<T> receiveAsync();

  /**
   * Receives the next value asynchronously, failing the future with {@link TimeoutException} if
   * none comes within {@code timeout}.
   *
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  CompletableFuture<T> receiveAsync(Duration timeout);

  /**
   * Receives the next value asynchronously, or an empty {@code Optional} once the channel is closed
   * and drained; the future fails with {@link ChannelClosedException} if it was closed with a
   * cause, or cancelled.
   */
  CompletableFuture<Optional<T>> receiveOrClosedAsync();

  /**
   * Receives the next value if one is ready: buffered, or offered by a waiting sender. Empty if
   * there is none, or the channel is closed and drained, or cancelled.
   */
  Optional<T> tryReceive();

  // ---------------------------------------------------------------- iterating

  /**
   * A blocking iterator that receives values until the channel is closed and drained. Its {@code
   * hasNext} waits; if the thread is interrupted meanwhile it throws {@link
   * java.util.concurrent.CancellationException} with the interrupt status set again; a channel
   * closed with a cause, or cancelled, makes it throw {@link ChannelClosedException}. Several
   * iterators compete for the values.
   */
  @Override
  java.util.Iterator<T> iterator();

  /**
   * A sequential stream of the values received until the channel is closed; see {@link
   * #iterator()}.
   */
  Stream<T> stream();

  /**
   * Receives values asynchronously and passes each to {@code action}, one at a time, until the
   * channel is closed and drained: then the future completes. It fails with what {@code action}
   * throws, or with {@link ChannelClosedException} if the channel was closed with a cause or
   * cancelled. Cancelling it stops the loop; a value taken at that moment goes to the undelivered
   * hook.
   */
  CompletableFuture<Void> forEachAsync(Consumer<? super T> action);

  /**
   * A {@link Flow.Publisher} of the values received, with backpressure: each subscriber receives
   * values only as it requests them, and completes when the channel is closed and drained (or fails
   * with the close's cause, or when cancelled). Several subscribers compete for the values. A value
   * taken for a subscriber that cancels meanwhile goes to the undelivered hook.
   */
  Flow.Publisher<T> asPublisher();

  // ---------------------------------------------------------------- closing

  /**
   * A {@link Select} clause that receives a value from this channel; {@code then} makes the
   * select's result from it. If the clause wins once the channel has ended, the select throws
   * {@link ChannelClosedException}.
   */
  <R> SelectClause<R> onReceive(Function<? super T, ? extends R> then);

  /**
   * A {@link Select} clause that receives a value from this channel, or learns that it is closed
   * and drained: {@code then} gets the value, or an empty {@code Optional}. After {@link
   * #close(Throwable)} or {@link #cancel()}, the select throws {@link ChannelClosedException}
   * instead.
   */
  <R> SelectClause<R> onReceiveOrClosed(Function<? super Optional<T>, ? extends R> then);

  /**
   * A {@link Select} clause that sends {@code value} to this channel; {@code then} makes the
   * select's result once it is sent (accepted by the channel, as {@link #send} is). If the clause
   * does not win, the value was not sent and stays the caller's. If the channel is closed, the
   * clause wins and the select throws {@link ChannelClosedException}; the value stays the caller's
   * then too (also when the channel is cancelled while the select waits), and the undelivered hook
   * does not see it.
   *
   * @throws NullPointerException if {@code value} is null
   */
  <R> SelectClause<R> onSend(T value, Supplier<? extends R> then);

  /**
   * Refuses new sends; receivers drain what is buffered and the waiting sends, then learn that the
   * channel is closed. Returns false if it was closed or cancelled already (which this call then
   * leaves as it was).
   */
  boolean close();

  /**
   * As {@link #close()}, but once drained, receivers fail with a {@link ChannelClosedException}
   * whose cause is {@code cause}.
   */
  boolean close(Throwable cause);

  /**
   * Drops what is buffered (to the undelivered hook), fails every waiting sender (whose values go
   * to the hook too) and receiver with {@link ChannelClosedException}, and every later send and
   * receive. Does nothing if already cancelled.
   */
  void cancel();

  // ---------------------------------------------------------------- inspection

  /** Whether {@link #close()}, {@link #close(Throwable)} or {@link #cancel()} was called. */
  boolean isClosed();

  /** The number of values buffered now (not counting waiting sends). */
  int size();

  /** The capacity: 0 for a rendezvous channel, {@code Integer.MAX_VALUE} if unlimited. */
  int capacity();

  /** A builder for a channel; its setters check their argument at once. */
  final class Builder<T> {
    private int capacity;
    private Overflow overflow = Overflow.WAIT;
    private @Nullable Consumer<? super T> onUndelivered;
    private @Nullable Executor completionExecutor;

    private Builder() {}

    /**
     * The number of values the channel holds: 0 (the default) for a rendezvous channel.
     *
     * @throws IllegalArgumentException if {@code capacity} is negative
     */
    public Builder<T> capacity(int capacity) {
      if (capacity < 0) {
        throw new IllegalArgumentException("capacity must be 0 or more, was " + capacity);
      }
      this.capacity = capacity;
      return this;
    }

    /** No bound: a send never waits. */
    public Builder<T> unlimited() {
      this.capacity = Integer.MAX_VALUE;
      return this;
    }

    /**
     * What a send to a full channel does; {@link Overflow#WAIT} by default. A policy that drops
     * needs a bounded capacity of 1 or more ({@link #build()} checks).
     */
    public Builder<T> overflow(Overflow overflow) {
      this.overflow = Objects.requireNonNull(overflow, "overflow");
      return this;
    }

    /** Sees every value that was sent but will never be received; see the channel's comment. */
    public Builder<T> onUndelivered(Consumer<? super T> onUndelivered) {
      this.onUndelivered = Objects.requireNonNull(onUndelivered, "onUndelivered");
      return this;
    }

    /**
     * Completes futures on {@code executor} instead of on the thread that matched them. If the
     * executor rejects a completion, it runs on that thread.
     */
    public Builder<T> completionExecutor(Executor executor) {
      this.completionExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Builds the channel.
     *
     * @throws IllegalArgumentException if a drop policy was set with a capacity of 0 or without a
     *     bound
     */
    public Channel<T> build() {
      if (overflow != Overflow.WAIT && (capacity == 0 || capacity == Integer.MAX_VALUE)) {
        throw new IllegalArgumentException(
            "overflow "
                + overflow
                + " needs a bounded capacity of 1 or more, was "
                + (capacity == 0 ? "0 (rendezvous)" : "unlimited"));
      }
      return new FifoChannel<>(capacity, overflow, onUndelivered, completionExecutor);
    }
  }
}
