package dev.jeton.cli;

import dev.jeton.host.HostSemaphore;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import picocli.AutoComplete.GenerateCompletion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** The {@code jeton} command: entry point, shared options and exit codes. */
@Command(
    name = "jeton",
    mixinStandardHelpOptions = true,
    versionProvider = Jeton.Version.class,
    description = {
      "Limits how many commands run at once across the processes of this machine: a counting,"
          + " weighted, first-come-first-served flock(1).",
      ""
    },
    subcommands = {
      RunCommand.class,
      StatusCommand.class,
      WaitCommand.class,
      LimitCommand.class,
      GenerateCompletion.class
    },
    footer = {
      "",
      "Examples:",
      "  jeton run --name deploy --permits 2 -- ./deploy.sh",
      "  jeton run --name backup --no-wait -- ./backup.sh   # exit 75 at once if busy",
      "  jeton status --json",
      "  jeton limit --name deploy 4",
      "  source <(jeton generate-completion)              # bash/zsh completion",
      "",
      "Exit codes: the command's own; 128+N if it died of signal N; 75 (or -E) when --timeout"
          + " or --no-wait found no permit; 126 if the command is not executable; 127 if it"
          + " was not found; 2 for bad input; 1 for other errors.",
      "State lives in $XDG_RUNTIME_DIR/jeton, else in jeton-$USER under the temporary"
          + " directory, unless --dir says otherwise."
    })
public final class Jeton {
  static final int EXIT_ERROR = 1;
  static final int EXIT_USAGE = 2;
  static final int EXIT_BUSY = 75;
  static final int EXIT_CANNOT_EXECUTE = 126;
  static final int EXIT_NOT_FOUND = 127;

  @Option(
      names = "--dir",
      scope = ScopeType.INHERIT,
      paramLabel = "DIR",
      description = "Directory holding the semaphores (default: $XDG_RUNTIME_DIR/jeton, else a"
          + " per-user directory under the temporary directory).")
  @Nullable Path directory;

  /** The directory given, or the default. */
  Path directory() {
    Path dir = directory;
    return dir != null ? dir : HostSemaphore.defaultDirectory();
  }

  /**
   * A builder for semaphore {@code name} in the chosen directory. Only a directory given with
   * {@code --dir} must exist already; the default one is created on first use.
   */
  HostSemaphore.Builder semaphore(String name) {
    HostSemaphore.Builder builder = HostSemaphore.builder(name);
    Path dir = directory;
    if (dir != null) {
      builder.directory(dir);
    }
    return builder;
  }

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the command line and returns the exit code (what {@code main} exits with). */
  static int run(String... args) {
    CommandLine commandLine = new CommandLine(new Jeton());
    commandLine.setExecutionExceptionHandler(Jeton::handle);
    return commandLine.execute(args);
  }

  /** Bad input and I/O failures get one line on stderr, not a stack trace. */
  private static int handle(Exception e, CommandLine commandLine, CommandLine.ParseResult parsed) {
    PrintWriter err = commandLine.getErr();
    if (e instanceof IllegalArgumentException) {
      err.println("jeton: " + e.getMessage());
      return EXIT_USAGE;
    }
    if (e instanceof IOException || e instanceof UncheckedIOException) {
      err.println("jeton: " + e.getMessage());
      return EXIT_ERROR;
    }
    throw new IllegalStateException(e);
  }

  /** The version from the jar's manifest, or "development" when run from classes. */
  static final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = Jeton.class.getPackage().getImplementationVersion();
      return new String[] {"jeton " + (version != null ? version : "0.1.0-SNAPSHOT")};
    }
  }
}
