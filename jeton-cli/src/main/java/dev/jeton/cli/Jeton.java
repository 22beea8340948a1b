package dev.jeton.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
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
      "Limits how many commands run at once across the processes of this machine, or of a"
          + " fleet with --redis: a counting, weighted, first-come-first-served flock(1).",
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
      "  jeton run --name deploy --rate 10/1m -- ./deploy.sh # at most 10 starts a minute",
      "  jeton status --json",
      "  jeton limit --name deploy 4",
      "  jeton run --redis redis://redis.internal:6379 --name migrate -- ./migrate.sh",
      "  source <(jeton generate-completion)              # bash/zsh completion",
      "",
      "Exit codes: the command's own; 128+N if it died of signal N; 75 (or -E) when --timeout"
          + " or --no-wait found no permit; 126 if the command is not executable; 127 if it"
          + " was not found; 2 for bad input; 1 for other errors, among them a Redis that does"
          + " not answer within the --timeout (at least 2s) or --no-wait's 2s, and a Redis"
          + " semaphore in quarantine after Redis lost its state.",
      "State lives in /tmp/jeton-UID (UID: your user id), the same for every login, cron job"
          + " and service of yours, unless --dir names another (private, or shared with a group"
          + " in mode 2770); with --redis (or JETON_REDIS_URL), in Redis."
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
      description =
          "Directory holding the semaphores (default: /tmp/jeton-UID, made private if"
              + " missing). It must be yours and private (mode 700), or shared with a group of yours"
              + " (mode 2770); it is made, private, if missing.")
  @Nullable Path directory;

  @Option(
      names = "--redis",
      scope = ScopeType.INHERIT,
      paramLabel = "URI",
      defaultValue = "${env:JETON_REDIS_URL}",
      description =
          "Use the fleet-wide semaphores in this Redis instead of this machine's:"
              + " redis://[user:password@]host:port[/db], rediss://..., redis-sentinel://host:port"
              + "/db#primary, or redis-cluster://host:port[,host:port...] (default: $JETON_REDIS_URL).")
  @Nullable String redis;

  @Option(
      names = "--key-prefix",
      scope = ScopeType.INHERIT,
      paramLabel = "PREFIX",
      defaultValue = RedisDefaults.KEY_PREFIX,
      description =
          "With --redis: the first part of the semaphores' keys (default: ${DEFAULT-VALUE}).")
  String keyPrefix = RedisDefaults.KEY_PREFIX;

  private @Nullable PrintWriter out; // where the commands write: picocli's, or System's
  private @Nullable PrintWriter err;

  /** Standard output, as the commands write to it. */
  PrintWriter out() {
    return java.util.Objects.requireNonNull(out, "not running");
  }

  /** Standard error, as the commands write to it. */
  PrintWriter err() {
    return java.util.Objects.requireNonNull(err, "not running");
  }

  /** Whether the semaphores are in Redis (--redis or JETON_REDIS_URL). */
  boolean usesRedis() {
    String uri = redis;
    return uri != null && !uri.isBlank();
  }

  /**
   * Where the semaphores are: in Redis with {@code --redis} (or JETON_REDIS_URL), else in the
   * directory given with {@code --dir}, else in the default directory.
   */
  Backend backend(java.time.@Nullable Duration leaseTime) {
    String uri = redis;
    if (uri == null || uri.isBlank()) {
      return new HostBackend(directory);
    }
    return RedisDefaults.backend(uri, keyPrefix, leaseTime);
  }

  /**
   * Starts keeping a bound on waiting for Redis ({@link RedisBound}): {@code timeout}, or {@code
   * --no-wait}'s when null.
   */
  RedisBound redisBound(java.time.@Nullable Duration timeout) {
    return RedisBound.start(
        timeout, err(), RedisBackend.withoutPassword(java.util.Objects.requireNonNull(redis)));
  }

  /** Runs the command line {@code args} and exits with the status it ends with. */
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /**
   * Runs the command line and returns the exit code (what {@code main} exits with). A command line
   * {@link QuickParser} understands runs without picocli, which would take most of the start-up
   * time (decision 59); anything else (help, completion, bad usage) goes to picocli.
   */
  static int run(String... args) {
    Jeton jeton = new Jeton();
    Callable<Integer> command = QuickParser.parse(jeton, args);
    if (command == null) {
      return commandLine(jeton).execute(args);
    }
    jeton.out = new PrintWriter(System.out, true);
    jeton.err = new PrintWriter(System.err, true);
    try {
      return command.call();
    } catch (Exception e) {
      return handle(e, jeton.err());
    } finally {
      jeton.out().flush();
      jeton.err().flush();
    }
  }

  /** The command line, set up as {@code main} runs it when picocli parses it. */
  static CommandLine commandLine() {
    return commandLine(new Jeton());
  }

  private static CommandLine commandLine(Jeton jeton) {
    CommandLine commandLine = new CommandLine(jeton);
    jeton.out = commandLine.getOut();
    jeton.err = commandLine.getErr();
    commandLine.setExecutionExceptionHandler((e, bad, parsed) -> handle(e, bad.getErr()));
    commandLine.setParameterExceptionHandler(Jeton::badUsage);
    // Everything after the command's name is the command's: `jeton run make --jobs 4` runs
    // `make --jobs 4`, as sudo, timeout and flock do. Options of jeton come before it.
    java.util.Objects.requireNonNull(commandLine.getSubcommands().get("run"))
        .setStopAtPositional(true);
    return commandLine;
  }

  /** Bad usage: the error in one line, and where help is, not the whole usage text. */
  private static int badUsage(CommandLine.ParameterException e, String[] args) {
    CommandLine bad = e.getCommandLine();
    PrintWriter err = bad.getErr();
    err.println(oneLine(String.valueOf(e.getMessage())));
    CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
    err.println("Try '" + bad.getCommandSpec().qualifiedName() + " --help' for more.");
    err.flush();
    return EXIT_USAGE;
  }

  /**
   * Bad input and I/O failures get one line on stderr, anything else a stack trace (as picocli
   * prints one). Messages may quote what another process wrote (a record, a reply from Redis): they
   * are printed through {@link Escapes}.
   */
  private static int handle(Exception e, PrintWriter err) {
    if (e instanceof IllegalArgumentException) {
      err.println(oneLine(String.valueOf(e.getMessage())));
      return EXIT_USAGE;
    }
    if (e instanceof IOException || e instanceof UncheckedIOException) {
      err.println(oneLine(String.valueOf(e.getMessage())));
      return EXIT_ERROR;
    }
    if (RedisDefaults.isQuarantine(e)) {
      // Redis lost the semaphore's state, and nothing can be granted until the quarantine ends:
      // not 75 (busy), which -E 0 would turn into a silent success (decision 86).
      err.println(oneLine(PREFIX + e.getMessage()));
      return EXIT_ERROR;
    }
    if (RedisDefaults.isRedisFailure(e)) {
      String message = RedisDefaults.describe(e);
      // The semaphore's function speaks for itself ("jeton: semaphore ... has a damaged
      // limit"): it is not Redis failing, and one prefix is enough.
      err.println(oneLine(message.startsWith(PREFIX) ? message : "Redis: " + message));
      return EXIT_ERROR;
    }
    printStackTrace(e, err);
    return EXIT_ERROR;
  }

  private static final String PREFIX = "jeton: ";

  /**
   * A failure's one line: {@code message} after the command's prefix, once, whether or not the
   * message (from a library, or Redis's copy of one) begins with it already.
   */
  static String oneLine(String message) {
    String own = message.startsWith(PREFIX) ? message.substring(PREFIX.length()) : message;
    return PREFIX + Escapes.visible(own);
  }

  /** {@link Throwable#printStackTrace}, with each message through {@link Escapes}. */
  private static void printStackTrace(Throwable e, PrintWriter err) {
    String prefix = "";
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      err.println(prefix + Escapes.visible(t.toString()));
      for (StackTraceElement frame : t.getStackTrace()) {
        err.println("\tat " + frame);
      }
      prefix = "Caused by: ";
    }
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
