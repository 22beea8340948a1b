package dev.jeton.redis;

import dev.jeton.internal.engine.Spin;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A busy wait, bounded in time, for an outcome from Redis, before a thread that waits for it parks:
 * learnt per handle from how long its waits have been taking.
 *
 * <p>Why: on a virtual machine, parking a thread and waking it again costs far more than the work
 * of a round trip. With a server on the same machine, a blocking acquire and an awaited release
 * took 396 µs when the caller parked at once and 228 µs when it spun through the wait
 * (RedisBenchmark, 2-core VM, decision 61): while every thread of the machine sleeps, each wake-up
 * pays for an idle virtual CPU to be woken, and Redis itself spent half as much CPU per call when
 * the caller's core stayed busy. The spin buys that latency with CPU: a spinning caller burns its
 * core for as long as the reply takes.
 *
 * <p>Algorithm: {@code typical} is an exponentially weighted mean (weight 1/8) of how long this
 * handle's waits took, each counted as at most {@link #MAX_COUNTED_NANOS}. A waiter spins while its
 * outcome is pending and for at most twice the typical wait, and only if that is at most {@link
 * #MAX_SPIN_NANOS} and the engine's spinner gate lets it in ({@link Spin#tryEnter}: fewer than half
 * the cores' threads of the process spin now, in this wait or a channel's; none on one core). So
 * where replies come within a couple hundred microseconds (a server on the same machine or rack), a
 * waiter spins through them; where they take longer (a distant server, a request that queues behind
 * others, a machine so loaded that every wait is long) the mean rises past the bound and waiters
 * park at once, as they would without this class, until waits are short again. Where threads
 * outnumber cores, as with many threads contending for one semaphore, at most half the cores spin,
 * and the waits, queued, are long.
 *
 * <p>Field access: {@code typicalNanos} is a volatile long, read and written by every waiter of the
 * handle without synchronization: a lost update costs a spin more or less, never an outcome. Every
 * entry into the gate is left in a finally.
 */
final class ReplySpin {
  /** The longest spin: about two round trips of a loaded machine to a server beside it. */
  static final long MAX_SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

  /** A wait longer than this counts as this long, so one long wait does not stop spins for long. */
  static final long MAX_COUNTED_NANOS = 4 * MAX_SPIN_NANOS;

  /**
   * The most threads of the process that spin at once: the engine's gate, half the cores; none on
   * one core, where the thread that would end the wait needs the one core.
   */
  static final int MAX_SPINNERS =
      Runtime.getRuntime().availableProcessors() / 2 == 0 ? 0 : Spin.MAX_SPINNERS;

  /** At first, a wait a quarter of the longest spin: the first waits spin for half of it. */
  private volatile long typicalNanos = MAX_SPIN_NANOS / 4;

  /**
   * Spins while {@code pending} says so, for at most {@code atMostNanos}, if this handle's waits
   * have been short; returns when the wait began, for {@link #waited}.
   */
  long spin(BooleanSupplier pending, long atMostNanos) {
    long began = System.nanoTime();
    long usual = 2 * typicalNanos;
    if (usual > MAX_SPIN_NANOS || !enter()) {
      return began;
    }
    long limit = Math.min(usual, atMostNanos);
    try {
      Thread self = Thread.currentThread();
      while (pending.getAsBoolean() && !self.isInterrupted() && System.nanoTime() - began < limit) {
        Thread.onSpinWait();
      }
    } finally {
      Spin.exit();
    }
    return began;
  }

  /** Counts a wait that began at {@code began} (from {@link #spin}) and is over now. */
  void waited(long began) {
    long took = Math.min(System.nanoTime() - began, MAX_COUNTED_NANOS);
    long typical = typicalNanos;
    typicalNanos = typical + (took - typical) / 8;
  }

  /** For tests: how long this handle's waits typically take. */
  long typicalNanos() {
    return typicalNanos;
  }

  private static boolean enter() {
    return MAX_SPINNERS > 0 && Spin.tryEnter();
  }
}
