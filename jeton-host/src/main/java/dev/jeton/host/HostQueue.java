package dev.jeton.host;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The queue of a {@link HostSemaphore}: one numbered place file per request, locked by it while it
 * waits, holding its record.
 *
 * <p>Places are numbered from a counter that never goes back: {@code seq} is only ever replaced
 * whole (a new file renamed over it), and a number is always above both the counter and every place
 * in the queue, so a damaged or lost counter can cost at most a gap in the numbers, never a place
 * that jumps the queue or a number used twice. Numbers are taken one at a time under {@code
 * meta.lock}; that lock is held for a few file operations only, and waited for with a deadline and
 * interrupts honoured, so a process stopped while it holds it cannot hang anyone beyond their own
 * deadline.
 *
 * <p>A place file appears already locked (see {@link LockFiles#createLocked}), so an unlocked place
 * is one whose owner has died or left: anyone may delete it, after locking it to be sure. Since
 * numbers are never reused, the name deleted is always the dead place's.
 */
final class HostQueue {
  /** The suffix of a tryAcquire's place: it never waits, so it is not counted as queued. */
  static final String TRYING = ".try";

  private static final int DIGITS = 19;

  private final HostDirectory directory;
  private final Path queue;
  private final Path seq;
  private final Path metaLock;

  HostQueue(HostDirectory directory, Path home) {
    this.directory = directory;
    this.queue = home.resolve("queue");
    this.seq = home.resolve("seq");
    this.metaLock = home.resolve("meta.lock");
  }

  /**
   * Takes the next place, holding {@code record}. Waits for {@code meta.lock} until {@code
   * deadline} ({@link System#nanoTime()}, or {@link Long#MAX_VALUE}), or until {@code giveUp} says
   * so.
   */
  LockFiles.Held take(String record, boolean trying, long deadline, BooleanSupplier giveUp)
      throws IOException, InterruptedException, TimeoutException {
    return locked(deadline, giveUp, () -> placeLocked(record, trying));
  }

  /**
   * Runs {@code section} under {@code meta.lock}, waited for as {@link #take} waits: the queue's
   * numbering, and whatever must happen in the same order as it (a {@link HostRateLimiter}'s
   * schedule), never interleave with another process's.
   */
  <T extends @Nullable Object> T locked(
      long deadline, BooleanSupplier giveUp, LockFiles.Section<T> section)
      throws IOException, InterruptedException, TimeoutException {
    return LockFiles.exclusive(directory, metaLock, deadline, giveUp, section);
  }

  /** Takes the next place, holding {@code record}; only inside {@link #locked}. */
  LockFiles.Held placeLocked(String record, boolean trying) throws IOException {
    long next = Math.max(readCounter(), highestInQueue()) + 1;
    for (; ; next++) {
      if (next >= 10_000_000_000_000_000L) {
        throw new IOException(
            "the queue's counter " + seq + " ran out: remove the semaphore's queue and seq");
      }
      directory.replace(seq, Long.toString(next) + "\n");
      LockFiles.Held place =
          LockFiles.createLocked(directory, queue.resolve(name(next, trying)), record);
      if (place != null) {
        return place;
      }
      // a place by that name exists (left by a damaged counter): take the next number
    }
  }

  private static String name(long number, boolean trying) {
    String digits = Long.toString(number);
    return "0".repeat(DIGITS - digits.length()) + digits + (trying ? TRYING : "");
  }

  /** The counter's value; -1 if it is missing or damaged (the queue then says where to go on). */
  private long readCounter() throws IOException {
    try {
      return Long.parseLong(directory.read(seq).trim());
    } catch (NoSuchFileException | NumberFormatException missingOrDamaged) {
      return -1;
    }
  }

  private long highestInQueue() throws IOException {
    long highest = -1;
    for (String name : names()) {
      highest = Math.max(highest, number(name));
    }
    return highest;
  }

  /** A place's number, or -1 for a name that is not a place's. */
  static long number(String name) {
    String digits =
        name.endsWith(TRYING) ? name.substring(0, name.length() - TRYING.length()) : name;
    if (digits.length() != DIGITS) {
      return -1;
    }
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException notAPlace) {
      return -1;
    }
  }

  private List<String> names() throws IOException {
    List<String> names = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(queue)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (number(name) >= 0) {
          names.add(name);
        }
      }
    } catch (IOException e) {
      throw FileFailures.of("list", queue, e);
    }
    return names;
  }

  /**
   * The live places, oldest first, with their records; deletes the files of dead ones. Never waits
   * for a lock.
   */
  TreeMap<String, String> live() throws IOException {
    TreeMap<String, String> live = new TreeMap<>();
    for (String name : names()) {
      Path place = queue.resolve(name);
      LockFiles.Probe probe = LockFiles.probe(directory, place);
      if (probe.held) {
        live.put(name, probe.content);
      } else {
        deleteIfDead(place);
      }
    }
    return live;
  }

  /**
   * The youngest live place older than {@code mine}, or null if there is none ({@code mine} is at
   * the head). Looks at older places from the youngest down, deleting dead ones, so it usually
   * probes one file, however long the queue.
   */
  @Nullable String predecessor(String mine) throws IOException {
    List<String> older = new ArrayList<>();
    for (String name : names()) {
      if (name.compareTo(mine) < 0) {
        older.add(name);
      }
    }
    older.sort(java.util.Comparator.reverseOrder());
    for (String name : older) {
      Path place = queue.resolve(name);
      if (LockFiles.probe(directory, place).held) {
        return name;
      }
      deleteIfDead(place);
    }
    return null;
  }

  /** The file of place {@code name}. */
  Path path(String name) {
    return queue.resolve(name);
  }

  /** The live places of requests that wait (not tryAcquire's), oldest first. */
  TreeMap<String, String> waiting() throws IOException {
    TreeMap<String, String> waiting = live();
    waiting.keySet().removeIf(place -> place.endsWith(TRYING));
    return waiting;
  }

  /**
   * The records of the requests that wait, oldest first (a record that does not parse left out).
   */
  List<Holder> waiters() throws IOException {
    List<Holder> waiters = new ArrayList<>();
    for (String record : waiting().values()) {
      Holder.parse(record).ifPresent(waiters::add);
    }
    return waiters;
  }

  private void deleteIfDead(Path place) throws IOException {
    LockFiles.Held dead = LockFiles.tryLockExisting(directory, place);
    if (dead != null) {
      try {
        Files.deleteIfExists(place);
      } finally {
        dead.close();
      }
    }
  }
}
