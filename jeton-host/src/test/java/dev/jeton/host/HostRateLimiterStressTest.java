package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Threads of this JVM, on two handles, and two other processes ask one machine-wide rate limiter
 * for slots with random weights, in every way there is, while one thread interrupts waiters; the
 * merged log of passes must keep the bound over every window (widened by the lateness a pass is
 * allowed), and at the end no one is queued. Bounded by round counts.
 */
@Timeout(300)
class HostRateLimiterStressTest {
  @TempDir Path directory;

  @Test
  void threadsAndProcesses_mixingEveryKindOfRequest_keepTheBound() throws Exception {
    int burst = 3;
    long perSecond = 60;
    HostRateLimiter one =
        HostRateLimiter.builder("stress")
            .directory(directory)
            .rate(perSecond, Duration.ofSeconds(1))
            .burst(burst)
            .open();
    HostRateLimiter two = HostRateLimiter.builder("stress").directory(directory).open();
    Path log = directory.resolve("passes.log");
    int rounds = 40;
    List<Process> processes = new ArrayList<>();
    for (int p = 0; p < 2; p++) {
      processes.add(
          dev.jeton.contract.Processes.java(
              RateChurn.class,
              directory.toString(),
              "stress",
              Integer.toString(rounds),
              Long.toString(100 + p),
              log.toString()));
    }
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int t = 0; t < 4; t++) {
      HostRateLimiter handle = t % 2 == 0 ? one : two;
      long seed = t;
      Thread thread =
          new Thread(
              () -> {
                try {
                  RateChurn.run(handle, rounds, seed, log);
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      threads.add(thread);
      thread.start();
    }
    Thread interrupter = interruptingOneWaiter(one, log);
    for (Thread thread : threads) {
      thread.join();
    }
    interrupter.interrupt();
    interrupter.join();
    for (Process p : processes) {
      assertTrue(p.waitFor(240, TimeUnit.SECONDS), "the child finished");
      assertEquals(0, p.exitValue(), new String(p.getInputStream().readAllBytes()));
    }
    assertEquals(List.of(), failures);
    List<Long> passes = new ArrayList<>();
    List<Integer> weights = new ArrayList<>();
    for (String line : Files.readAllLines(log)) {
      String[] parts = line.split(" ");
      passes.add(Long.parseLong(parts[0]));
      weights.add(Integer.parseInt(parts[1]));
    }
    assertTrue(passes.size() > rounds, "most requests passed: " + passes.size());
    assertWeightedBound(passes, weights, burst, perSecond);
    assertEquals(0, one.queueLength(), "no one is left queued");
  }

  /** A thread that waits with blocking acquires of its own and interrupts itself now and then. */
  private static Thread interruptingOneWaiter(HostRateLimiter limiter, Path log) {
    Thread waiter =
        new Thread(
            () -> {
              java.util.SplittableRandom random = new java.util.SplittableRandom(7);
              while (!Thread.currentThread().isInterrupted()) {
                Thread self = Thread.currentThread();
                Thread poke =
                    new Thread(
                        () -> {
                          java.util.concurrent.locks.LockSupport.parkNanos(
                              random.nextInt(1, 30) * 1_000_000L);
                          self.interrupt();
                        });
                poke.start();
                try {
                  limiter.acquire(1);
                  RateChurn.write(log, System.nanoTime() + " 1\n");
                } catch (InterruptedException expected) {
                  // withdrawn: nothing passed
                } catch (java.io.IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
                try {
                  poke.join();
                } catch (InterruptedException stop) {
                  return;
                }
                if (Thread.interrupted()) {
                  continue; // the poke came after the pass: go on
                }
              }
            });
    waiter.start();
    return waiter;
  }

  /** The weighted form of HostRateLimiterTest.assertBound, over passes sorted by time. */
  private static void assertWeightedBound(
      List<Long> passes, List<Integer> weights, int burst, long perSecond) {
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < passes.size(); i++) {
      order.add(i);
    }
    order.sort((a, b) -> Long.compare(passes.get(a), passes.get(b)));
    // A pass is at most its lateness after its slot; its log line comes after the pass by however
    // long the machine takes to run the thread again (a timer, a hand-off to the common pool):
    // tens of milliseconds on a loaded machine, 100 allowed.
    double lateness = Math.max(RateRequest.MIN_LATENESS_NANOS, 1e9 / perSecond) + 100e6;
    for (int i = 0; i < order.size(); i++) {
      long weight = 0;
      for (int j = i; j < order.size(); j++) {
        weight += weights.get(order.get(j));
        double t = passes.get(order.get(j)) - passes.get(order.get(i));
        double allowed = burst + perSecond * (t + lateness) / 1e9;
        assertTrue(weight <= allowed, weight + " passed in " + t / 1e6 + " ms, at most " + allowed);
      }
    }
  }
}
