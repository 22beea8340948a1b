package dev.jeton;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A reusable meeting point for a number of parties, which can be awaited by blocking or
 * asynchronously: each generation passes when its last party arrives, and the next one starts at
 * once.
 *
 * <h2>Generations</h2>
 *
 * <p>A generation <em>trips</em> when the number of parties arrived and waiting ({@link
 * #arrived()}) reaches {@link #parties()}. The last arrival is made by {@link #await()}, {@link
 * #awaitAsync()}, or {@link #arriveAndDeregister()} (which drops {@code parties} to the count
 * already arrived). The last arriver runs the optional action once, on its own thread, outside any
 * internal lock and before anyone is released; then every party of the generation is released with
 * its {@link Arrival}: indices 0 to {@code parties - 1} in the order the parties arrived, so the
 * last arriver's is {@code parties - 1}. (A party that deregisters takes no index: a generation
 * that trips by {@code arriveAndDeregister} releases the parties that remain, with indices 0 to
 * {@code parties - 1} of the reduced count.) The {@link #generation()} number increments at the
 * trip, so an arrival after the trip belongs to the next generation.
 *
 * <p>Parties can be added ({@link #register()}) and removed ({@link #arriveAndDeregister()}) at any
 * time, also while a generation is under way. When the last parties leave with no one waiting, no
 * generation trips: the barrier has 0 parties until one registers, and awaiting it meanwhile is an
 * error.
 *
 * <h2>Giving up</h2>
 *
 * <p>A party that gives up before its generation trips (its timeout expires, its future is
 * cancelled or completed from outside, its thread is interrupted) takes its arrival back: the
 * others keep waiting for a real last arrival. A future's arrival stops counting before the future
 * completes, so its callbacks, and an arrival made by one of them, never meet it. Once the
 * generation has tripped, its outcome is decided, and giving up is too late: the party passes (or
 * fails with the broken generation) with the others. A blocked party interrupted between the trip
 * and its release (while the action runs) returns its {@link Arrival}, or throws the generation's
 * {@link BarrierBrokenException}, with its interrupt status set again so that the interrupt is not
 * lost, as {@link java.util.concurrent.CyclicBarrier} does; its timeout cannot expire then. A
 * future's cancel or completion from outside then is refused (cancel returns {@code false}), and
 * its timeout does not fire: the future completes with the arrival (or fails with the generation's
 * exception).
 *
 * <h2>Breaking</h2>
 *
 * <p>If the action throws (an exception or an error), or {@link #breakBarrier(Throwable)} is
 * called, every party of the current generation fails with one {@link BarrierBrokenException},
 * whose cause is what the action threw or what {@code breakBarrier} was given; the last arriver
 * throws it too. The generation number advances, and the next generation starts clean: unlike
 * {@link java.util.concurrent.CyclicBarrier}, a barrier is never left permanently broken.
 *
 * <h2>Memory consistency</h2>
 *
 * <p>Actions in each party before it arrives happen-before the action, which happens-before the
 * actions in every party after its {@code await} returns (or its future completes).
 *
 * <h2>Futures</h2>
 *
 * <p>Futures are never completed while an internal lock is held; by default by the thread whose
 * arrival tripped the generation, in constant stack however long a chain of callbacks await again.
 * {@link Builder#completionExecutor(Executor)} moves completions to an executor instead.
 */
public interface Barrier {

  /**
   * Creates a barrier of {@code parties} parties, with no action and no name.
   *
   * @throws IllegalArgumentException if {@code parties} is below 1 or above {@code
   *     Integer.MAX_VALUE - 1}
   */
  static Barrier create(int parties) {
    return builder().parties(parties).build();
  }

  /** Returns a builder for a barrier. */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Arrives and waits, as long as it takes, for the generation to trip.
   *
   * @return this party's arrival
   * @throws BarrierBrokenException if the action threw or the barrier was broken meanwhile
   * @throws IllegalStateException if the barrier has no parties
   * @throws InterruptedException if the thread is interrupted before arriving, or while waiting
   *     before the generation trips: the arrival is taken back. Interrupted after the trip, the
   *     party returns (or throws the generation's {@code BarrierBrokenException}) with its
   *     interrupt status set
   */
  Arrival await() throws InterruptedException;

  /**
   * Arrives and waits at most {@code timeout} for the generation to trip.
   *
   * @return this party's arrival
   * @throws TimeoutException if the timeout expires first; the arrival is taken back
   * @throws BarrierBrokenException if the action threw or the barrier was broken meanwhile
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws IllegalStateException if the barrier has no parties
   * @throws InterruptedException as for {@link #await()}
   */
  Arrival await(Duration timeout) throws InterruptedException, TimeoutException;

  /**
   * Arrives without blocking. The future completes with this party's arrival when the generation
   * trips (at once, if this is the last arrival), or fails with {@link BarrierBrokenException}.
   * Cancelling it, or completing it from outside, before the trip takes the arrival back.
   *
   * @throws IllegalStateException at once if the barrier has no parties
   */
  CompletableFuture<Arrival> awaitAsync();

  /**
   * Like {@link #awaitAsync()}, but the future fails with {@link TimeoutException} if the
   * generation does not trip within {@code timeout}; the arrival is then taken back.
   *
   * @throws IllegalArgumentException at once if {@code timeout} is negative
   * @throws IllegalStateException at once if the barrier has no parties
   */
  CompletableFuture<Arrival> awaitAsync(Duration timeout);

  /**
   * Adds a party, which takes part in the current generation already.
   *
   * @return the current generation, the first the new party takes part in
   * @throws IllegalStateException if the barrier has {@code Integer.MAX_VALUE - 1} parties
   */
  long register();

  /**
   * Arrives in the current generation without waiting, and removes a party: when the others have
   * all arrived, this trips the generation (running the action on this thread).
   *
   * @return the generation arrived in
   * @throws BarrierBrokenException if this trips the generation and the action throws (the party is
   *     removed all the same)
   * @throws IllegalStateException if the barrier has no parties
   */
  long arriveAndDeregister();

  /**
   * Fails every party waiting in the current generation with a {@link BarrierBrokenException} whose
   * cause is {@code cause}, and starts the next generation, clean, even if no one was waiting.
   */
  void breakBarrier(Throwable cause);

  /** The number of parties a generation needs now. */
  int parties();

  /** The number of parties arrived and waiting in the current generation. */
  int arrived();

  /** The number of the current generation: 0 at first, one more at every trip or break. */
  long generation();

  /**
   * One party's passage through the barrier.
   *
   * @param index the party's place in the order of arrival among those that passed: 0 for the
   *     first, {@code parties - 1} for the last
   * @param generation the generation that passed
   */
  record Arrival(int index, long generation) {}

  /** Builds a barrier. Each setter checks its argument at once. */
  final class Builder extends PrimitiveBuilder<Builder> {
    private int parties = -1;
    private @Nullable Runnable action;

    private Builder() {}

    /**
     * The number of parties; required.
     *
     * @throws IllegalArgumentException if {@code parties} is below 1 or above {@code
     *     Integer.MAX_VALUE - 1}
     */
    public Builder parties(int parties) {
      this.parties = FifoBarrier.checkParties(parties);
      return this;
    }

    /** Run by the last arriver of each generation, before anyone is released. */
    public Builder action(Runnable action) {
      this.action = Objects.requireNonNull(action, "action");
      return this;
    }

    /**
     * Builds the barrier.
     *
     * @throws IllegalStateException if no number of parties was set
     */
    public Barrier build() {
      if (parties < 0) {
        throw new IllegalStateException("parties is required: call parties(int) before build()");
      }
      return new FifoBarrier(name, parties, action, completionExecutor);
    }
  }
}
