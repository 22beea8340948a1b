package dev.jeton.host;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import dev.jeton.SemaphoreStats;
import dev.jeton.internal.Arguments;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore shared by every process of one machine, identified by a name under a directory.
 *
 * <p>Holding a permit is holding OS file locks, so a process that dies, even by {@code kill -9},
 * frees its permits at once, with no cleanup step and no timeout. The limit is stored with the
 * semaphore: the first opener sets it, a later opener with a different limit gets an error, and
 * {@link #setLimit(int)} changes it for everyone.
 *
 * <h2>Ordering</h2>
 *
 * <p>Every request takes a numbered ticket when it arrives, and only the oldest ticket still held
 * by a live process or thread may take permits; it keeps the ones it gets until it has all it
 * needs. So requests are granted in the order they took their tickets, across processes and
 * threads, and a large request is never starved by small ones. A waiter that dies is dropped from
 * the queue as soon as a live one notices its ticket is no longer locked. Waiters poll (every 1
 * to 20 ms), so a grant reaches its waiter within about 20 ms of the permits coming free.
 *
 * <h2>Differences from the in-process semaphore</h2>
 *
 * <ul>
 *   <li>{@link #close()} closes this handle only: its queued requests fail and it takes no new
 *       ones, but other handles and processes are unaffected.
 *   <li>The limit is at least 1. {@link #stats()} is always empty.
 *   <li>Every operation does file I/O; an I/O failure surfaces as {@link UncheckedIOException}.
 * </ul>
 */
public final class HostSemaphore implements Semaphore {
  /*
   * Overview
   *
   * Files, under <directory>/<name>/:
   *   limit          the stored limit, replaced atomically (write to a temporary file, rename)
   *   meta.lock      locked briefly to create the semaphore, change its limit, or take a ticket
   *   seq            the last ticket number, updated under meta.lock
   *   queue/<n>      one file per waiting request, locked by it while it waits, holding its
   *                  Holder record; <n> is the zero-padded ticket number
   *   slots/<i>      one file per permit, i in [0, limit); holding permit i is holding the
   *                  exclusive lock on slots/<i>, and the holder writes its record into it
   *
   * A request: take a ticket (under meta.lock: bump seq, create and lock queue/<n>); then poll:
   * when no older ticket is alive (locked; dead ones are deleted), lock free slots one by one
   * until it holds as many as it asked for, then drop its ticket. Release unlocks the slots.
   *
   * Invariants:
   *   I1. At most `limit` slots below the limit are ever locked, one per permit, because each
   *       slot is one exclusive lock. After setLimit lowers the limit, slots at or above it are
   *       no longer handed out; their holders keep them until they release.
   *   I2. Only the oldest live ticket takes slots, so grants follow ticket order.
   *   I3. A record in a file is believed only while the file is locked: a dead process's locks
   *       are gone, so its stale records are never shown as holders or waiters.
   *
   * Threads of this JVM share the files through LockFiles, which keeps them from opening a file
   * another thread holds (closing any channel would drop the process's lock).
   */

  static final int MIN_POLL_MILLIS = 1;
  static final int MAX_POLL_MILLIS = 20;
  private static final int MAX_NAME_LENGTH = 200;

  private static final ExecutorService WAITERS =
      Executors.newCachedThreadPool(
          task -> {
            Thread thread = new Thread(task, "jeton-host-waiter");
            thread.setDaemon(true);
            return thread;
          });

  private final String name;
  private final Path directory;
  private final Path home;
  private final String command;
  private final Set<Request> pending = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private HostSemaphore(String name, Path directory, Path home, String command) {
    this.name = name;
    this.directory = directory;
    this.home = home;
    this.command = command;
  }

  // ---------------------------------------------------------------- opening

  /** Starts opening the semaphore called {@code name}; see {@link Builder}. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /**
   * The directory used when none is given: {@code $XDG_RUNTIME_DIR/jeton} when that variable
   * names a directory, else {@code jeton-<user>} in the system's temporary directory.
   */
  public static Path defaultDirectory() {
    String runtime = System.getenv("XDG_RUNTIME_DIR");
    if (runtime != null && !runtime.isBlank() && Files.isDirectory(Path.of(runtime))) {
      return Path.of(runtime, "jeton");
    }
    return Path.of(System.getProperty("java.io.tmpdir"), "jeton-" + System.getProperty("user.name"));
  }

  /** The names of the semaphores in {@code directory}, sorted; empty if it does not exist. */
  public static List<String> list(Path directory) throws IOException {
    List<String> names = new ArrayList<>();
    if (!Files.isDirectory(directory)) {
      return names;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
      for (Path entry : entries) {
        if (Files.isRegularFile(entry.resolve("limit"))) {
          names.add(entry.getFileName().toString());
        }
      }
    }
    names.sort(null);
    return names;
  }

  /** Opens, or creates, a machine-wide semaphore. Each setter checks its argument at once. */
  public static final class Builder {
    private final String name;
    private @Nullable Path directory;
    private int limit;
    private int limitIfNew;
    private @Nullable String command;

    private Builder(String name) {
      this.name = checkName(name);
    }

    /** The directory that holds the semaphores; default {@link #defaultDirectory()}. */
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
     * The limit to create the semaphore with if it does not exist, without requiring an
     * existing one to have it (what {@code jeton run} does without {@code --permits}).
     */
    public Builder limitIfNew(int limit) {
      this.limitIfNew = checkLimit(limit);
      return this;
    }

    /** The command line recorded for this process's holders; default the JVM's own. */
    public Builder command(String command) {
      this.command = command;
      return this;
    }

    /**
     * Opens the semaphore, creating it if it does not exist and a limit was given.
     *
     * @throws IllegalArgumentException if the directory is missing or not writable, if the
     *     semaphore exists with another limit, or if it does not exist and no limit was given
     */
    public HostSemaphore open() throws IOException {
      Path dir = directory;
      if (dir == null) {
        dir = defaultDirectory();
        if (!Files.isDirectory(dir)) { // private to this user: others may not read the records
          Files.createDirectories(
              dir,
              java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                  java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        }
      }
      if (!Files.isDirectory(dir)) {
        throw new IllegalArgumentException("the directory " + dir + " does not exist");
      }
      if (!Files.isWritable(dir)) {
        throw new IllegalArgumentException("the directory " + dir + " is not writable");
      }
      Path home = dir.resolve(name);
      String recorded = command != null ? command : Holder.ofThisProcess(0).command();
      HostSemaphore semaphore = new HostSemaphore(name, dir, home, recorded);
      semaphore.openOrCreate(limit, limit != 0 ? limit : limitIfNew);
      return semaphore;
    }
  }

  /**
   * Opens the semaphore: if it exists, checks it has {@code requestedLimit} (unless 0); if not,
   * creates it with {@code createLimit} (unless 0, which is an error).
   */
  private void openOrCreate(int requestedLimit, int createLimit) throws IOException {
    Path limitFile = home.resolve("limit");
    if (!Files.exists(limitFile) && createLimit == 0) {
      throw new IllegalArgumentException(
          "there is no semaphore '" + name + "' in " + directory + ": give a limit to create it");
    }
    Files.createDirectories(home.resolve("queue"));
    Files.createDirectories(home.resolve("slots"));
    LockFiles.exclusive(
        home.resolve("meta.lock"),
        () -> {
          if (Files.exists(limitFile)) {
            int stored = readLimit();
            if (requestedLimit != 0 && requestedLimit != stored) {
              throw new IllegalArgumentException(
                  "semaphore '"
                      + name
                      + "' exists with limit "
                      + stored
                      + ", not "
                      + requestedLimit
                      + ": change the limit explicitly (setLimit, or jeton limit)");
            }
          } else {
            writeLimit(createLimit);
          }
          return Boolean.TRUE;
        });
  }

  static String checkName(String name) {
    if (name.isEmpty()) {
      throw new IllegalArgumentException("the name must not be empty");
    }
    if (name.length() > MAX_NAME_LENGTH) {
      throw new IllegalArgumentException(
          "the name must be at most " + MAX_NAME_LENGTH + " characters, was " + name.length());
    }
    if (name.contains("/") || name.contains("\\") || name.contains("..") || name.equals(".")) {
      throw new IllegalArgumentException(
          "the name must not contain '/', '\\' or '..', nor be '.', was '" + name + "'");
    }
    for (int i = 0; i < name.length(); i++) {
      if (Character.isISOControl(name.charAt(i))) {
        throw new IllegalArgumentException(
            "the name must not contain control characters, was " + name.codePoints().boxed().toList());
      }
    }
    return name;
  }

  static int checkLimit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("the limit must be 1 or more, was " + limit);
    }
    return limit;
  }

  // ---------------------------------------------------------------- the files

  private int readLimit() throws IOException {
    String text = Files.readString(home.resolve("limit"), StandardCharsets.UTF_8).trim();
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IOException("the limit file of semaphore '" + name + "' is damaged: '" + text + "'");
    }
  }

  private void writeLimit(int limit) throws IOException {
    Path temporary = home.resolve("limit.tmp-" + ProcessHandle.current().pid());
    Files.writeString(temporary, limit + "\n", StandardCharsets.UTF_8);
    try {
      Files.move(
          temporary,
          home.resolve("limit"),
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(temporary, home.resolve("limit"), StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private Path slot(int index) {
    return home.resolve("slots").resolve(Integer.toString(index));
  }

  /** Takes the next ticket: creates and locks queue/<n>, with this request's record in it. */
  private LockFiles.Held takeTicket(int permits, boolean trying) throws IOException {
    return LockFiles.exclusive(
        home.resolve("meta.lock"),
        () -> {
          Path seqFile = home.resolve("seq");
          long seq = 0;
          if (Files.exists(seqFile)) {
            String text = Files.readString(seqFile, StandardCharsets.UTF_8).trim();
            seq = text.isEmpty() ? 0 : Long.parseLong(text);
          }
          seq++;
          Files.writeString(seqFile, Long.toString(seq), StandardCharsets.UTF_8);
          Path ticket =
              home.resolve("queue").resolve(String.format("%019d", seq) + (trying ? TRYING : ""));
          // Another process may be probing the new file this instant (a probe holds a shared
          // lock for a moment), so a failed first try is retried briefly.
          LockFiles.Held held = LockFiles.tryLock(ticket);
          long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
          for (int attempt = 0; held == null && System.nanoTime() < deadline; attempt++) {
            if (attempt < 100) {
              Thread.yield();
            } else {
              java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            held = LockFiles.tryLock(ticket);
          }
          if (held == null) {
            throw new IOException("could not lock the new ticket " + ticket);
          }
          try {
            held.write(Holder.ofThisProcess(permits).withCommand(command).serialize());
          } catch (IOException | RuntimeException e) {
            closeQuietly(held); // e.g. an interrupt closed the channel: give the ticket up
            Files.deleteIfExists(ticket);
            throw e;
          }
          return held;
        });
  }

  /** The suffix of a tryAcquire's ticket: it never waits, so it is not counted as queued. */
  private static final String TRYING = ".try";

  /** Live tickets of requests that wait (not tryAcquire's), oldest first, with their records. */
  private TreeMap<String, String> waitingTickets() throws IOException {
    TreeMap<String, String> waiting = liveTickets();
    waiting.keySet().removeIf(ticket -> ticket.endsWith(TRYING));
    return waiting;
  }

  /** Live tickets, oldest first, with their records; deletes the tickets of the dead. */
  private TreeMap<String, String> liveTickets() throws IOException {
    TreeMap<String, String> live = new TreeMap<>();
    List<Path> dead = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(home.resolve("queue"))) {
      for (Path entry : entries) {
        LockFiles.Probe probe = LockFiles.probe(entry);
        if (probe.held) {
          live.put(entry.getFileName().toString(), probe.content);
        } else {
          dead.add(entry);
        }
      }
    }
    for (Path ticket : dead) {
      deleteIfStillDead(ticket);
    }
    return live;
  }

  private void deleteIfStillDead(Path ticket) throws IOException {
    LockFiles.exclusive(
        home.resolve("meta.lock"),
        () -> {
          if (!LockFiles.probe(ticket).held) {
            Files.deleteIfExists(ticket);
          }
          return Boolean.TRUE;
        });
  }

  // ---------------------------------------------------------------- requests

  /**
   * One request, from ticket to grant. Its lock makes a poll and a withdrawal (cancel, close)
   * exclusive, so that a withdrawal never races with a grant.
   */
  private final class Request {
    final int permits; // 0: the whole limit (awaitIdle), given straight back
    final LockFiles.Held ticket;
    final boolean trying; // a tryAcquire: gives up rather than wait for permits
    boolean busy; // a tryAcquire found it would have to wait; guarded by lock
    final List<LockFiles.Held> slots = new ArrayList<>();
    final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
    boolean finished; // guarded by lock

    Request(int permits, LockFiles.Held ticket, boolean trying) {
      this.permits = permits;
      this.ticket = ticket;
      this.trying = trying;
    }

    /**
     * One attempt: returns the permit if granted now, null to keep waiting.
     *
     * @throws IllegalArgumentException if the limit fell below the request
     */
    @Nullable HostPermit poll() throws IOException {
      boolean interrupted = Thread.interrupted(); // see uninterrupted()
      try {
        return pollNow();
      } catch (IOException e) {
        if (!interruptedDuring(e)) {
          throw e;
        }
        interrupted = true; // the caller sees the interrupt; gathered slots are checked next poll
        return null;
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }

    private @Nullable HostPermit pollNow() throws IOException {
      lock.lock();
      try {
        if (finished) { // withdrawn by close() or by the caller
          if (closed && permits != 0) {
            throw closedException();
          }
          throw new java.util.concurrent.CancellationException("withdrawn");
        }
        int limit = readLimit();
        int need = permits == 0 ? limit : permits;
        if (need > limit) {
          throw new IllegalArgumentException(
              "the limit of semaphore '"
                  + name
                  + "' is now "
                  + limit
                  + ", below the request for "
                  + permits
                  + " permits");
        }
        dropSlotsAtOrAbove(limit);
        slots.removeIf(slot -> !slot.isValid()); // lost to an interrupt during I/O
        String mine = ticket.path.getFileName().toString();
        for (String older : liveTickets().headMap(mine).keySet()) {
          if (trying && !older.endsWith(TRYING)) {
            busy = true; // a request that waits is ahead: tryAcquire never jumps the queue
          }
          return null; // only the oldest takes slots; another tryAcquire finishes at once
        }
        // Permits still held above a lowered limit count against it: hand out fewer slots.
        int usable = limit - heldAtOrAbove(limit);
        for (int i = 0; i < usable && slots.size() < need; i++) {
          if (holds(i)) {
            continue;
          }
          LockFiles.Held slot = LockFiles.tryLock(slot(i));
          if (slot != null) {
            slots.add(slot);
          }
        }
        if (slots.size() < need) {
          if (trying) {
            busy = true; // not enough free now; withdraw() gives back what was gathered
          }
          return null;
        }
        String record = Holder.ofThisProcess(need).withCommand(command).serialize();
        for (LockFiles.Held slot : slots) {
          slot.write(record);
        }
        if (slots.removeIf(slot -> !slot.isValid())) {
          return null; // a lock was lost while writing; gather again rather than over-grant
        }
        finished = true;
        closeTicket();
        return new HostPermit(HostSemaphore.this, List.copyOf(slots));
      } finally {
        lock.unlock();
      }
    }

    /** Gives up: drops the ticket and any slots gathered. Returns false if already granted. */
    boolean withdraw() {
      lock.lock();
      try {
        if (finished) {
          return false;
        }
        finished = true;
        for (LockFiles.Held slot : slots) {
          closeQuietly(slot);
        }
        slots.clear();
        closeTicket();
        return true;
      } finally {
        lock.unlock();
        pending.remove(this);
      }
    }

    private boolean holds(int index) {
      Path path = slot(index);
      for (LockFiles.Held slot : slots) {
        if (slot.path.equals(path)) {
          return true;
        }
      }
      return false;
    }

    private void dropSlotsAtOrAbove(int limit) {
      slots.removeIf(
          slot -> {
            if (slotIndex(slot.path) >= limit) {
              closeQuietly(slot);
              return true;
            }
            return false;
          });
    }

    private void closeTicket() {
      try {
        Files.deleteIfExists(ticket.path);
      } catch (IOException ignored) {
        // an undeletable ticket is unlocked below, so it counts as dead and is swept later
      }
      closeQuietly(ticket);
      pending.remove(this);
    }
  }

  private static void closeQuietly(LockFiles.Held held) {
    try {
      held.close();
    } catch (IOException ignored) {
      // the lock dies with the channel, and the channel with the process at the latest
    }
  }

  private Request newRequest(int permits, boolean trying) {
    if (closed) {
      throw closedException();
    }
    try {
      Request request =
          new Request(permits, uninterrupted(() -> takeTicket(permits, trying)), trying);
      pending.add(request);
      return request;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Polls {@code request} until granted, failing after {@code nanos} unless MAX_VALUE. */
  private Permit await(Request request, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    long start = System.nanoTime();
    long sleep = MIN_POLL_MILLIS;
    boolean granted = false;
    try {
      for (; ; ) {
        if (closed && request.permits != 0) { // awaitIdle keeps working after close
          throw closedException();
        }
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        HostPermit permit = request.poll();
        if (permit != null) {
          granted = true;
          return permit;
        }
        long left = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : nanos - (System.nanoTime() - start);
        if (left <= 0) {
          throw new TimeoutException(
              "timed out after " + timeout + " waiting for permits of semaphore '" + name + "'");
        }
        Thread.sleep(Math.min(sleep, Math.max(1, left / 1_000_000)));
        sleep = Math.min(sleep * 2, MAX_POLL_MILLIS);
      }
    } catch (IOException e) {
      // Interrupted during file I/O (interrupts are cleared around a poll, but may arrive in it):
      // the channel closed itself, or a lock wait was cut short.
      if (Thread.interrupted() || interruptedDuring(e)) {
        InterruptedException interrupted = new InterruptedException();
        interrupted.initCause(e);
        throw interrupted;
      }
      throw new UncheckedIOException(e);
    } finally {
      if (!granted) {
        request.withdraw();
      }
    }
  }

  /** File I/O that may not be cut short. */
  private interface Io<T extends @Nullable Object> {
    T run() throws IOException;
  }

  /**
   * Runs file I/O with the thread's interrupt status cleared, then restores it. File channels
   * close themselves when an interrupted thread uses them, which would drop this process's locks
   * on the file; interrupts are honoured between polls instead.
   */
  static <T extends @Nullable Object> T uninterrupted(Io<T> io) throws IOException {
    boolean interrupted = Thread.interrupted();
    try {
      for (int attempt = 1; ; attempt++) {
        try {
          return io.run();
        } catch (IOException e) {
          if (!interruptedDuring(e) || attempt == 3) {
            throw e;
          }
          interrupted = true; // an interrupt arrived during the I/O: keep it, and try again
          Thread.interrupted();
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Whether {@code e} is file I/O cut short by an interrupt. */
  static boolean interruptedDuring(IOException e) {
    return e instanceof java.nio.channels.ClosedByInterruptException
        || e instanceof java.nio.channels.FileLockInterruptionException;
  }

  private SemaphoreClosedException closedException() {
    return new SemaphoreClosedException("semaphore '" + name + "' is closed (this handle)");
  }

  // ---------------------------------------------------------------- Semaphore

  @Override
  public Permit acquire(int permits) throws InterruptedException {
    try {
      return acquireTimed(permits, Long.MAX_VALUE, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Permit acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    return acquireTimed(permits, Arguments.toNanos(timeout), timeout);
  }

  private Permit acquireTimed(int permits, long nanos, @Nullable Duration timeout)
      throws InterruptedException, TimeoutException {
    Arguments.checkWeight(permits, limit());
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    return await(newRequest(permits, false), nanos, timeout);
  }

  @Override
  public Optional<Permit> tryAcquire(int permits) {
    Arguments.checkWeight(permits, limit());
    Request request = newRequest(permits, true);
    try {
      for (; ; ) {
        HostPermit permit = request.poll();
        if (permit != null) {
          return Optional.of(permit);
        }
        if (request.busy) {
          return Optional.empty();
        }
        Thread.onSpinWait(); // an older tryAcquire is finishing; it never waits for permits
        Thread.yield();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      request.withdraw(); // does nothing if granted
    }
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    return acquireAsyncUpTo(permits, null);
  }

  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    return acquireAsyncUpTo(permits, timeout);
  }

  private CompletableFuture<Permit> acquireAsyncUpTo(int permits, @Nullable Duration timeout) {
    long nanos = timeout == null ? Long.MAX_VALUE : Arguments.toNanos(timeout);
    Arguments.checkWeight(permits, limit());
    RequestFuture<Permit> future = new RequestFuture<>();
    Request request;
    try {
      request = newRequest(permits, false);
    } catch (SemaphoreClosedException e) {
      future.completeExceptionally(e);
      return future;
    }
    try {
      HostPermit now = request.poll(); // granted at once when free: no thread hop
      if (now != null) {
        future.complete(now);
        return future;
      }
    } catch (IOException | RuntimeException e) {
      request.withdraw();
      future.completeExceptionally(e);
      return future;
    }
    future.request = request;
    start(future, nanos, timeout, permit -> permit);
    return future;
  }

  private interface Outcome<T extends @Nullable Object> {
    T of(Permit permit);
  }

  /** Polls the future's request on a waiter thread, completing the future with the outcome. */
  private <T extends @Nullable Object> void start(
      RequestFuture<T> future, long nanos, @Nullable Duration timeout, Outcome<T> outcome) {
    Request request = java.util.Objects.requireNonNull(future.request);
    WAITERS.execute(
        () -> {
          try {
            Permit permit = await(request, nanos, timeout);
            if (!future.complete(outcome.of(permit))) {
              permit.release(); // the caller gave up as it was granted
            }
          } catch (Throwable failure) {
            future.completeExceptionally(failure);
          }
        });
  }

  /** A future whose withdrawal (cancel, failure from outside) withdraws its request at once. */
  private static final class RequestFuture<T extends @Nullable Object> extends CompletableFuture<T> {
    volatile @Nullable Request request;

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      withdraw();
      return cancelled;
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
      boolean completed = super.completeExceptionally(failure);
      withdraw();
      return completed;
    }

    private void withdraw() {
      Request r = request;
      if (r != null && isDone()) {
        r.withdraw();
      }
    }
  }

  @Override
  public int limit() {
    try {
      return uninterrupted(this::readLimit);
    } catch (NoSuchFileException e) {
      throw new IllegalStateException("semaphore '" + name + "' was removed from " + directory, e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The free permits: the limit less the permits held, negative while a lowered limit is paid
   * back. A snapshot, not an atomic one: a request that is gathering its permits one lock at a
   * time is counted with the ones it has so far.
   */
  @Override
  public int available() {
    try {
      return limit() - uninterrupted(this::heldSlots).size();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public int queueLength() {
    try {
      return uninterrupted(this::waitingTickets).size();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** How many slots at or above {@code limit} are still held (after the limit was lowered). */
  private int heldAtOrAbove(int limit) throws IOException {
    int held = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(home.resolve("slots"))) {
      for (Path entry : entries) {
        if (slotIndex(entry) >= limit && LockFiles.probe(entry).held) {
          held++;
        }
      }
    }
    return held;
  }

  private static int slotIndex(Path slot) {
    try {
      return Integer.parseInt(slot.getFileName().toString());
    } catch (NumberFormatException foreign) {
      return -1; // not a slot file: ignored
    }
  }

  /** The held slots and the records their holders wrote. */
  private List<String> heldSlots() throws IOException {
    List<String> held = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(home.resolve("slots"))) {
      for (Path entry : entries) {
        LockFiles.Probe probe = LockFiles.probe(entry);
        if (probe.held) {
          held.add(probe.content);
        }
      }
    }
    return held;
  }

  @Override
  public void setLimit(int limit) {
    checkLimit(limit);
    try {
      uninterrupted(
          () ->
              LockFiles.exclusive(
                  home.resolve("meta.lock"),
                  () -> {
                    writeLimit(limit);
                    return Boolean.TRUE;
                  }));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  @SuppressWarnings("NullAway") // completes a CompletableFuture<Void> with null
  public CompletableFuture<Void> awaitIdle() {
    RequestFuture<Void> future = new RequestFuture<>();
    try {
      future.request = new Request(0, uninterrupted(() -> takeTicket(0, false)), false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    start(
        future,
        Long.MAX_VALUE,
        null,
        permit -> {
          permit.release();
          return null;
        });
    return future;
  }

  /**
   * Closes this handle: its queued requests fail with {@link SemaphoreClosedException} and it
   * takes no new ones. Other handles and processes are not affected; permits held stay valid.
   */
  @Override
  public void close() {
    closed = true;
    for (Request request : List.copyOf(pending)) {
      request.withdraw();
    }
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
    return directory;
  }

  /** Who holds permits now, one entry per holder, and who waits, oldest first. */
  public Status status() throws IOException {
    List<Holder> holders = new ArrayList<>();
    Set<String> seen = new java.util.HashSet<>();
    for (String record : heldSlots()) {
      if (seen.add(record)) { // one record per holder, written into each of its slots
        Holder.parse(record).ifPresent(holders::add);
      }
    }
    List<Holder> waiters = new ArrayList<>();
    for (String record : waitingTickets().values()) {
      Holder.parse(record).ifPresent(waiters::add);
    }
    return new Status(name, limit(), holders, waiters);
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
    return "HostSemaphore[name=" + name + ", directory=" + directory + (closed ? ", closed]" : "]");
  }

  /** A permit: the slot locks it holds. Release is idempotent. */
  private static final class HostPermit implements Permit {
    private final HostSemaphore semaphore;
    private final List<LockFiles.Held> slots;
    private final java.util.concurrent.atomic.AtomicBoolean released =
        new java.util.concurrent.atomic.AtomicBoolean();

    HostPermit(HostSemaphore semaphore, List<LockFiles.Held> slots) {
      this.semaphore = semaphore;
      this.slots = slots;
    }

    @Override
    public int permits() {
      return slots.size();
    }

    @Override
    public void release() {
      if (released.compareAndSet(false, true)) {
        for (LockFiles.Held slot : slots) {
          closeQuietly(slot);
        }
      }
    }

    @Override
    public String toString() {
      return "Permit[permits=" + slots.size() + ", semaphore=" + semaphore.name + "]";
    }
  }
}
