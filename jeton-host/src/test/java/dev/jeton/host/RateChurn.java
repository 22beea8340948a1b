package dev.jeton.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * A worker for the rate limiter's stress test, run as a thread or as its own process: asks for
 * slots of random weight in every way there is (blocking, timed, try, async, async cancelled at a
 * random moment), and logs "nanoTime weight" for each request that passed. {@code System.nanoTime}
 * is the machine's monotonic clock on Linux, so the logs of several processes can be merged.
 * Arguments (as a process): directory, name, rounds, seed, log.
 */
public final class RateChurn {
  private RateChurn() {}

  public static void main(String[] args) throws Exception {
    HostRateLimiter limiter = HostRateLimiter.builder(args[1]).directory(Path.of(args[0])).open();
    run(limiter, Integer.parseInt(args[2]), Long.parseLong(args[3]), Path.of(args[4]));
  }

  static void run(HostRateLimiter limiter, int rounds, long seed, Path log) throws Exception {
    SplittableRandom random = new SplittableRandom(seed);
    int burst = limiter.burst();
    for (int i = 0; i < rounds; i++) {
      int weight = 1 + random.nextInt(burst);
      boolean passed;
      switch (random.nextInt(5)) {
        case 0 -> passed = limiter.tryAcquire(weight);
        case 1 -> {
          try {
            limiter.acquire(weight, Duration.ofMillis(random.nextInt(200)));
            passed = true;
          } catch (TimeoutException gaveUp) {
            passed = false;
          }
        }
        case 2 -> {
          try {
            limiter.acquireAsync(weight, Duration.ofMillis(random.nextInt(200))).get();
            passed = true;
          } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TimeoutException)) {
              throw e;
            }
            passed = false;
          }
        }
        case 3 -> { // cancelled while it waits, or just as it passes
          CompletableFuture<Void> asked = limiter.acquireAsync(weight);
          Thread.sleep(random.nextInt(40));
          passed = !asked.cancel(false);
        }
        default -> {
          limiter.acquire(weight);
          passed = true;
        }
      }
      if (passed) {
        write(log, System.nanoTime() + " " + weight + "\n");
      }
    }
  }

  static void write(Path log, String line) throws IOException {
    Files.writeString(
        log, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
