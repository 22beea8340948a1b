package dev.jeton.host;

import dev.jeton.Permit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * A worker for the stress tests, run as a thread or as its own process: takes and gives back
 * permits of random weight, in every way there is, and logs "start|end nanoTime weight" around each
 * hold. {@code System.nanoTime} is the machine's monotonic clock on Linux, so logs from several
 * processes can be merged. Arguments (as a process): directory, name, rounds, seed, log.
 */
public final class Churn {
  private Churn() {}

  public static void main(String[] args) throws Exception {
    HostSemaphore semaphore = HostSemaphore.builder(args[1]).directory(Path.of(args[0])).open();
    run(semaphore, Integer.parseInt(args[2]), Long.parseLong(args[3]), Path.of(args[4]));
  }

  static void run(HostSemaphore semaphore, int rounds, long seed, Path log) throws Exception {
    SplittableRandom random = new SplittableRandom(seed);
    int limit = semaphore.limit();
    for (int i = 0; i < rounds; i++) {
      int weight = 1 + random.nextInt(limit);
      Optional<Permit> permit;
      switch (random.nextInt(6)) {
        case 0:
          permit = semaphore.tryAcquire(weight);
          break;
        case 1:
          try {
            permit = Optional.of(semaphore.acquire(weight, Duration.ofMillis(random.nextInt(30))));
          } catch (TimeoutException gaveUp) {
            permit = Optional.empty();
          }
          break;
        case 2:
          permit = Optional.of(semaphore.acquireAsync(weight).join());
          break;
        case 3:
          try {
            Duration timeout = Duration.ofMillis(random.nextInt(30));
            permit = Optional.of(semaphore.acquireAsync(weight, timeout).get());
          } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TimeoutException)) {
              throw e;
            }
            permit = Optional.empty();
          }
          break;
        case 4: // cancelled while queued, or just as it is granted
          CompletableFuture<Permit> asked = semaphore.acquireAsync(weight);
          Thread.sleep(random.nextInt(3));
          permit = asked.cancel(false) ? Optional.empty() : Optional.of(asked.join());
          break;
        default:
          permit = Optional.of(semaphore.acquire(weight));
      }
      if (permit.isPresent()) {
        write(log, "start " + System.nanoTime() + " " + weight + "\n");
        Thread.sleep(random.nextInt(3));
        write(log, "end " + System.nanoTime() + " " + weight + "\n");
        permit.get().release();
      }
    }
  }

  private static void write(Path log, String line) throws IOException {
    Files.writeString(
        log, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
