package dev.jeton.redis.testing;

import java.util.function.BooleanSupplier;

/** Waiting in tests for something that happens on another connection, thread or process. */
public final class Await {
  private Await() {}

  /**
   * How long a test waits for an event before it takes it for a hang: long enough for a loaded
   * machine, never part of what a test asserts.
   */
  public static final java.time.Duration HANG_GUARD = java.time.Duration.ofMinutes(2);

  /** Waits until {@code condition} holds, failing after the hang guard with what was awaited. */
  public static void until(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + HANG_GUARD.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(5);
    }
  }
}
