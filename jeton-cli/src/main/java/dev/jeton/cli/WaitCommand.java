package dev.jeton.cli;

import dev.jeton.Semaphore;
import dev.jeton.internal.Arguments;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code jeton wait}: returns once no one holds the semaphore. */
@Command(
    name = "wait",
    mixinStandardHelpOptions = true,
    description = "Waits until no one holds semaphore NAME, without queueing or taking permits.",
    footer = {
      "",
      "Examples:",
      "  jeton wait --name deploy",
      "  jeton wait --name deploy --timeout 10m",
      "  jeton wait --redis redis://redis:6379 --name migrate"
    })
final class WaitCommand implements Callable<Integer> {
  @ParentCommand Jeton jeton;

  @Option(
      names = "--name",
      defaultValue = "default",
      paramLabel = "NAME",
      description = "The semaphore (default: ${DEFAULT-VALUE}).")
  String name = "default";

  @Option(
      names = "--timeout",
      converter = Durations.Converter.class,
      paramLabel = "DURATION",
      description = "Give up after this long (exit 75): 500ms, 30s, 5m, 1h.")
  @Nullable Duration timeout;

  @Override
  public Integer call() throws IOException, InterruptedException {
    Duration limit = timeout;
    long start = System.nanoTime();
    try (RedisBound bound = jeton.usesRedis() && limit != null ? jeton.redisBound(limit) : null;
        Backend backend = jeton.backend(null)) {
      Semaphore semaphore = backend.open(name, null, 0, "jeton wait");
      int code = 0;
      while (backend.status(semaphore).held() > 0) {
        if (limit != null && System.nanoTime() - start >= limit.toNanos()) {
          jeton
              .err()
              .println(
                  "jeton: semaphore '" + name + "' still held after " + Arguments.format(limit));
          code = Jeton.EXIT_BUSY;
          break;
        }
        Thread.sleep(50);
      }
      if (bound != null) {
        bound.decided(code); // Redis answered: closing is all that is left
      }
      return code;
    }
  }
}
