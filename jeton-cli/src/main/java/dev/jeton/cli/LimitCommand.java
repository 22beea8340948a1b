package dev.jeton.cli;

import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code jeton limit}: changes a semaphore's stored limit. */
@Command(
    name = "limit",
    mixinStandardHelpOptions = true,
    description = {
      "Changes the stored limit of semaphore NAME, creating it if needed. Raising it lets"
          + " waiters in at once; lowering it takes effect as holders release."
    },
    footer = {
      "",
      "Examples:",
      "  jeton limit --name deploy 4",
      "  jeton limit --redis redis://redis:6379 --name migrate 2"
    })
final class LimitCommand implements Callable<Integer> {
  @ParentCommand Jeton jeton;

  @Option(names = "--name", required = true, paramLabel = "NAME", description = "The semaphore.")
  String name = "";

  @Parameters(index = "0", paramLabel = "LIMIT", description = "The new limit, 1 or more.")
  int limit;

  @Override
  public Integer call() throws IOException {
    if (limit < 1) {
      throw new IllegalArgumentException("the limit must be 1 or more, was " + limit);
    }
    try (Backend backend = jeton.backend(null)) {
      backend.open(name, null, limit, "jeton limit").setLimit(limit);
      jeton.out().println("the limit of '" + name + "' is now " + limit);
      return 0;
    }
  }
}
