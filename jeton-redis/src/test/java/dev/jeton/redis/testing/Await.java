package dev.jeton.redis.testing;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Waiting in tests for something that happens on another connection, thread or process. */
public final class Await {
  private Await() {}

  /** Waits until {@code condition} holds, failing after 20 seconds with what was awaited. */
  public static void until(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(5);
    }
  }
}
