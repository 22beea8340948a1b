package dev.jeton.cli;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.jeton.Permit;
import dev.jeton.RateLimiter;
import dev.jeton.Semaphore;
import dev.jeton.internal.Arguments;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code jeton run}: runs a command while holding permits. */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Waits for WEIGHT permits of semaphore NAME, runs CMD in a session of its own, and"
          + " releases the permits when CMD and everything it started have exited. Exits with"
          + " CMD's exit code.",
      "CMD gets stdin, stdout and stderr, and JETON_NAME, JETON_WEIGHT and JETON_DIR (or, with"
          + " --redis, JETON_LEASE_ID, JETON_FENCING_TOKENS and JETON_KEY_PREFIX) in its"
          + " environment. SIGINT, SIGTERM and SIGHUP are forwarded to all of it, and Ctrl-Z"
          + " stops all of it. If jeton is killed, a watchdog stops CMD, and no one else gets the"
          + " permits while any of it runs.",
      "With --redis the permits are a lease, renewed while CMD runs; if it is lost (Redis"
          + " restarted, or this process could not renew it in time), jeton says so on stderr"
          + " and, with --on-lost kill, terminates CMD. Ctrl-Z does not stop jeton then, which"
          + " goes on renewing the stopped CMD's lease: Ctrl-Z again continues CMD."
    },
    footer = {
      "",
      "Examples:",
      "  jeton run --name deploy --permits 2 -- ./deploy.sh",
      "  jeton run --name gpu --weight 2 --timeout 5m -- make train",
      "  jeton run --name nightly --no-wait -E 0 -- ./report.sh   # skip quietly if busy",
      "  jeton run --name deploy --rate 10/1m --burst 2 -- ./deploy.sh",
      "  jeton run --redis redis://redis:6379 --name migrate --on-lost kill -- ./migrate.sh"
    })
final class RunCommand implements Callable<Integer> {
  @ParentCommand Jeton jeton;

  @Option(
      names = "--name",
      defaultValue = "default",
      paramLabel = "NAME",
      description = "The semaphore (default: ${DEFAULT-VALUE}).")
  String name = "default";

  @Option(
      names = "--permits",
      paramLabel = "LIMIT",
      description =
          "The semaphore's limit: creates it with this limit, or checks that it has it."
              + " Default: the stored limit, or 1 for a new semaphore.")
  @Nullable Integer limit;

  @Option(
      names = "--weight",
      defaultValue = "1",
      paramLabel = "WEIGHT",
      description = "How many permits CMD holds (default: ${DEFAULT-VALUE}).")
  int weight = 1;

  @Option(
      names = "--rate",
      converter = Rates.Converter.class,
      paramLabel = "N/PERIOD",
      description =
          "At most N starts of NAME per PERIOD on this machine (10/1m, 5/30s, 100/1h, 1/500ms),"
              + " first come first served: creates the rate limiter NAME with this rate, or checks"
              + " that it has it. Without --permits, nothing limits how many run at once; with it,"
              + " CMD needs both, the permits first.")
  Rates.@Nullable Rate rate;

  @Option(
      names = "--burst",
      paramLabel = "N",
      description =
          "With --rate: how many may start at once after a pause (default: the rate's N, for a"
              + " new rate limiter; an existing one must have it, if given).")
  @Nullable Integer burst;

  @ArgGroup(exclusive = true)
  @Nullable Waiting waiting;

  static final class Waiting {
    @Option(
        names = "--timeout",
        converter = Durations.Converter.class,
        paramLabel = "DURATION",
        description =
            "Give up after waiting this long: 500ms, 30s, 5m, 1h. With --redis,"
                + " connecting counts, and a Redis that has not answered by then (2s at least) is"
                + " an error (exit 1).")
    @Nullable Duration timeout;

    @Option(
        names = "--no-wait",
        description =
            "Give up at once if the permits are not free."
                + " With --redis, a Redis that does not answer within 2s is an error (exit 1).")
    boolean noWait;
  }

  @Option(
      names = {"-E", "--conflict-exit-code"},
      defaultValue = "75",
      paramLabel = "CODE",
      description =
          "Exit code when --timeout or --no-wait finds no permit (default: ${DEFAULT-VALUE}).")
  int busyExitCode = Jeton.EXIT_BUSY;

  @Option(
      names = {"-q", "--quiet"},
      description = "Say nothing while waiting or on giving up.")
  boolean quiet;

  @Option(
      names = "--lease",
      converter = Durations.Converter.class,
      paramLabel = "DURATION",
      description =
          "With --redis: how long the lease lasts without a renewal; it is renewed"
              + " every third of it while CMD runs (default: 30s).")
  @Nullable Duration lease;

  /** What to do when the lease is lost while CMD runs. */
  enum OnLost {
    warn,
    kill
  }

