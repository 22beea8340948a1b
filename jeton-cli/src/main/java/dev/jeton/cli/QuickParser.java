package dev.jeton.cli;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;

/**
 * Parses the well-formed command lines of {@code run}, {@code status}, {@code wait} and {@code
 * limit} without picocli, whose start-up (its classes, annotations read by reflection, proxies)
 * took most of {@code jeton run}'s (decision 59). It fills the same command objects as picocli
 * would, and gives up (returns null) on anything it is not sure of: help, version, completion,
 * unknown or repeated options, values that do not parse, {@code @files}. picocli then parses the
 * command line as before, with its messages. A test checks both parse alike.
 */
final class QuickParser {
  private final Jeton jeton;
  private final String[] args;
  private int next;

  private QuickParser(Jeton jeton, String[] args) {
    this.jeton = jeton;
    this.args = args;
  }

  /** The command to call, its options set on {@code jeton} and itself; null: ask picocli. */
  static @Nullable Callable<Integer> parse(Jeton jeton, String... args) {
    try {
      return new QuickParser(jeton, args).command();
    } catch (GiveUp | IllegalArgumentException e) { // InvalidPathException, a bad duration
      return null;
    }
  }

  /** Not a command line for this parser: picocli's to parse (and to explain, if it is bad). */
  private static final class GiveUp extends Exception {
    private static final long serialVersionUID = 1L;

    GiveUp() {
      super(null, null, false, false);
    }
  }

  private Callable<Integer> command() throws GiveUp {
    for (String arg : args) {
      if (arg.startsWith("@")) {
        throw new GiveUp(); // picocli reads arguments from the file it names
      }
    }
    jeton.redis = System.getenv("JETON_REDIS_URL"); // the default picocli gives it
    String name = null;
    while (next < args.length && name == null) {
      String arg = args[next++];
      if (!inherited(arg)) {
        name = arg;
      }
    }
    if (name == null) {
      throw new GiveUp();
    }
    switch (name) {
      case "run":
        return run();
      case "status":
        return status();
      case "wait":
        return waitCommand();
      case "limit":
        return limit();
      default:
        throw new GiveUp();
    }
  }

  private final boolean[] seenInherited = new boolean[3];

  /** Whether {@code arg} is an option of every command (consumed, with its value). */
  private boolean inherited(String arg) throws GiveUp {
    int which = Arrays.asList("--dir", "--redis", "--key-prefix").indexOf(optionName(arg));
    if (which < 0) {
      return false;
    }
    once(seenInherited, which);
    String value = value(arg);
    switch (which) {
      case 0:
        jeton.directory = Path.of(value);
        break;
      case 1:
        jeton.redis = value;
        break;
      default:
        jeton.keyPrefix = value;
    }
    return true;
  }

  private static void once(boolean[] seen, int which) throws GiveUp {
    if (seen[which]) {
      throw new GiveUp(); // picocli refuses an option given twice, with its message
    }
    seen[which] = true;
  }

  /** The option's name: {@code --name} of {@code --name} and of {@code --name=x}. */
  private static String optionName(String arg) {
    int equals = arg.indexOf('=');
    return arg.startsWith("--") && equals > 0 ? arg.substring(0, equals) : arg;
  }

  /** The value of the option {@code arg}: after its {@code =}, else the next argument. */
  private String value(String arg) throws GiveUp {
    int equals = arg.indexOf('=');
    if (arg.startsWith("--") && equals > 0) {
      return arg.substring(equals + 1);
    }
    if (next >= args.length || args[next].startsWith("-")) {
      throw new GiveUp(); // a missing value, or one picocli might take for an option
    }
    return args[next++];
  }

  private static int integer(String text) throws GiveUp {
    if (!text.matches("-?[0-9]{1,9}")) {
      throw new GiveUp(); // picocli's message names the option
    }
    return Integer.parseInt(text);
  }

