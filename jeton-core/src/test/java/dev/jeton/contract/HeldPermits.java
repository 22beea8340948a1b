package dev.jeton.contract;

import dev.jeton.Permit;
import java.util.ArrayDeque;
import java.util.Optional;

/**
 * The permits each thread of a Lincheck scenario holds, so that a {@code release} operation gives
 * back only what its own thread's {@code tryAcquire} obtained. A thread's slot is touched only by
 * that thread's operations. Lincheck's {@code ThreadIdGen} numbers the parallel threads from 1, and
 * gives 0 to the init part and {@code threads + 1} to the post part: those have slots too, else a
 * permit taken in the post part would be acquired and then lost, never given back.
 */
public final class HeldPermits {
  private final ArrayDeque<Permit>[] held;

  @SuppressWarnings("unchecked")
  public HeldPermits(int threads) {
    held = new ArrayDeque[threads + 2];
    for (int i = 0; i < held.length; i++) {
      held[i] = new ArrayDeque<>();
    }
  }

  /** Keeps the permit a {@code tryAcquire} obtained, if any; returns whether it did. */
  public boolean keep(int thread, Optional<Permit> permit) {
    permit.ifPresent(held[thread]::push);
    return permit.isPresent();
  }

  /** Releases the thread's latest permit; returns its weight, or 0 if it held none. */
  public int releaseOne(int thread) {
    Permit permit = held[thread].poll();
    if (permit == null) {
      return 0;
    }
    permit.release();
    return permit.permits();
  }

  /** Releases everything every thread holds. */
  public void releaseAll() {
    for (ArrayDeque<Permit> permits : held) {
      permits.forEach(Permit::release);
      permits.clear();
    }
  }
}
