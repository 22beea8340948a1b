package dev.jeton.cli;

import dev.jeton.host.HostSemaphore;
import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code jeton limit}: changes a semaphore's stored limit. */
@Command(
    name = "limit",
    mixinStandardHelpOptions = true,
    description = {
      "Changes the stored limit of semaphore NAME, creating it if needed. Raising it lets"
          + " waiters in at once; lowering it takes effect as holders release."
    },
    footer = {"", "Examples:", "  jeton limit --name deploy 4"})
final class LimitCommand implements Callable<Integer> {
  @ParentCommand Jeton jeton;
  @Spec CommandSpec spec;

  @Option(names = "--name", required = true, paramLabel = "NAME", description = "The semaphore.")
  String name = "";

  @Parameters(index = "0", paramLabel = "LIMIT", description = "The new limit, 1 or more.")
  int limit;

  @Override
  public Integer call() throws IOException {
    HostSemaphore semaphore = jeton.semaphore(name).limitIfNew(limit).open();
    semaphore.setLimit(limit);
    spec.commandLine().getOut().println("the limit of '" + name + "' is now " + limit);
    return 0;
  }
}
