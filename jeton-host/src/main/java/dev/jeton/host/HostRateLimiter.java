package dev.jeton.host;

import dev.jeton.RateLimiter;
import dev.jeton.RateLimiterStats;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.Gcra;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A rate limiter shared by every process of one machine, identified by a name under a directory:
 * over any window of length {@code t}, at most {@code burst + rate * t} weight passes in all the
 * processes together, and requests that wait pass in the order they arrived, across processes.
 *
 * <pre>{@code
 * RateLimiter deploys = HostRateLimiter.builder("deploy").rate(10, Duration.ofMinutes(1)).open();
 * deploys.acquire();            // at most 10 a minute on this machine, first come first served
 * }</pre>
 *
 * <p>The rate and burst are stored with the limiter: the first opener sets them, a later opener
 * that names another rate or burst gets an error, and {@link #setRate} changes the rate for every
 * process. A process killed at any moment (even by {@code kill -9}) or stopped ({@code SIGSTOP})
 * while it waits holds up no one: its slot is given when it joins the queue, and the ones behind it
 * have theirs. The directory is the one {@link HostSemaphore} uses, checked the same way; the
 * limiter's files are in {@code <directory>/<name>/rate/}, beside a semaphore of the same name.
 *
 * <h2>Differences from the in-process limiter</h2>
 *
 * <ul>
 *   <li>A request is given its slot when it arrives, and keeps it: a {@link #setRate} applies to
 *       the requests made after it (a slower rate also to what the ones before it owe).
 *   <li>A request whose slot comes after its timeout fails at once; so does {@link #tryAcquire}
 *       that would wait, without waiting. A process stopped (for a few microseconds) just while it
 *       takes its slot holds up the requests behind it up to their own timeouts, and tryAcquire up
 *       to a second.
 *   <li>A request that gives up frees its slot only if no one has taken one after it; otherwise the
 *       slot goes unused (fewer pass, never more).
 *   <li>A waiter that wakes up more than one emission interval (at least 20 ms, at most 1 s) after
 *       its slot (it was stopped, or the machine too busy) gives the slot up and queues again, at
 *       the back; so every pass comes at most that late after its slot.
 *   <li>Every operation does file I/O; an I/O failure surfaces as {@link UncheckedIOException}.
 *       {@link #stats()} is always empty.
 * </ul>
 */
public final class HostRateLimiter implements RateLimiter {
  /*
   * Overview
   *
   * Files, under <directory>/<name>/rate/ (opened and made through HostDirectory: no symbolic
   * link followed, owners and modes checked, files replaced whole):
   *   state          the schedule: rate, burst, boot and the GCRA's theoretical arrival time
   *                  (RateState), replaced atomically, only under meta.lock
   *   meta.lock, seq the queue's lock and numbering (HostQueue)
   *   queue/<n>      one locked file per request waiting for its slot, holding its record
   *
   * A request (RateRequest), under meta.lock: reads the schedule, computes the earliest moment
   * it may pass, its slot (Gcra.admissibleAt at now, System.nanoTime(), which is CLOCK_MONOTONIC
   * on Linux and so one clock for every process of the boot), admits itself at that slot (the
   * moment may be ahead: Gcra.admit), takes a numbered place in the queue if the slot is ahead,
   * writes the schedule, and lets the lock go. Then it sleeps on a timer until its slot, and
   * passes: drops its place. meta.lock is held for a few file operations only.
   *
   * Invariants:
   *   R1. The slots given out conform to the GCRA of the stored rate and burst: each is computed
   *       from the schedule that every earlier slot wrote, under one lock, and written before the
   *       request can pass (so a write that fails gives nothing). Hence at most burst + rate * t
   *       in any window t of slots.
   *   R2. Slots follow the order of the queue: each slot is at least its weight's emission
   *       interval after the one before (admissibleAt of a later tat), and places are numbered in
   *       the same section.
   *   R3. Nothing waits on another process except for meta.lock, held for a few file operations:
   *       a waiter killed or stopped while it sleeps delays no one. Its slot goes unused.
   *   R4. A pass happens no sooner than its slot and no later than its lateness bound (one
   *       emission interval, 20 ms to 1 s) after it: a later wake-up gives the slot up (back to
   *       the schedule if it was the last one given) and queues again. So the bound on passes is
   *       the bound on slots widened by the lateness bound: at most one emission interval's weight
   *       more per request.
   *   R5. A slot is given back only while the schedule is the one its request wrote (no slot,
   *       rate change or try after it), so a give-back never puts a slot among later ones.
   *
   * AsyncRates drives the asynchronous requests of a handle on one thread, and the shared timer
   * wakes them at their slots, so that no caller's thread does file I/O for them.
   */

  private final String name;
  final HostDirectory directory;
  final HostQueue queue;
  private final Path home;
  private final Path state;
  private final String command;
  private final int burst; // never changes: checked against without file I/O
  private final AsyncRates async;

  private HostRateLimiter(String name, HostDirectory directory, String command, int burst) {
    this.name = name;
    this.directory = directory;
    this.home = directory.path.resolve(name).resolve("rate");
    this.state = home.resolve("state");
    this.queue = new HostQueue(directory, home);
    this.command = command;
    this.burst = burst;
    this.async = new AsyncRates(this);
  }

  // ---------------------------------------------------------------- opening

  /** Starts opening the rate limiter called {@code name}; see {@link Builder}. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The rate limiters in {@code directory}, sorted. */
  public static List<String> list(Path directory) throws IOException {
    return LimitFile.namesWith(directory, Path.of("rate", "state"));
  }

  /** Opens, or creates, a machine-wide rate limiter. Each setter checks its argument at once. */
  public static final class Builder {
    private final String name;
    private @Nullable Path directory;
    private long permits;
    private @Nullable Duration period;
    private int burst;
    private @Nullable String command;

    private Builder(String name) {
      this.name = HostSemaphore.checkName(name);
    }

    /** The directory, as {@link HostSemaphore.Builder#directory}; default the same. */
    public Builder directory(Path directory) {
      this.directory = Objects.requireNonNull(directory, "directory");
      return this;
    }

    /**
     * The rate to create the limiter with; an existing one must have it. Without it, {@link
     * #open()} opens an existing limiter only.
     *
     * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive
     */
    public Builder rate(long permits, Duration period) {
      Objects.requireNonNull(period, "period");
      new Gcra(permits, period, 1, 0); // checks both, now rather than at open()
      this.permits = permits;
      this.period = period;
      return this;
    }

    /**
     * The burst to create the limiter with (default: the rate's permits, at most 2^31-1); an
     * existing one must have it if it is given. It cannot change once the limiter exists.
     *
     * @throws IllegalArgumentException if {@code burst} is below 1
     */
    public Builder burst(int burst) {
      this.burst = Gcra.checkBurst(burst);
      return this;
    }

    /** What this process's waiters say they run; default the JVM's command line. */
    public Builder command(String command) {
      this.command = Objects.requireNonNull(command, "command");
      return this;
    }

    /**
     * Opens the limiter, creating it with a full bucket if it does not exist and a rate was given.
     *
     * @throws IllegalArgumentException if the directory is missing (and nothing is to be created)
     *     or not trusted, if the limiter exists with another rate or burst, if it does not exist
     *     and no rate was given, or if the rate is too fine to count exactly with the burst
     */
    public HostRateLimiter open() throws IOException {
      Duration p = period;
      Path dir = directory != null ? directory : HostSemaphore.defaultDirectory();
      Path file = dir.resolve(name).resolve("rate").resolve("state");
      if (p == null && !Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
        throw new IllegalArgumentException("there is no rate limiter '" + name + "' in " + dir);
      }
      HostDirectory trusted = HostDirectory.trust(dir, p != null);
      String recorded = command != null ? command : Holder.ofThisProcess(0).command();
      int b = burst != 0 ? burst : (int) Math.min(permits, Integer.MAX_VALUE);
      long now = System.nanoTime();
      if (p != null) {
        Gcra fresh = new Gcra(permits, p, b, now); // a rate too fine for the burst fails here
        Path home = dir.resolve(name);
        trusted.ensureDirectory(home);
        trusted.ensureDirectory(home.resolve("rate"));
        trusted.ensureDirectory(home.resolve("rate").resolve("queue"));
        trusted.createIfAbsent(file, RateState.serialize(fresh, now));
      }
      Gcra stored = RateState.parse(trusted.read(file), now, file, name);
      String exists = "rate limiter '" + name + "' exists with ";
      if (p != null && (stored.permits() != permits || !stored.period().equals(p))) {
        throw new IllegalArgumentException(
            exists
                + RateState.format(stored.permits(), stored.period())
                + ", not "
                + RateState.format(permits, p)
                + ": change the rate explicitly (setRate, or jeton limit --name "
                + name
                + " --rate R)");
      }
      if (burst != 0 && stored.burst() != burst) {
        throw new IllegalArgumentException(
            exists
                + "burst "
                + stored.burst()
                + ", not "
                + burst
                + ": a burst cannot change (remove "
                + file.getParent()
                + " while no one uses it, to start again)");
      }
      return new HostRateLimiter(name, trusted, recorded, stored.burst());
    }
  }

  // ---------------------------------------------------------------- the schedule

  String readState() throws IOException {
    return directory.read(state);
  }

  void writeState(String text) throws IOException {
    directory.replace(state, text);
  }

  Gcra parse(String text, long now) throws IOException {
    return RateState.parse(text, now, state, name);
  }

  /** The schedule now, without waiting for anyone. */
  private Gcra schedule() {
    try {
      return parse(LockFiles.uninterrupted(this::readState), System.nanoTime());
    } catch (NoSuchFileException e) {
      throw new IllegalStateException("rate limiter '" + name + "' was removed from " + home, e);
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  String record(int weight) {
    return Holder.ofThisProcess(weight).withCommand(command).serialize();
  }

  String named() {
    return " of rate limiter '" + name + "'";
  }

  void checkWeight(int weight) {
    if (weight < 1 || weight > burst) {
      throw new IllegalArgumentException(
          "the weight must be from 1 to the burst " + burst + named() + ", was " + weight);
    }
  }

  // ---------------------------------------------------------------- RateLimiter

  @Override
  public void acquire(int weight) throws InterruptedException {
    try {
      acquireUntil(weight, Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public void acquire(int weight, Duration timeout) throws InterruptedException, TimeoutException {
    acquireUntil(weight, HostRequest.deadlineAfter(Arguments.toNanos(timeout)), timeout);
  }

  private void acquireUntil(int weight, long deadline, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    checkWeight(weight);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    for (; ; ) {
      RateRequest request = new RateRequest(this, weight);
      RateRequest.Outcome outcome;
      try {
        outcome = request.reserve(false, deadline, deadline, () -> false);
      } catch (TimeoutException busy) {
        throw timedOut(timeout);
      } catch (IOException e) {
        throw new UncheckedIOException(e.getMessage(), e);
      }
      switch (outcome) {
        case PASSED:
          return;
        case TOO_LATE:
          throw timedOut(timeout);
        default:
          break;
      }
      try {
        request.sleepUntilSlot();
      } catch (InterruptedException e) {
        request.withdraw();
        throw e;
      }
      if (request.pass()) {
        return;
      }
      // woke too late for its slot: queue again
    }
  }

  TimeoutException timedOut(@Nullable Duration timeout) {
    return new TimeoutException(
        "no slot"
            + named()
            + " within "
            + (timeout == null ? "?" : Arguments.format(timeout))
            + " at its rate");
  }

  /**
   * {@inheritDoc} Waits up to a second for another process that holds the queue's lock at that
   * moment, and returns false if it does not let it go by then (it may have been stopped).
   */
  @Override
  public boolean tryAcquire(int weight) {
    checkWeight(weight);
    boolean interrupted = Thread.interrupted(); // tryAcquire does not wait for long: no interrupts
    try {
      RateRequest request = new RateRequest(this, weight);
      long grace = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      return request.reserve(true, Long.MAX_VALUE, grace, () -> false)
          == RateRequest.Outcome.PASSED;
    } catch (TimeoutException | InterruptedException stoppedHoldingTheLock) {
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public CompletableFuture<Void> acquireAsync(int weight) {
    checkWeight(weight);
    return async.start(weight, Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<Void> acquireAsync(int weight, Duration timeout) {
    checkWeight(weight);
    return async.start(weight, HostRequest.deadlineAfter(Arguments.toNanos(timeout)), timeout);
  }

  /**
   * Stores a new rate for every process, keeping the burst: the requests that have their slots keep
   * them; a faster rate applies after them, a slower one also to what they owe (see {@link
   * RateState#withRate}). Waits for {@code meta.lock}, held by others for a few file operations
   * only, up to a second.
   *
   * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive,
   *     or the rate too fine to count exactly with the burst; the rate is then unchanged
   * @throws IllegalStateException if a process holding the queue's lock did not let it go within a
   *     second (it may have been stopped); the rate is then unchanged
   */
  @Override
  public void setRate(long permits, Duration period) {
    Objects.requireNonNull(period, "period");
    new Gcra(permits, period, burst, 0); // checks the rate before any file I/O
    try {
      LockFiles.<@Nullable Void>uninterrupted(
          () -> {
            try {
              return queue.<@Nullable Void>locked(
                  System.nanoTime() + TimeUnit.SECONDS.toNanos(1),
                  () -> false,
                  () -> {
                    long now = System.nanoTime();
                    String text = readState();
                    long last = RateState.lastSlot(text, now);
                    Gcra changed = RateState.withRate(parse(text, now), permits, period, last, now);
                    writeState(RateState.serialize(changed, last));
                    return null;
                  });
            } catch (TimeoutException | InterruptedException busy) {
              throw new IllegalStateException(
                  "cannot change the rate" + named() + ": " + busy.getMessage(), busy);
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  @Override
  public long permits() {
    return schedule().permits();
  }

  @Override
  public Duration period() {
    return schedule().period();
  }

  @Override
  public int burst() {
    return burst;
  }

  /** The requests waiting for their slots, in every process. */
  @Override
  public int queueLength() {
    try {
      return LockFiles.uninterrupted(queue::waiting).size();
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  @Override
  public Duration timeToAdmit(int weight) {
    checkWeight(weight);
    long now = System.nanoTime();
    return Duration.ofNanos(schedule().admissibleAt(now, weight) - now);
  }

  @Override
  public Optional<RateLimiterStats> stats() {
    return Optional.empty();
  }

  // ---------------------------------------------------------------- host-specific

  /** The limiter's name. */
  public String name() {
    return name;
  }

  /** The directory that holds it. */
  public Path directory() {
    return directory.path;
  }

  /**
   * The rate, the burst, how long a request of 1 made now would wait, and who waits, oldest first.
   * Never waits for another process.
   */
  public Status status() throws IOException {
    Gcra schedule = schedule();
    long now = System.nanoTime();
    List<Holder> waiters = LockFiles.uninterrupted(queue::waiters);
    return new Status(
        name,
        schedule.permits(),
        schedule.period(),
        schedule.burst(),
        Duration.ofNanos(schedule.admissibleAt(now, 1) - now),
        waiters);
  }

  /**
   * A snapshot of a host rate limiter.
   *
   * @param name its name
   * @param permits its rate's permits per {@code period}
   * @param period its rate's period
   * @param burst its burst
   * @param nextFree how long a request of weight 1 made now would wait (zero: it would pass)
   * @param waiters who waits for a slot, oldest first; {@link Holder#permits()} is the weight
   */
  public record Status(
      String name,
      long permits,
      Duration period,
      int burst,
      Duration nextFree,
      List<Holder> waiters) {}

  @Override
  public String toString() {
    return "HostRateLimiter[name=" + name + ", directory=" + directory.path + "]";
  }
}