  @Option(
      names = "--on-lost",
      paramLabel = "ACTION",
      description =
          "With --redis, when the lease is lost while CMD runs: warn (say so on"
              + " stderr; the default) or kill (also send CMD SIGTERM, then SIGKILL after 10s).")
  @Nullable OnLost onLost;

  @Parameters(
      arity = "1..*",
      paramLabel = "CMD",
      description =
          "The command and its arguments. Everything from CMD on is the command's:"
              + " jeton's options come before it (a -- before CMD is allowed, not needed).")
  List<String> command = List.of();

  /** Guards the hand-over from waiting to running, against signals arriving meanwhile. */
  private final Object lock = new Object();

  @GuardedBy("lock")
  private @Nullable CommandSession child;

  /** A signal that came before CMD started. */
  @GuardedBy("lock")
  private @Nullable String signalled;

  @GuardedBy("lock")
  private @Nullable CompletableFuture<?> acquiring;

  private void onSignal(String signal) {
    synchronized (lock) {
      CommandSession running = child;
      if (running != null) {
        running.signal(signal); // to the command and everything it started
        return;
      }
      signalled = signal;
      CompletableFuture<?> request = acquiring;
      if (request != null) {
        request.cancel(false); // withdraws the request; the wait below then gives up
      }
    }
  }

  private int signalledExit() {
    synchronized (lock) {
      String signal = java.util.Objects.requireNonNull(signalled);
      return 128 + Signals.HANDLED.getOrDefault(signal, 0);
    }
  }

  @Override
  public Integer call() throws Exception {
    RunOpening.checkOptions(this);
    PrintWriter err = jeton.err();
    String unrunnable = CommandFiles.unrunnable(command.get(0));
    if (unrunnable != null) { // known before any permit is taken
      err.println("jeton: cannot run '" + Escapes.visible(command.get(0)) + "': " + unrunnable);
      return unrunnable.equals("not found") ? Jeton.EXIT_NOT_FOUND : Jeton.EXIT_CANNOT_EXECUTE;
    }
    Signals.install(this::onSignal);
    Waiting w = waiting;
    long start = System.nanoTime();
    try (RedisBound bound = jeton.usesRedis() && w != null ? jeton.redisBound(w.timeout) : null;
        Backend backend = jeton.backend(lease)) {
      Semaphore semaphore = RunOpening.usesSemaphore(this) ? RunOpening.open(this, backend) : null;
      RateLimiter limiter = RunOpening.openRate(this, backend);
      // The command's session is made while the permits are waited for: see CommandSession.
      try (CommandSession session = CommandSession.prepare(command, backend.stopGrace())) {
        Permit permit = null;
        if (semaphore != null) {
          Optional<Permit> got = acquire(backend, semaphore, err, bound);
          if (got.isEmpty()) {
            return busy(bound);
          }
          permit = got.get();
        }
        try {
          // The slot last, once the permits are there: the command starts in its slot.
          if (limiter != null && !RateWait.pass(this, backend, limiter, err, start)) {
            return busy(bound);
          }
          if (bound != null) {
            bound.close(); // granted: Redis answered, and the bound is kept
          }
          return runCommand(backend, semaphore, permit, limiter, session, err);
        } finally {
          if (permit != null) {
            backend.release(permit);
          }
        }
      }
    }
  }

  /** The exit code when the permits or the slot could not be had (busy, or signalled). */
  private int busy(@Nullable RedisBound bound) {
    int code;
    synchronized (lock) {
      code = signalled != null ? signalledExit() : busyExitCode;
    }
    if (bound != null) {
      bound.decided(code);
    }
    return code;
  }

  /**
   * Waits for the permits as asked; empty if they could not be had. With Redis, {@code bound} keeps
   * the --timeout from the command's start, connecting included.
   */
  private Optional<Permit> acquire(
      Backend backend, Semaphore semaphore, PrintWriter err, @Nullable RedisBound bound)
      throws Exception {
    Waiting w = waiting;
    if (w != null && w.noWait) {
      Optional<Permit> permit = semaphore.tryAcquire(weight);
      if (permit.isEmpty() && !quiet) {
        err.println("jeton: semaphore '" + name + "' is busy (--no-wait)");
      }
      return permit;
    }
    Duration timeout = w != null ? w.timeout : null;
    CompletableFuture<Permit> future =
        timeout == null
            ? semaphore.acquireAsync(weight)
            : semaphore.acquireAsync(weight, bound != null ? bound.remaining() : timeout);
    boolean got =
        await(
            future,
            err,
            (progress, waited) ->
                progress.show(name, () -> backend.status(semaphore).waiters(), weight, waited),
            () ->
                "jeton: timed out after "
                    + Arguments.format(java.util.Objects.requireNonNull(timeout))
                    + " waiting for semaphore '"
                    + name
                    + "'");
    return got ? Optional.of(future.join()) : Optional.empty();
  }

  /** Shows how a wait goes, on the progress line. */
  interface Shown {
    void show(Progress progress, long waitedNanos) throws IOException;
  }

