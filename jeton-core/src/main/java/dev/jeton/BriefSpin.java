package dev.jeton;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A short busy wait before parking, for a waiter whose other side is most likely running right
 * now: a channel's receiver waiting for the next send, its sender for the next receive.
 *
 * <p>Why: parking and being unparked cost tens of microseconds on a virtual machine, where a
 * round trip between two running threads takes about one; a channel that parked at once was 50
 * times slower than its spinning peers in ping-pong on an idle machine (decision 54). Why not the
 * engine's long spin at the head (decision 8): it ends in thousands of {@code Thread.yield}s and
 * took the core from the other side whenever threads outnumbered cores.
 *
 * <p>Algorithm: at most {@link #MAX_SPINNERS} threads of the process spin at once (half the
 * cores, at least one); a thread that finds them all taken parks at once. When threads outnumber
 * cores, as in a chain of channels with a thread per stage, the one spinner then leaves the
 * other cores to the threads that have work, which is how Go's scheduler bounds its spinning
 * threads. A spinner stops after {@link #STEPS} steps, when its node is no longer waiting, or
 * when it is interrupted (its flag is kept for the caller's wait loop to see).
 *
 * <p>Invariant: {@code spinners} counts the threads inside the spin loop; it never exceeds
 * MAX_SPINNERS, and every increment is undone in a finally.
 */
final class BriefSpin {
  /**
   * Busy-wait steps: 10 to 14 µs on the 2-core AMD EPYC VM of BENCHMARKS.md (512 {@code
   * onSpinWait}s timed in a loop on JDK 17 and 25: the PAUSE instruction is slow on recent AMD
   * cores), ten times a round trip between two running threads. Fewer may serve as well and cost
   * less where threads outnumber cores; not measured yet (decision 54).
   */
  static final int STEPS = 512;

  /** The most threads that spin at once. */
  static final int MAX_SPINNERS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);

  private static final AtomicInteger spinners = new AtomicInteger();

  private BriefSpin() {}

  /**
   * Spins while {@code w} is waiting, unless MAX_SPINNERS threads spin already: the steps spun
   * (0 when it did not spin; STEPS when nothing happened meanwhile).
   */
  static int await(WaitNode w) {
    int n = spinners.get();
    if (n >= MAX_SPINNERS || !spinners.compareAndSet(n, n + 1)) {
      return 0;
    }
    try {
      Thread self = Thread.currentThread();
      int steps = 0;
      while (steps < STEPS && w.status == WaitNode.WAITING && !self.isInterrupted()) {
        Thread.onSpinWait();
        steps++;
      }
      return steps;
    } finally {
      spinners.decrementAndGet();
    }
  }

  /** The threads spinning now: for tests. */
  static int spinners() {
    return spinners.get();
  }
}
