package dev.jeton.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Process sessions (setsid(2)): whether any process of one still runs. {@code jeton run} runs its
 * command in a session of its own, so that the command and everything it starts can be signalled
 * and waited for as one, and so that the permits stay held while any of them runs. Not API:
 * exported only to Jeton's own modules.
 */
public final class Sessions {
  private static final Path PROC = Path.of("/proc");

  private Sessions() {}

  /** When process {@code pid} started, if it runs and the OS tells. */
  public static @Nullable Instant startOf(long pid) {
    return ProcessHandle.of(pid).flatMap(p -> p.info().startInstant()).orElse(null);
  }

  /**
   * Whether any process of the session led by {@code leader} still runs. {@code leaderStart}, when
   * known, tells the leader apart from a later process given the same id. Without {@code /proc}
   * (not Linux), only the leader is looked at.
   */
  public static boolean alive(long leader, @Nullable Instant leaderStart) {
    Optional<ProcessHandle> handle = ProcessHandle.of(leader);
    if (handle.isPresent()
        && handle.get().isAlive()
        && !zombie(PROC.resolve(Long.toString(leader)))) {
      Instant started = handle.get().info().startInstant().orElse(null);
      // A session id is not given to a new process while the session has members, so another
      // process with the leader's id means the session is gone.
      return leaderStart == null || started == null || started.equals(leaderStart);
    }
    return anyMember(leader);
  }

  /** Whether a process other than the leader is in session {@code id} (from /proc). */
  private static boolean anyMember(long id) {
    return !members(id, true).isEmpty();
  }

  /**
   * The processes of session {@code id}, from /proc; empty without it. A process that has started a
   * session of its own (a daemon) is no longer one of them.
   */
  public static List<Long> members(long id) {
    return members(id, false);
  }

  private static List<Long> members(long id, boolean firstOnly) {
    List<Long> members = new ArrayList<>();
    if (!Files.isDirectory(PROC)) {
      return members;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (!name.isEmpty()
            && name.chars().allMatch(Character::isDigit)
            && sessionOf(entry) == id
            && !zombie(entry)) {
          members.add(Long.parseLong(name));
          if (firstOnly) {
            break;
          }
        }
      }
    } catch (IOException | RuntimeException unreadable) {
      // what was read so far
    }
    return members;
  }

  /** The session of the process whose /proc entry is {@code entry}, or -1 if it is gone. */
  private static long sessionOf(Path entry) {
    String[] fields = stat(entry);
    return fields == null ? -1 : Long.parseLong(fields[3]);
  }

  /**
   * Whether the process has exited and waits to be reaped: dead, though the system still lists it
   * (for ever, in a container whose first process reaps no orphans).
   */
  private static boolean zombie(Path entry) {
    String[] fields = stat(entry);
    return fields != null && fields[0].equals("Z");
  }

  /** The fields of /proc/PID/stat after the command name: state, ppid, pgrp, session, rest. */
  private static String @Nullable [] stat(Path entry) {
    try {
      String stat = Files.readString(entry.resolve("stat"));
      // pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses.
      return stat.substring(stat.lastIndexOf(')') + 2).split(" ", 5);
    } catch (IOException | RuntimeException gone) {
      return null;
    }
  }
}
