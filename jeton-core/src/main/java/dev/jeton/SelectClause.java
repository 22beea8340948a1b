package dev.jeton;

import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One of the alternatives of a {@link Select}: a receive from a channel ({@link Channel#onReceive},
 * {@link Channel#onReceiveOrClosed}), a send to one ({@link Channel#onSend}), a timeout ({@link
 * Select#onTimeout}) or a default ({@link Select#otherwise}), with what to make of it when it is
 * the one that happens.
 *
 * <p>A clause is immutable: it may be kept and used in any number of selects, by any number of
 * threads, at once (a send clause then offers the same value in each).
 *
 * @param <R> what the select returns when this clause wins
 */
public final class SelectClause<R> {
  static final int TIMEOUT = -1;
  static final int DEFAULT = -2;

  /** ChannelQueue.SEND, RECEIVE or RECEIVE_OR_CLOSED; or TIMEOUT, or DEFAULT. */
  final int kind;

  /** The channel of a send or receive; null for a timeout or default. */
  final @Nullable ChannelQueue channel;

  /** The value of a send; null for the others. */
  final @Nullable Object value;

  /** How long a timeout waits; 0 for the others. */
  final long nanos;

  /**
   * Makes the select's result from the clause's outcome: the value received (null for "closed" on a
   * {@code onReceiveOrClosed}), ignored by the others.
   */
  private final Function<@Nullable Object, ? extends R> then;

  SelectClause(
      @Nullable ChannelQueue channel,
      int kind,
      @Nullable Object value,
      Function<@Nullable Object, ? extends R> then) {
    this(channel, kind, value, 0L, then);
  }

  SelectClause(
      @Nullable ChannelQueue channel,
      int kind,
      @Nullable Object value,
      long nanos,
      Function<@Nullable Object, ? extends R> then) {
    this.channel = channel;
    this.kind = kind;
    this.value = value;
    this.nanos = nanos;
    this.then = then;
  }

  /** The select's result when this clause won with {@code outcome}. */
  R complete(@Nullable Object outcome) {
    return then.apply(outcome);
  }

  boolean isSend() {
    return kind == ChannelQueue.SEND;
  }

  @Override
  public String toString() {
    switch (kind) {
      case TIMEOUT:
        return "SelectClause[timeout after " + nanos + " ns]";
      case DEFAULT:
        return "SelectClause[default]";
      default:
        return "SelectClause["
            + (isSend() ? "send " + value + " to " : "receive from ")
            + channel
            + "]";
    }
  }
}
