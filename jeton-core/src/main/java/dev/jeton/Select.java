package dev.jeton;

import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Waits on several channel operations at once and performs exactly one: Go's {@code select}.
 *
 * <pre>{@code
 * String what = Select.select(
 *     orders.onReceive(order -> "order " + order),
 *     alerts.onReceive(alert -> "alert " + alert),
 *     Select.onTimeout(Duration.ofSeconds(1), () -> "idle"));
 * }</pre>
 *
 * <p>The clauses are receives ({@link Channel#onReceive}, {@link Channel#onReceiveOrClosed}), sends
 * ({@link Channel#onSend}), at most one timeout ({@link #onTimeout}) or at most one default ({@link
 * #otherwise}). The select returns what the winning clause's function makes of its outcome.
 *
 * <h2>Which clause wins</h2>
 *
 * <p>First, the select looks at every channel at once (holding all their locks): of the clauses
 * that can happen now, one happens, chosen at random ({@link #select}) or the first in the order
 * given ({@link #selectBiased}, which may starve the later ones: use it for priorities). If none
 * can, the default clause wins. Otherwise the select waits in every channel's queue, behind those
 * already waiting there, and the first channel to serve it wins; a timeout wins if none has by
 * then. Channels serve a waiting select exactly as they serve a waiting send or receive, in arrival
 * order.
 *
 * <h2>What is atomic</h2>
 *
 * <p>Exactly one clause happens. A send clause that does not win never delivered its value, and the
 * value stays the caller's: the channel's {@code onUndelivered} hook does not see it, even if the
 * select is interrupted, times out or is cancelled. A receive clause that does not win never took a
 * value. A clause on a closed channel can win: a receive after the channel is drained, or any send,
 * then makes the select throw {@link ChannelClosedException} (an {@link Channel#onReceiveOrClosed
 * onReceiveOrClosed} clause wins with an empty {@code Optional} instead, after a {@link
 * Channel#close() close()} without a cause).
 *
 * <p>Not atomic: the winning clause's function runs after the exchange is done, outside any lock,
 * on the selecting thread (for {@link #selectAsync}, on the thread that completes the future). What
 * it throws, the select throws (or fails its future with), but the value was already sent or
 * received. A select over several channels is not a transaction over them: others may send and
 * receive on them in between the select's look and its wait; what holds is that each channel sees
 * the select as one waiting request, which one match ends.
 *
 * <h2>Giving up</h2>
 *
 * <p>An interrupt ends a blocking select with {@link InterruptedException}, unless a clause won
 * first: then the select returns normally with the interrupt status set, since what was handed over
 * cannot be given back. Cancelling the future of {@link #selectAsync} (or completing it in any way
 * from outside) ends the select, unless a clause won first: then {@code cancel} returns {@code
 * false}.
 *
 * <p>A channel may appear in several clauses, but not both to send and to receive (a select would
 * match itself). A clause may be reused in any number of selects.
 */
public final class Select {
  private Select() {}

  /**
   * Waits until one clause happens, choosing at random among those that can happen at once, and
   * returns what its function made.
   *
   * @throws InterruptedException if interrupted before a clause won
   * @throws ChannelClosedException if the winning clause's channel is closed (see the class
   *     comment)
   * @throws IllegalArgumentException if there are no clauses, more than one timeout or default, a
   *     timeout and a default, or a channel both to send to and to receive from
   */
  @SafeVarargs
  public static <R> R select(SelectClause<? extends R>... clauses) throws InterruptedException {
    return Selection.select(checked(clauses, false), false);
  }

  /**
   * {@link #select(SelectClause[])} over a list of clauses.
   *
   * @throws InterruptedException if interrupted before a clause won
   */
  public static <R> R select(List<? extends SelectClause<? extends R>> clauses)
      throws InterruptedException {
    return Selection.select(checked(toArray(clauses), false), false);
  }

  /**
   * As {@link #select(SelectClause[])}, but of the clauses that can happen at once, the first in
   * the order given wins.
   *
   * @throws InterruptedException if interrupted before a clause won
   */
  @SafeVarargs
  public static <R> R selectBiased(SelectClause<? extends R>... clauses)
      throws InterruptedException {
    return Selection.select(checked(clauses, false), true);
  }

  /**
   * {@link #selectBiased(SelectClause[])} over a list of clauses.
   *
   * @throws InterruptedException if interrupted before a clause won
   */
  public static <R> R selectBiased(List<? extends SelectClause<? extends R>> clauses)
      throws InterruptedException {
    return Selection.select(checked(toArray(clauses), false), true);
  }

  /**
   * As {@link #select(SelectClause[])}, without blocking: the future completes with what the
   * winning clause's function made, or fails with what it threw, or with {@link
   * ChannelClosedException}.
   *
   * @throws IllegalArgumentException for the clauses {@link #select(SelectClause[])} refuses
   */
  @SafeVarargs
  public static <R> CompletableFuture<R> selectAsync(SelectClause<? extends R>... clauses) {
    return Selection.selectAsync(checked(clauses, true), false);
  }

  /** {@link #selectAsync(SelectClause[])} over a list of clauses. */
  public static <R> CompletableFuture<R> selectAsync(
      List<? extends SelectClause<? extends R>> clauses) {
    return Selection.selectAsync(checked(toArray(clauses), false), false);
  }

  /** {@link #selectAsync(SelectClause[])} that prefers the first clause that can happen at once. */
  @SafeVarargs
  public static <R> CompletableFuture<R> selectBiasedAsync(SelectClause<? extends R>... clauses) {
    return Selection.selectAsync(checked(clauses, true), true);
  }

  /** {@link #selectBiasedAsync(SelectClause[])} over a list of clauses. */
  public static <R> CompletableFuture<R> selectBiasedAsync(
      List<? extends SelectClause<? extends R>> clauses) {
    return Selection.selectAsync(checked(toArray(clauses), false), true);
  }

  /**
   * A clause that wins if no other has after {@code timeout}, counted from the start of the select;
   * {@code then} makes the select's result.
   *
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public static <R> SelectClause<R> onTimeout(Duration timeout, Supplier<? extends R> then) {
    long nanos = Arguments.toNanos(timeout);
    Objects.requireNonNull(then, "then");
    return new SelectClause<>(null, SelectClause.TIMEOUT, null, nanos, v -> then.get());
  }

  /** A clause that wins if no other can happen at once: the select then never waits. */
  public static <R> SelectClause<R> otherwise(Supplier<? extends R> then) {
    Objects.requireNonNull(then, "then");
    return new SelectClause<>(null, SelectClause.DEFAULT, null, v -> then.get());
  }

  @SuppressWarnings("unchecked")
  private static <R> SelectClause<? extends R>[] toArray(
      List<? extends SelectClause<? extends R>> clauses) {
    return clauses.toArray(new SelectClause[0]);
  }

  /**
   * {@code clauses}, checked, copied if {@code copy}: an async select keeps its array after the
   * call returns, where the caller may change it; a blocking select is done with it by then, and a
   * list's array is new already.
   */
  private static <R> SelectClause<? extends R>[] checked(
      SelectClause<? extends R>[] clauses, boolean copy) {
    SelectClause<? extends R>[] checked = copy ? clauses.clone() : clauses;
    if (checked.length == 0) {
      throw new IllegalArgumentException("a select needs at least one clause");
    }
    boolean fallback = false;
    for (int i = 0; i < checked.length; i++) {
      SelectClause<? extends R> clause = Objects.requireNonNull(checked[i], "clause");
      if (clause.kind == SelectClause.TIMEOUT || clause.kind == SelectClause.DEFAULT) {
        if (fallback) {
          throw new IllegalArgumentException(
              "a select takes one timeout or one default clause, not both nor two: " + clause);
        }
        fallback = true;
      }
      for (int j = 0; j < i; j++) {
        if (clause.channel != null
            && checked[j].channel == clause.channel
            && checked[j].isSend() != clause.isSend()) {
          throw new IllegalArgumentException(
              "a select cannot both send to and receive from one channel: " + clause.channel);
        }
      }
    }
    return checked;
  }
}
