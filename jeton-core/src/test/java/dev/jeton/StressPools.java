package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;

/**
 * A timer (for work that finishes later) and a thread pool (for blocking work and producers), shut
 * down after each test, which fails if their threads do not end.
 */
abstract class StressPools {
  final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
  final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPools() throws InterruptedException {
    timer.shutdownNow();
    pool.shutdownNow();
    assertTrue(timer.awaitTermination(10, TimeUnit.SECONDS));
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
  }
}