  private Callable<Integer> run() throws GiveUp {
    RunCommand run = new RunCommand();
    run.jeton = jeton;
    boolean[] seen = new boolean[11];
    List<String> names =
        List.of(
            "--name",
            "--permits",
            "--weight",
            "--timeout",
            "--no-wait",
            "--conflict-exit-code",
            "--quiet",
            "--lease",
            "--on-lost",
            "--rate",
            "--burst");
    while (next < args.length) {
      String arg = args[next++];
      if (arg.equals("--")) {
        break;
      }
      if (!arg.startsWith("-")) {
        next--; // the command's name: the rest is the command's
        break;
      }
      if (inherited(arg)) {
        continue;
      }
      String option = optionName(arg);
      int which =
          names.indexOf(
              option.equals("-E")
                  ? "--conflict-exit-code"
                  : option.equals("-q") ? "--quiet" : option);
      if (which < 0) {
        throw new GiveUp();
      }
      once(seen, which);
      if (which == 4 || which == 6) { // flags
        if (!option.equals(arg)) {
          throw new GiveUp(); // --no-wait=...
        }
        if (which == 4) {
          waiting(run).noWait = true;
        } else {
          run.quiet = true;
        }
        continue;
      }
      String value = value(arg);
      switch (which) {
        case 0 -> run.name = value;
        case 1 -> run.limit = integer(value);
        case 2 -> run.weight = integer(value);
        case 3 -> waiting(run).timeout = Durations.parse(value);
        case 5 -> run.busyExitCode = integer(value);
        case 7 -> run.lease = Durations.parse(value);
        case 8 -> run.onLost = onLost(value);
        case 9 -> run.rate = Rates.parse(value);
        default -> run.burst = integer(value);
      }
    }
    RunCommand.Waiting waiting = run.waiting;
    if (next >= args.length || (waiting != null && waiting.noWait && waiting.timeout != null)) {
      throw new GiveUp(); // no command, or --timeout with --no-wait
    }
    run.command = List.of(Arrays.copyOfRange(args, next, args.length));
    return run;
  }

  private static RunCommand.Waiting waiting(RunCommand run) {
    RunCommand.Waiting waiting = run.waiting;
    if (waiting == null) {
      waiting = new RunCommand.Waiting();
      run.waiting = waiting;
    }
    return waiting;
  }

  private static RunCommand.OnLost onLost(String value) throws GiveUp {
    for (RunCommand.OnLost action : RunCommand.OnLost.values()) {
      if (action.name().equals(value)) {
        return action;
      }
    }
    throw new GiveUp();
  }

  /** Takes one argument of a command, with its value; false if it is not one of its options. */
  private interface Argument {
    boolean take(String arg) throws GiveUp;
  }

  /** Gives {@code take} each argument left but the options of every command; gives up on others. */
  private void rest(Argument take) throws GiveUp {
    while (next < args.length) {
      String arg = args[next++];
      if (!inherited(arg) && !take.take(arg)) {
        throw new GiveUp();
      }
    }
  }

  private Callable<Integer> status() throws GiveUp {
    StatusCommand status = new StatusCommand();
    status.jeton = jeton;
    boolean[] seen = new boolean[2];
    rest(
        arg -> {
          if (arg.equals("--json")) {
            once(seen, 1);
            status.json = true;
          } else if (optionName(arg).equals("--name")) {
            once(seen, 0);
            status.name = value(arg);
          } else {
            return false;
          }
          return true;
        });
    return status;
  }

  private Callable<Integer> waitCommand() throws GiveUp {
    WaitCommand wait = new WaitCommand();
    wait.jeton = jeton;
    boolean[] seen = new boolean[2];
    rest(
        arg -> {
          String option = optionName(arg);
          if (option.equals("--name")) {
            once(seen, 0);
            wait.name = value(arg);
          } else if (option.equals("--timeout")) {
            once(seen, 1);
            wait.timeout = Durations.parse(value(arg));
          } else {
            return false;
          }
          return true;
        });
    return wait;
  }

  private Callable<Integer> limit() throws GiveUp {
    LimitCommand limit = new LimitCommand();
    limit.jeton = jeton;
    boolean[] seen = new boolean[2];
    rest(
        arg -> {
          if (optionName(arg).equals("--name")) {
            once(seen, 0);
            limit.name = value(arg);
          } else if (!arg.startsWith("-")) {
            once(seen, 1);
            limit.limit = integer(arg);
          } else {
            return false;
          }
          return true;
        });
    if (!seen[0] || !seen[1]) {
      throw new GiveUp(); // picocli says what is missing
    }
    return limit;
  }
}
