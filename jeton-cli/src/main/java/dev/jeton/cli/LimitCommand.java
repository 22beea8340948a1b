package dev.jeton.cli;

import java.io.IOException;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code jeton limit}: changes a semaphore's stored limit, or a rate limiter's rate. */
@Command(
    name = "limit",
    mixinStandardHelpOptions = true,
    description = {
      "Changes the stored limit of semaphore NAME, creating it if needed. Raising it lets"
          + " waiters in at once; lowering it takes effect as holders release.",
      "With --rate, changes the rate of rate limiter NAME instead (it must exist): the ones"
          + " waiting keep their slots; a faster rate applies after them, a slower one also to"
          + " what they owe."
    },
    footer = {
      "",
      "Examples:",
      "  jeton limit --name deploy 4",
      "  jeton limit --name deploy --rate 20/1m",
      "  jeton limit --redis redis://redis:6379 --name migrate 2"
    })
final class LimitCommand implements Callable<Integer> {
  @ParentCommand Jeton jeton;

  @Option(names = "--name", required = true, paramLabel = "NAME", description = "The semaphore.")
  String name = "";

  @Parameters(
      index = "0",
      arity = "0..1",
      paramLabel = "LIMIT",
      description = "The new limit, 1 or more.")
  @Nullable Integer limit;

  @Option(
      names = "--rate",
      converter = Rates.Converter.class,
      paramLabel = "N/PERIOD",
      description = "The new rate of rate limiter NAME: 10/1m, 5/30s, 100/1h, 1/500ms.")
  Rates.@Nullable Rate rate;

  @Override
  public Integer call() throws IOException {
    Rates.Rate r = rate;
    if ((r == null) == (limit == null)) {
      throw new IllegalArgumentException("give either a LIMIT or --rate N/PERIOD");
    }
    if (r != null) {
      try (Backend backend = jeton.backend(null)) {
        backend.openRate(name, null, 0, "jeton limit").setRate(r.permits(), r.period());
        jeton.out().println("the rate of '" + name + "' is now " + r);
        return 0;
      }
    }
    int limit = java.util.Objects.requireNonNull(this.limit);
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
