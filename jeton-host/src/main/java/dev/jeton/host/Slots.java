package dev.jeton.host;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The permits of a {@link HostSemaphore}: {@code slots/<i>}, one file per permit, i from 0. Holding
 * permit i is holding the exclusive lock on its file; the holder writes its record into it once
 * granted. A slot taken by a request still gathering is emptied at once, so that no one reads the
 * record of an earlier holder as the current one's.
 *
 * <p>A record may name a process session ({@link HostSemaphore#holdWhileSessionRuns}): then the
 * slot stays held while any process of that session runs, even once the lock is gone with the
 * process that wrote it ({@code jeton run} killed by SIGKILL while its command goes on).
 */
final class Slots {
  /**
   * One lock per semaphore for the threads of this JVM, whatever their handles: a release frees its
   * slots one file at a time, and a request that looked at them half-way would see a multi-permit
   * release half done (a tryAcquire(1) granted, then the next one refused with no holder left).
   * Releases and the head's look at the slots take it; neither waits on another process while
   * holding it. Across processes the half-way view remains (README, decision 38).
   */
  private static final ConcurrentHashMap<Path, ReentrantLock> SETTLING = new ConcurrentHashMap<>();

  private final HostDirectory directory;
  private final Path slots;
  private final ReentrantLock settling;

  Slots(HostDirectory directory, Path home) {
    this.directory = directory;
    this.slots = home.resolve("slots");
    this.settling = SETTLING.computeIfAbsent(slots.toAbsolutePath(), p -> new ReentrantLock());
  }

  /** The lock under which this JVM's threads release slots and look at them (see SETTLING). */
  ReentrantLock settling() {
    return settling;
  }

  Path path(int index) {
    return slots.resolve(Integer.toString(index));
  }

  /** The slot number of {@code slot}'s file, or -1 for a file that is not a slot. */
  static int index(Path slot) {
    String name = slot.getFileName().toString();
    if (name.isEmpty() || name.length() > 10 || !name.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    try {
      return Integer.parseInt(name);
    } catch (NumberFormatException tooLarge) {
      return -1;
    }
  }

  /** Takes slot {@code index} if no one holds it, emptying its record; else null. */
  LockFiles.@Nullable Held tryTake(int index) throws IOException {
    LockFiles.Held slot = LockFiles.tryLock(directory, path(index));
    if (slot != null) {
      try {
        if (Holder.sessionRuns(slot.read())) {
          slot.close(); // its holder died, but the session it ran under still holds it
          return null;
        }
        slot.clear();
      } catch (IOException | RuntimeException e) {
        slot.close();
        throw e;
      }
    }
    return slot;
  }

  /** Whether some process (this one included) or a session named in its record holds it. */
  boolean isHeld(int index) throws IOException {
    return held(LockFiles.probe(directory, path(index)));
  }

  private static boolean held(LockFiles.Probe probe) {
    return probe.held || Holder.sessionRuns(probe.content);
  }

  /** How many slots at or above {@code limit} are held (after the limit was lowered). */
  int heldAtOrAbove(int limit) throws IOException {
    int held = 0;
    for (Path slot : files()) {
      if (index(slot) >= limit && held(LockFiles.probe(directory, slot))) {
        held++;
      }
    }
    return held;
  }

  /** The records of the held slots; empty for a slot taken by a request not yet granted. */
  List<String> heldRecords() throws IOException {
    List<String> held = new ArrayList<>();
    for (Path slot : files()) {
      LockFiles.Probe probe = LockFiles.probe(directory, slot);
      if (held(probe)) {
        held.add(probe.content);
      }
    }
    return held;
  }

  /** Who holds the slots: one holder per record, which a holder writes into each of its slots. */
  List<Holder> holders() throws IOException {
    List<Holder> holders = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (String record : heldRecords()) {
      if (seen.add(record)) {
        Holder.parse(record).ifPresent(holders::add);
      }
    }
    return holders;
  }

  private List<Path> files() throws IOException {
    List<Path> files = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(slots)) {
      for (Path entry : entries) {
        if (index(entry) >= 0) {
          files.add(entry);
        }
      }
    } catch (IOException e) {
      throw FileFailures.of("list", slots, e);
    }
    return files;
  }
}
