package dev.jeton.host;

import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import dev.jeton.SemaphoreStats;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.LeakTracker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore shared by every process of one machine, identified by a name under a directory.
 *
 * <p>Holding a permit is holding OS file locks, so a process that dies, even by {@code kill -9},
 * frees its permits at once, with no cleanup step and no timeout. The limit is stored with the
 * semaphore: the first opener sets it, a later opener with a different limit gets an error, and
 * {@link #setLimit(int)} changes it for everyone.
 *
 * <h2>The directory</h2>
 *
 * <p>The default directory is {@code /tmp/jeton-<uid>}, the same for a login shell, cron, systemd
 * and sudo, made private (mode 700) if missing. A directory is used only if other users cannot get
 * in: one private to this user, or one shared with a group this user is in (mode 2770, so that
 * every file in it belongs to the group). Anything else, and a symbolic link in place of the
 * directory or of any file in it, is refused with a message saying how to fix it.
 *
 * <h2>Ordering</h2>
 *
 * <p>Every request takes a numbered place when it arrives, and only the oldest place still held by
 * a live process or thread may take permits; it keeps the ones it gets until it has all it needs.
 * So requests are granted in the order they took their places, across processes and threads, and a
 * large request is never starved by small ones. A waiter that dies is dropped from the queue as
 * soon as the one behind it is woken by its lock going. A waiter sleeps in the kernel on the place
 * just ahead of it, so a long queue costs nothing while it waits; only the head looks for free
 * permits, every 0.25 to 2 ms, so a grant reaches it within about 2 ms of the permits coming free.
 *
 * <p>The asynchronous methods ({@link #acquireAsync}, {@link #awaitIdle}) return at once, and
 * cancelling their futures too: they never wait for file I/O or for another process. One thread per
 * handle takes their places and polls for them, and it is there only while they wait; the requests
 * of one handle queue behind each other in memory, so however many there are, they use at most two
 * threads. Their futures complete on the common pool. The other methods of a handle see the
 * asynchronous requests made on it before them: a request made just before {@link #queueLength()}
 * is counted in it.
 *
 * <h2>Differences from the in-process semaphore</h2>
 *
 * <ul>
 *   <li>{@link #close()} closes this handle only: its queued requests fail and it takes no new
 *       ones, but other handles and processes are unaffected.
 *   <li>The limit is at least 1. {@link #stats()} is always empty.
 *   <li>Every operation does file I/O; an I/O failure surfaces as {@link UncheckedIOException}.
 *   <li>{@link #tryAcquire} waits up to a second for another process that is taking its place at
 *       that moment, and returns empty if that process does not finish by then (it may have been
 *       stopped).
 * </ul>
 */
public final class HostSemaphore implements Semaphore {
  /*
   * Overview: a map of the parts (each package-private, each with its own comment)
   *
   * Files, under <directory>/<name>/ (see HostDirectory for how they are opened and made):
   *   limit          the stored limit, replaced atomically (see LimitFile)
   *   meta.lock      locked for a moment to take a place (see HostQueue)
   *   seq            the last place number
   *   queue/<n>      one file per request, locked by it until it is granted or gives up, holding
   *                  its record; <n> is the zero-padded place number
   *   slots/<i>      one file per permit (see Slots)
   *
   * HostRequest is one request from place to grant: the algorithm and its invariants (I1-I5) are
   * there. AsyncRequests drives a handle's asynchronous requests on one thread; HostPermit gives
   * the slots back. Threads of this JVM share the files through LockFiles, which keeps them from
   * opening a file another thread holds (closing any channel would drop the process's lock).
   *
   * Fields: pending holds the handle's requests that have a place and are not finished (a
   * concurrent set; a request leaves it when granted or withdrawn). closed is volatile and set
   * once: newRequest checks it before and after entering pending, and close() withdraws what it
   * then finds there, so a request made as the handle closes either fails or is withdrawn.
   */

  /** How often the head of the queue looks for free permits: from 0.25 ms, doubling to 2 ms. */
  static final long MIN_HEAD_PAUSE_NANOS = 250_000;

  static final long MAX_HEAD_PAUSE_NANOS = 2_000_000;

  /** How long tryAcquire waits for a process that is taking a place or trying at that moment. */
  private static final long TRY_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final String name;
  final HostDirectory directory;
  private final LimitFile limitFile;
  final HostQueue queue;
  final Slots slots;
  final String command;
  final Set<HostRequest> pending = ConcurrentHashMap.newKeySet();
  final @Nullable LeakTracker leaks; // null: permits are not watched for leaks
  private final AsyncRequests async = new AsyncRequests(this);
  volatile boolean closed;

  private HostSemaphore(
      String name, HostDirectory directory, String command, @Nullable LeakTracker leaks) {
    this.name = name;
    this.directory = directory;
    this.leaks = leaks;
    Path home = directory.path.resolve(name);
    this.limitFile = new LimitFile(name, directory, home);
    this.queue = new HostQueue(directory, home);
    this.slots = new Slots(directory, home);
    this.command = command;
  }

  // ---------------------------------------------------------------- opening

  /** Starts opening the semaphore called {@code name}; see {@link Builder}. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /**
   * The directory used when none is given: {@code /tmp/jeton-<uid>}, whatever the environment, so
   * that every process of one user finds the same semaphores.
   */
  public static Path defaultDirectory() {
    return HostDirectory.defaultPath();
  }

  /** The semaphores in {@code directory} (names no semaphore can have left out), sorted. */
  public static List<String> list(Path directory) throws IOException {
    return LimitFile.semaphoresIn(directory);
  }

  /** Opens, or creates, a machine-wide semaphore. Each setter checks its argument at once. */
  public static final class Builder {
    private final String name;
    private @Nullable Path directory;
    private int limit;
    private int limitIfNew;
    private @Nullable String command;
    private @Nullable LeakDetection leakDetection;
    private boolean releaseLeaked;

    private Builder(String name) {
      this.name = checkName(name);
    }

    /**
     * The directory that holds the semaphores; default {@link #defaultDirectory()}. It must be
     * private to this user, or shared with a group of theirs (see the class comment); it is made
     * (private) if it is missing and the semaphore is to be created.
     */
    public Builder directory(Path directory) {
      this.directory = directory;
      return this;
    }

    /**
     * The limit to create the semaphore with. If the semaphore exists already, it must have this
     * limit. Without it, {@link #open()} opens an existing semaphore only.
     */
    public Builder limit(int limit) {
      this.limit = checkLimit(limit);
      return this;
    }

    /**
     * The limit to create the semaphore with if it does not exist, without requiring an existing
     * one to have it (what {@code jeton run} does without {@code --permits}).
     */
    public Builder limitIfNew(int limit) {
      this.limitIfNew = checkLimit(limit);
      return this;
    }

    /** What this process's holders and waiters say they run; default the JVM's command line. */
    public Builder command(String command) {
      this.command = command;
      return this;
    }

    /**
     * How closely this handle's permits are watched for leaks (see {@link LeakDetection}); without
     * this call, the system property {@code jeton.leakDetection} decides, and {@link
     * LeakDetection#SAMPLED} without it. A permit this process drops unreleased keeps its places
     * until the process exits, as an in-process one does: a watched one is reported.
     */
    public Builder leakDetection(LeakDetection level) {
      this.leakDetection = Objects.requireNonNull(level, "level");
      return this;
    }

    /**
     * Whether a permit reported leaked gives its places back (true), or keeps them until this
     * process exits (false, the default): an unreachable permit is no proof that the work it
     * guarded is done (see {@code Semaphore.Builder.releaseLeaked}).
     */
    public Builder releaseLeaked(boolean release) {
      this.releaseLeaked = release;
      return this;
    }

    /**
     * Opens the semaphore, creating it if it does not exist and a limit was given.
     *
     * @throws IllegalArgumentException if the directory is missing (and nothing is to be created),
     *     not writable or not trusted, if the semaphore exists with another limit, or if it does
     *     not exist and no limit was given
     */
    public HostSemaphore open() throws IOException {
      int createLimit = limit != 0 ? limit : limitIfNew;
      Path dir = directory != null ? directory : defaultDirectory();
      if (createLimit == 0 && !Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
        throw new IllegalArgumentException("there is no semaphore '" + name + "' in " + dir);
      }
      HostDirectory trusted = HostDirectory.trust(dir, createLimit != 0);
      String recorded = command != null ? command : Holder.ofThisProcess(0).command();
      LeakTracker leaks =
          LeakTracker.of(leakDetection, releaseLeaked, "host semaphore '" + name + "'");
      HostSemaphore semaphore = new HostSemaphore(name, trusted, recorded, leaks);
      semaphore.limitFile.openOrCreate(limit, createLimit);
      return semaphore;
    }
  }

  static String checkName(String name) {
    return Arguments.checkName("the name", name);
  }

  static int checkLimit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("the limit must be 1 or more, was " + limit);
    }
    return limit;
  }

  // ---------------------------------------------------------------- the limit

  int readLimit() throws IOException {
    return limitFile.read();
  }

  @Override
  public int limit() {
    return limitFile.current();
  }

  /**
   * Stores a new limit for every handle and process. Never waits for another process: the limit
   * file is replaced whole. Also repairs a damaged limit file.
   */
  @Override
  public void setLimit(int limit) {
    limitFile.store(checkLimit(limit));
  }

  // ---------------------------------------------------------------- requests

  /**
   * Takes a place for a new request, waiting for other processes taking theirs until {@code
   * deadline}, or until {@code giveUp} says so.
   */
  HostRequest newRequest(int permits, boolean trying, long deadline, BooleanSupplier giveUp)
      throws InterruptedException, TimeoutException {
    if (closed && permits != 0) {
      throw closedException();
    }
    String record = Holder.ofThisProcess(permits).withCommand(command).serialize();
    try {
      HostRequest request =
          new HostRequest(this, permits, queue.take(record, trying, deadline, giveUp), trying);
      pending.add(request);
      if (closed && permits != 0) { // closed while the place was being taken
        request.withdraw();
        throw closedException();
      }
      return request;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot queue for semaphore '" + name + "' in " + directory.path + ": " + e.getMessage(),
          e);
    }
  }

  TimeoutException timedOut(@Nullable Duration timeout) {
    return new TimeoutException(
        "timed out after "
            + (timeout == null ? "?" : Arguments.format(timeout))
            + " waiting for permits of semaphore '"
            + name
            + "'");
  }

  SemaphoreClosedException closedException() {
    return new SemaphoreClosedException("semaphore '" + name + "' is closed (this handle)");
  }

  // ---------------------------------------------------------------- Semaphore

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    try {
      return acquireUntil(permits, Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    return acquireUntil(permits, HostRequest.deadlineAfter(Arguments.toNanos(timeout)), timeout);
  }

  private Permit acquireUntil(int permits, long deadline, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    Arguments.checkWeight(permits, limit());
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    async.sync(); // queues behind this handle's asynchronous requests made before
    HostRequest request;
    try {
      request = newRequest(permits, false, deadline, () -> false);
    } catch (TimeoutException busy) {
      throw timedOut(timeout);
    }
    return request.awaitGrant(deadline, timeout, () -> false);
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
    Arguments.checkWeight(permits, limit());
    async.sync();
    boolean interrupted = Thread.interrupted(); // tryAcquire does not wait for long: no interrupts
    long deadline = System.nanoTime() + TRY_GRACE_NANOS;
    HostRequest request = null;
    try {
      request = newRequest(permits, true, deadline, () -> false);
      return Optional.<Permit>ofNullable(request.pollUntilBusy(deadline));
    } catch (TimeoutException | InterruptedException stoppedTakingAPlace) {
      return Optional.empty(); // a process stopped while taking its place: the queue is busy
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    } finally {
      if (request != null) {
        request.withdraw(); // does nothing if granted
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    return acquireAsyncUntil(permits, Long.MAX_VALUE, null);
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    return acquireAsyncUntil(
        permits, HostRequest.deadlineAfter(Arguments.toNanos(timeout)), timeout);
  }

  private CompletableFuture<Permit> acquireAsyncUntil(
      int permits, long deadline, @Nullable Duration timeout) {
    Arguments.checkWeight(permits, limitFile.limitFor(permits));
    return async.start(permits, deadline, timeout, permit -> permit);
  }

  /**
   * The free permits: the limit less the permits held, negative while a lowered limit is paid back.
   * A snapshot, not an atomic one: a request that is gathering its permits one lock at a time is
   * counted with the ones it has so far.
   */
  @Override
  public int available() {
    async.sync();
    try {
      int limit = limit();
      java.util.concurrent.locks.ReentrantLock settling = slots.settling();
      settling.lock(); // a release of this JVM is seen whole (see Slots)
      try {
        return limit - LockFiles.uninterrupted(slots::heldRecords).size();
      } finally {
        settling.unlock();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  @Override
  public int queueLength() {
    async.sync();
    try {
      return LockFiles.uninterrupted(queue::waiting).size();
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  @Override
  @SuppressWarnings("NullAway") // completes a CompletableFuture<Void> with null
  public CompletableFuture<Void> awaitIdle() {
    return async.start(
        0,
        Long.MAX_VALUE,
        null,
        permit -> {
          permit.release();
          return null;
        });
  }

  /**
   * Closes this handle: its queued requests fail with {@link SemaphoreClosedException} and it takes
   * no new ones. Other handles and processes are not affected; permits held stay valid.
   */
  @Override
  public void close() {
    closed = true;
    for (HostRequest request : List.copyOf(pending)) {
      if (request.permits != 0) {
        request.withdraw();
      }
    }
    async.signal(); // fails the asynchronous requests still queued
  }

  @Override
  public Optional<SemaphoreStats> stats() {
    return Optional.empty();
  }

  // ---------------------------------------------------------------- host-specific

  /** The semaphore's name. */
  public String name() {
    return name;
  }

  /** The directory that holds it. */
  public Path directory() {
    return directory.path;
  }

  /**
   * Who holds permits now, one entry per holder, and who waits, oldest first. Never waits for
   * another process.
   */
  public Status status() throws IOException {
    async.sync();
    List<Holder> holders = LockFiles.uninterrupted(slots::holders);
    List<Holder> waiters = LockFiles.uninterrupted(queue::waiters);
    return new Status(name, LockFiles.uninterrupted(this::readLimit), holders, waiters);
  }

  /**
   * A snapshot of a host semaphore.
   *
   * @param name the semaphore's name
   * @param limit its stored limit
   * @param holders who holds permits
   * @param waiters who waits, oldest first
   */
  public record Status(String name, int limit, List<Holder> holders, List<Holder> waiters) {
    /** The permits held in all. */
    public int held() {
      return holders.stream().mapToInt(Holder::permits).sum();
    }
  }

  @Override
  public String toString() {
    return "HostSemaphore[name="
        + name
        + ", directory="
        + directory.path
        + (closed ? ", closed]" : "]");
  }

  /**
   * Keeps {@code permit}'s slots held, in the eyes of every process, for as long as any process of
   * the session that {@code leader} leads runs (setsid(2)), even after this process has died and
   * its locks with it. That is how {@code jeton run} keeps its permits held by the command it runs,
   * and everything the command started, if {@code jeton} itself is killed: no one gets in beside
   * them. On Linux every process of the session counts; elsewhere the leader only. A {@link
   * Permit#release()} still frees the permits at once: call it once the session is over.
   *
   * @throws IllegalArgumentException if {@code permit} is not a live permit of this semaphore
   */
  public void holdWhileSessionRuns(Permit permit, ProcessHandle leader) throws IOException {
    if (!(permit instanceof HostPermit) || ((HostPermit) permit).semaphore != this) {
      throw new IllegalArgumentException(permit + " is not a permit of " + this);
    }
    ((HostPermit) permit).holdWhileSessionRuns(leader);
  }
}