  /**
   * Waits for {@code future} to complete, showing progress: true if it did, false if it was
   * cancelled by a signal or timed out (saying {@code timedOut} then, unless quiet).
   */
  boolean await(
      CompletableFuture<?> future,
      PrintWriter err,
      Shown shown,
      java.util.function.Supplier<String> timedOut)
      throws Exception {
    synchronized (lock) {
      acquiring = future;
      if (signalled != null) {
        future.cancel(false);
      }
    }
    Progress progress = new Progress(err, !quiet && Progress.stderrIsATerminal());
    long start = System.nanoTime();
    try {
      for (; ; ) {
        try {
          future.get(250, TimeUnit.MILLISECONDS);
          return true;
        } catch (TimeoutException stillWaiting) {
          try {
            shown.show(progress, System.nanoTime() - start);
          } catch (IOException | RuntimeException e) {
            // the display is best effort
          }
        }
      }
    } catch (java.util.concurrent.CancellationException signalledWhileWaiting) {
      return false;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TimeoutException timedOutCause
          && RedisDefaults.isQuarantine(timedOutCause.getCause())) {
        // nothing could be granted: not busy (see Jeton.handle)
        throw (RuntimeException) java.util.Objects.requireNonNull(timedOutCause.getCause());
      }
      if (e.getCause() instanceof TimeoutException) {
        progress.clear();
        if (!quiet) {
          err.println(timedOut.get());
        }
        return false;
      }
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    } finally {
      progress.clear();
    }
  }

  private int runCommand(
      Backend backend,
      @Nullable Semaphore semaphore,
      @Nullable Permit permit,
      @Nullable RateLimiter limiter,
      CommandSession session,
      PrintWriter err)
      throws IOException {
    Map<String, String> env = new java.util.HashMap<>();
    env.put("JETON_NAME", name);
    env.put("JETON_WEIGHT", Integer.toString(weight));
    if (limiter != null) {
      env.put("JETON_RATE", String.valueOf(rate));
      env.putAll(backend.environment(limiter));
    }
    if (semaphore != null && permit != null) {
      env.putAll(backend.environment(semaphore, permit));
      if (session.isolated()) {
        // Recorded before the command may start, so that it never runs without the permit, even
        // if this process is killed now.
        backend.holdWhileRuns(semaphore, permit, session.leader());
      }
    }
    boolean renews = backend.renews();
    Signals.installJobControl(signal -> onJobControl(signal, renews, err));
    synchronized (lock) {
      if (signalled != null) {
        return signalledExit(); // signalled after the grant, before the command started
      }
      session.start(env);
      child = session;
    }
    if (permit != null) {
      backend.whenLost(permit, reason -> leaseLost(session, reason, err));
    }
    return session.waitForAll(); // 128+N when the command died of signal N
  }

  /**
   * Ctrl-Z (TSTP), TTIN or TTOU stops the command, all of it, as a shell's job; CONT continues it.
   * The command runs in a session of its own, so the terminal's signals reach only this process,
   * which stopped alone before: the command ran on. Where the permits stay held without this
   * process (this machine), it then stops itself too, and the shell sees the job stopped; fg or bg
   * continue both. A lease lasts only while this process renews it, and a stopped process renews
   * nothing (the lease ran out, and another holder came in beside the command, which still lived):
   * so with Redis this process keeps running, in the foreground, and says so; Ctrl-Z again or
   * SIGCONT continues the command, Ctrl-C ends it.
   */
  private void onJobControl(String signal, boolean renews, PrintWriter err) {
    CommandSession running;
    synchronized (lock) {
      running = child;
    }
    if (running == null) {
      return;
    }
    if (signal.equals("CONT")) {
      if (running.resume() && renews) {
        say(err, "continued the command");
      }
    } else if (running.pause()) {
      if (renews) {
        say(
            err,
            "stopped the command; it keeps its permits on '"
                + name
                + "', since jeton"
                + " stays here to renew its lease: Ctrl-Z again (or SIGCONT) continues it, Ctrl-C"
                + " ends it");
      } else {
        Signals.stopThisProcess(); // returns once continued
        running.resume();
      }
    } else if (signal.equals("TSTP") && renews && running.resume()) {
      say(err, "continued the command");
    }
  }

  private static void say(PrintWriter err, String what) {
    err.println("jeton: " + what);
    err.flush();
  }

  /** The lease was lost while the command runs: say so, and stop it if asked to. */
  private void leaseLost(CommandSession session, String reason, PrintWriter err) {
    if (!session.running()) {
      return;
    }
    err.println(
        "jeton: lost the lease on semaphore '"
            + name
            + "': "
            + Escapes.visible(reason)
            + (onLost == OnLost.kill ? "; terminating the command" : ""));
    err.flush();
    if (onLost == OnLost.kill) {
      session.stop(Duration.ofSeconds(10)); // SIGTERM to all of it, SIGKILL 10 s later
    }
  }
}
