package dev.jeton.host;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Exclusive OS file locks that the threads of one JVM can share safely.
 *
 * <p>POSIX record locks belong to the process, not to a thread or a channel: two threads of one JVM
 * cannot both hold one (Java throws {@code OverlappingFileLockException}), and closing <em>any</em>
 * channel on a file drops every lock the process holds on it. So this class is the only place that
 * opens lock files, and it claims a path in {@link #IN_USE} before opening it: while one thread has
 * a path claimed (to lock it, hold it, or look at it), no other thread of this JVM opens that file.
 */
final class LockFiles {
  private LockFiles() {}

  /**
   * Paths this JVM has open: a {@link Held} lock, {@link #LOOKING} for a short probe, or a {@link
   * Wait} for a thread waiting in the kernel for another process to unlock the file.
   */
  private static final ConcurrentHashMap<Path, Object> IN_USE = new ConcurrentHashMap<>();

  private static final Object LOOKING = new Object();

  /** One mutex per path for the short critical sections taken with {@link #exclusive}. */
  private static final ConcurrentHashMap<Path, ReentrantLock> MUTEXES = new ConcurrentHashMap<>();

  /** A lock this JVM holds on a file, with the file's content as this JVM last wrote it. */
  static final class Held implements AutoCloseable {
    final Path path;
    private final FileChannel channel;
    private final FileLock lock;
    private volatile String content = "";
    private final java.util.concurrent.CompletableFuture<Void> closed =
        new java.util.concurrent.CompletableFuture<>();

    private Held(Path path, FileChannel channel, FileLock lock) {
      this.path = path;
      this.channel = channel;
      this.lock = lock;
    }

    /** What the file holds now (written by this process or an earlier holder). */
    String read() throws IOException {
      try {
        return HostDirectory.read(channel);
      } catch (IOException e) {
        throw FileFailures.of("read", path, e);
      }
    }

    /** Empties the file, so that no one reads an earlier holder's record as ours. */
    void clear() throws IOException {
      try {
        channel.truncate(0);
      } catch (IOException e) {
        throw FileFailures.of("write", path, e);
      }
      content = "";
    }

    /** Replaces the file's content (the lock's holder record). */
    void write(String text) throws IOException {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      try {
        channel.truncate(0);
        channel.write(ByteBuffer.wrap(bytes), 0);
      } catch (IOException e) {
        throw FileFailures.of("write", path, e);
      }
      content = text;
    }

    String content() {
      return content;
    }

    /** Whether the lock is still held: an interrupt during I/O closes the channel and drops it. */
    boolean isValid() {
      return channel.isOpen() && lock.isValid();
    }

    /** Releases the lock; idempotent. */
    @Override
    public void close() throws IOException {
      try {
        if (lock.isValid()) {
          lock.release();
        }
        channel.close();
      } finally {
        IN_USE.remove(path, this);
        closed.complete(null);
      }
    }
  }

  /** What a probe found: free, or held (by this JVM or another process) with its content. */
  static final class Probe {
    final boolean held;
    final String content;

    Probe(boolean held, String content) {
      this.held = held;
      this.content = content;
    }
  }

  /** Locks {@code path}, creating it if needed, if no process holds it; else returns null. */
  static @Nullable Held tryLock(HostDirectory directory, Path path) throws IOException {
    return tryLock(directory, path, true);
  }

  /** Locks {@code path} if it exists and no process holds it; else returns null. */
  static @Nullable Held tryLockExisting(HostDirectory directory, Path path) throws IOException {
    try {
      return tryLock(directory, path, false);
    } catch (java.nio.file.NoSuchFileException gone) {
      return null;
    }
  }

  private static @Nullable Held tryLock(HostDirectory directory, Path path, boolean create)
      throws IOException {
    if (IN_USE.putIfAbsent(path, LOOKING) != null) {
      return null; // this JVM holds it, or another thread is looking at it right now
    }
    FileChannel channel = null;
    try {
      channel = create ? directory.openOrCreate(path) : directory.open(path, true);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        channel.close();
        IN_USE.remove(path, LOOKING);
        return null;
      }
      Held held = new Held(path, channel, lock);
      IN_USE.put(path, held);
      return held;
    } catch (IOException | RuntimeException e) {
      if (channel != null) {
        channel.close();
      }
      IN_USE.remove(path, LOOKING);
      if (e instanceof IOException) {
        throw FileFailures.of("lock", path, (IOException) e);
      }
      throw e;
    }
  }

  /**
   * Makes {@code path} holding {@code text}, already locked by this process: the file is made and
   * locked under a temporary name, then linked into place, so that no one ever sees it unlocked.
   * Returns null if {@code path} exists.
   */
  static @Nullable Held createLocked(HostDirectory directory, Path path, String text)
      throws IOException {
    Path temporary = directory.writeTemporary(path, text);
    try {
      Held held = tryLock(directory, temporary, false);
      if (held == null) {
        throw new IOException("could not lock " + temporary + ", a file of this process's own");
      }
      // Claim the name first: a thread of this JVM probing the new file would close its own
      // channel on it, and with it the lock.
      for (Object claim; (claim = IN_USE.putIfAbsent(path, LOOKING)) != null; ) {
        if (claim instanceof Held) {
          held.close();
          return null; // this JVM holds a file by that name
        }
        Thread.onSpinWait(); // another thread is looking at that name for a moment
      }
      try {
        java.nio.file.Files.createLink(path, temporary);
      } catch (IOException | RuntimeException e) {
        IN_USE.remove(path, LOOKING);
        held.close();
        if (e instanceof java.nio.file.FileAlreadyExistsException) {
          return null;
        }
        if (e instanceof IOException) {
          throw FileFailures.of("create", path, (IOException) e);
        }
        throw e;
      }
      Held placed = new Held(path, held.channel, held.lock);
      placed.content = text;
      IN_USE.remove(temporary, held);
      IN_USE.put(path, placed);
      return placed;
    } finally {
      java.nio.file.Files.deleteIfExists(temporary);
    }
  }

  /**
   * Tells whether some process holds {@code path}, and what the holder wrote in it. A file that
   * does not exist is free. Never waits: the probe holds a shared lock for a moment only.
   */
  static Probe probe(HostDirectory directory, Path path) throws IOException {
    for (; ; ) {
      Object mine = IN_USE.get(path);
      if (mine instanceof Held) { // a lock lost to an interrupt is not held, whatever is left
        return new Probe(((Held) mine).isValid(), ((Held) mine).content());
      }
      if (mine instanceof Wait) {
        // A thread of this JVM waits for the file's holder, so it was held a moment ago; a
        // lock tried here would clash with that wait (OverlappingFileLockException).
        try {
          return new Probe(true, directory.read(path));
        } catch (java.nio.file.NoSuchFileException gone) {
          return new Probe(false, "");
        }
      }
      if (mine == null && IN_USE.putIfAbsent(path, LOOKING) == null) {
        break;
      }
      Thread.onSpinWait(); // another thread of this JVM is looking at it for a moment
    }
    try (FileChannel channel = directory.open(path, false)) {
      String content = HostDirectory.read(channel);
      // A shared lock is enough to learn whether anyone holds an exclusive one.
      FileLock lock = channel.tryLock(0, Long.MAX_VALUE, true);
      if (lock != null) {
        lock.release();
        return new Probe(false, content);
      }
      return new Probe(true, content);
    } catch (java.nio.file.NoSuchFileException gone) {
      return new Probe(false, "");
    } catch (IOException e) {
      throw FileFailures.of("look at", path, e);
    } finally {
      IN_USE.remove(path, LOOKING);
    }
  }

  /**
   * A thread's wait, in the kernel, for another process to unlock a file; {@link #cancel()} ends it
   * from another thread (a cancelled request, a deadline, close).
   */
  static final class Wait {
    final Path path;
    private final java.util.concurrent.CompletableFuture<Void> cancelled =
        new java.util.concurrent.CompletableFuture<>();
    private volatile @Nullable FileChannel channel;

    Wait(Path path) {
      this.path = path;
    }

    /** Ends the wait now, or before it starts. */
    void cancel() {
      cancelled.complete(null);
      FileChannel c = channel;
      if (c != null) {
        try {
          c.close(); // the blocked lock call throws AsynchronousCloseException
        } catch (IOException ignored) {
          // closed all the same
        }
      }
    }
  }

  /**
   * Waits until no process holds the exclusive lock on {@code wait.path} (its holder unlocked it or
   * died), or until {@code wait} is cancelled. The kernel wakes the thread: nothing polls. Returns
   * early, for the caller to look again, when another thread of this JVM is looking at the file, or
   * when the kernel refuses the wait as a deadlock (it judges whole processes, so a multi-threaded
   * process can look like one).
   *
   * @throws InterruptedException if the thread is interrupted (the wait ends at once)
   */
  static void awaitUnlocked(HostDirectory directory, Wait wait)
      throws IOException, InterruptedException {
    Path path = wait.path;
    Object claim = IN_USE.putIfAbsent(path, wait);
    if (claim instanceof Held) { // a thread of this JVM holds it: wait for it here
      try {
        java.util.concurrent.CompletableFuture.anyOf(((Held) claim).closed, wait.cancelled).get();
      } catch (java.util.concurrent.ExecutionException impossible) {
        throw new AssertionError(impossible);
      }
      return;
    }
    if (claim != null) {
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // someone looks: look again
      return;
    }
    FileChannel channel = null;
    try {
      channel = directory.open(path, false);
      wait.channel = channel;
      if (wait.cancelled.isDone()) {
        return;
      }
      channel.lock(0, Long.MAX_VALUE, true).release(); // a shared lock: granted once unheld
    } catch (java.nio.channels.ClosedByInterruptException
        | java.nio.channels.FileLockInterruptionException e) {
      Thread.interrupted(); // thrown instead
      throw new InterruptedException();
    } catch (java.nio.file.NoSuchFileException | java.nio.channels.ClosedChannelException gone) {
      // the file is gone, or the wait was cancelled (AsynchronousCloseException)
    } catch (IOException e) {
      if (!String.valueOf(e.getMessage()).contains("deadlock")) {
        throw FileFailures.of("wait for the lock on", path, e);
      }
      java.util.concurrent.locks.LockSupport.parkNanos(5_000_000); // EDEADLK: look again soon
    } finally {
      wait.channel = null;
      if (channel != null) {
        channel.close();
      }
      IN_USE.remove(path, wait);
    }
  }

  /** The body of a short critical section under an exclusive lock. */
  interface Section<T extends @Nullable Object> {
    T run() throws IOException;
  }

  /** The shortest and longest pause between two tries of a lock another process holds. */
  private static final long MIN_PAUSE_NANOS = 50_000;

  private static final long MAX_PAUSE_NANOS = 5_000_000;

  /**
   * Runs {@code section} holding the exclusive lock on {@code path}, waiting for it until {@code
   * deadline} (a {@link System#nanoTime()} value, or {@link Long#MAX_VALUE}): first against the
   * other threads of this JVM, then against other processes, by trying the lock with growing pauses
   * (a kernel wait could not honour the deadline or an interrupt). The section runs with interrupts
   * held back (see {@link HostSemaphore#uninterrupted}).
   *
   * @throws InterruptedException if interrupted while waiting
   * @throws java.util.concurrent.TimeoutException if the deadline passed, or {@code giveUp} said
   *     so, before the lock was had
   */
  static <T extends @Nullable Object> T exclusive(
      HostDirectory directory,
      Path path,
      long deadline,
      java.util.function.BooleanSupplier giveUp,
      Section<T> section)
      throws IOException, InterruptedException, java.util.concurrent.TimeoutException {
    ReentrantLock mutex = MUTEXES.computeIfAbsent(path, p -> new ReentrantLock());
    if (deadline == Long.MAX_VALUE) {
      mutex.lockInterruptibly();
    } else if (!mutex.tryLock(
        Math.max(0, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS)) {
      throw busy(path);
    }
    try {
      long pause = MIN_PAUSE_NANOS;
      for (; ; ) {
        @Nullable Held held =
            LockFiles.<@Nullable Held>uninterrupted(() -> tryLock(directory, path));
        if (held != null) {
          try {
            return uninterrupted(section::run);
          } finally {
            held.close();
          }
        }
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (left <= 0 || giveUp.getAsBoolean()) {
          throw busy(path);
        }
        java.util.concurrent.locks.LockSupport.parkNanos(Math.min(pause, left));
        pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
      }
    } finally {
      mutex.unlock();
    }
  }

  private static java.util.concurrent.TimeoutException busy(Path path) {
    return new java.util.concurrent.TimeoutException(
        "another process holds " + path + " (it may be stopped)");
  }

  /**
   * Runs file I/O with the thread's interrupt status cleared, then restores it. File channels close
   * themselves when an interrupted thread uses them, which would drop this process's locks on the
   * file; interrupts are honoured between steps instead.
   */
  static <T extends @Nullable Object> T uninterrupted(Section<T> io) throws IOException {
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

  /** Releases {@code held}, ignoring failure: the lock dies with the channel, or the process. */
  static void closeQuietly(Held held) {
    try {
      held.close();
    } catch (IOException ignored) {
      // the lock dies with the channel, and the channel with the process at the latest
    }
  }
}
