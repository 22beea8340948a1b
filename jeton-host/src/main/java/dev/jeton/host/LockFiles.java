package dev.jeton.host;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Exclusive OS file locks that the threads of one JVM can share safely.
 *
 * <p>POSIX record locks belong to the process, not to a thread or a channel: two threads of one
 * JVM cannot both hold one (Java throws {@code OverlappingFileLockException}), and closing
 * <em>any</em> channel on a file drops every lock the process holds on it. So this class is the
 * only place that opens lock files, and it claims a path in {@link #IN_USE} before opening it:
 * while one thread has a path claimed (to lock it, hold it, or look at it), no other thread of
 * this JVM opens that file.
 */
final class LockFiles {
  private LockFiles() {}

  /** Paths this JVM has open: a {@link Held} lock, or {@link #LOOKING} for a short probe. */
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

    private Held(Path path, FileChannel channel, FileLock lock) {
      this.path = path;
      this.channel = channel;
      this.lock = lock;
    }

    /** Replaces the file's content (the lock's holder record). */
    void write(String text) throws IOException {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      channel.truncate(0);
      channel.write(ByteBuffer.wrap(bytes), 0);
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
  static @Nullable Held tryLock(Path path) throws IOException {
    if (IN_USE.putIfAbsent(path, LOOKING) != null) {
      return null; // this JVM holds it, or another thread is looking at it right now
    }
    FileChannel channel = null;
    try {
      channel =
          FileChannel.open(
              path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
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
      throw e;
    }
  }

  /**
   * Tells whether some process holds {@code path}, and what the holder wrote in it. A file that
   * does not exist is free.
   */
  static Probe probe(Path path) throws IOException {
    for (; ; ) {
      Object mine = IN_USE.get(path);
      if (mine instanceof Held) { // a lock lost to an interrupt is not held, whatever is left
        return new Probe(((Held) mine).isValid(), ((Held) mine).content());
      }
      if (mine == null && IN_USE.putIfAbsent(path, LOOKING) == null) {
        break;
      }
      Thread.onSpinWait(); // another thread of this JVM is looking at it for a moment
    }
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
      String content = readAll(channel);
      // A shared lock is enough to learn whether anyone holds an exclusive one.
      FileLock lock = channel.tryLock(0, Long.MAX_VALUE, true);
      if (lock != null) {
        lock.release();
        return new Probe(false, content);
      }
      return new Probe(true, content);
    } catch (java.nio.file.NoSuchFileException gone) {
      return new Probe(false, "");
    } finally {
      IN_USE.remove(path, LOOKING);
    }
  }

  /** The body of a short critical section under an exclusive lock. */
  interface Section<T extends @Nullable Object> {
    T run() throws IOException;
  }

  /**
   * Runs {@code section} holding the exclusive lock on {@code path}, waiting for it: first
   * against the other threads of this JVM, then, in the kernel, against other processes.
   */
  static <T extends @Nullable Object> T exclusive(Path path, Section<T> section) throws IOException {
    ReentrantLock mutex = MUTEXES.computeIfAbsent(path, p -> new ReentrantLock());
    mutex.lock();
    try (FileChannel channel =
            FileChannel.open(
                path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock = channel.lock()) {
      return section.run();
    } finally {
      mutex.unlock();
    }
  }

  private static String readAll(FileChannel channel) throws IOException {
    long size = channel.size();
    if (size > 64 * 1024) {
      size = 64 * 1024; // a holder record is small; never read a runaway file whole
    }
    ByteBuffer buffer = ByteBuffer.allocate((int) size);
    while (buffer.hasRemaining() && channel.read(buffer, buffer.position()) > 0) {
      // keep reading
    }
    return new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
  }
}
