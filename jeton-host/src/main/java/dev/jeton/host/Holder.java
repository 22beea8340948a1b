package dev.jeton.host;

import dev.jeton.internal.Sessions;
import dev.jeton.internal.ThisProcess;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Optional;
import java.util.Properties;

/**
 * Who holds or waits for permits of a {@link HostSemaphore}: the record each holder writes into
 * the files it locks, so that status can show it. A record is only believed while its file is
 * locked; the record of a process that died is never shown.
 *
 * @param pid the process id
 * @param host the host name
 * @param user the user name
 * @param command the process's command line, as far as the JVM can tell
 * @param since when it started holding or waiting
 * @param permits how many permits it holds or asks for
 * @param session the process session whose members hold the permits too, even after {@code
 *     pid} has died ({@link HostSemaphore#holdWhileSessionRuns}), or 0
 */
public record Holder(
    long pid, String host, String user, String command, Instant since, int permits, long session) {

  /** A record describing this process, holding or asking for {@code permits} from now on. */
  static Holder ofThisProcess(int permits) {
    return new Holder(
        ThisProcess.pid(),
        ThisProcess.hostName(),
        System.getProperty("user.name", "?"),
        ThisProcess.command(),
        Instant.now(),
        permits,
        0);
  }

  /** The same record with another command line (the command {@code jeton run} runs, say). */
  public Holder withCommand(String newCommand) {
    return new Holder(pid, host, user, newCommand, since, permits, session);
  }

  /**
   * The same record, held also by the session that {@code leader} leads: its members keep the
   * permits held after this process has died.
   */
  String serializeWithSession(ProcessHandle leader) {
    Properties p = properties();
    p.setProperty("session", Long.toString(leader.pid()));
    leader.info().startInstant().ifPresent(start -> p.setProperty("sessionStart", start.toString()));
    return store(p);
  }

  /**
   * Whether {@code record} names a session that still runs: the permits it was written for are
   * held by that session's processes, whoever holds (or no longer holds) the file's lock.
   */
  static boolean sessionRuns(String record) {
    if (!record.contains("session=")) {
      return false; // the common case, without parsing
    }
    Properties p = new Properties();
    try {
      p.load(new StringReader(record));
      String session = p.getProperty("session");
      if (session == null) {
        return false;
      }
      String start = p.getProperty("sessionStart");
      return Sessions.alive(Long.parseLong(session), start == null ? null : Instant.parse(start));
    } catch (IOException | RuntimeException notARecord) {
      return false;
    }
  }

  String serialize() {
    return store(properties());
  }

  private Properties properties() {
    Properties p = new Properties();
    p.setProperty("pid", Long.toString(pid));
    p.setProperty("host", host);
    p.setProperty("user", user);
    p.setProperty("command", command);
    p.setProperty("since", since.toString());
    p.setProperty("permits", Integer.toString(permits));
    if (session != 0) {
      p.setProperty("session", Long.toString(session));
    }
    return p;
  }

  private static String store(Properties p) {
    StringWriter out = new StringWriter();
    try {
      p.store(out, null);
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return out.toString();
  }

  /** Parses a record; empty if the text is not one (a file being written, or foreign). */
  static Optional<Holder> parse(String text) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(text));
      return Optional.of(
          new Holder(
              Long.parseLong(p.getProperty("pid", "")),
              p.getProperty("host", "?"),
              p.getProperty("user", "?"),
              p.getProperty("command", "?"),
              Instant.parse(p.getProperty("since", "")),
              Integer.parseInt(p.getProperty("permits", "")),
              Long.parseLong(p.getProperty("session", "0"))));
    } catch (IOException | RuntimeException notARecord) {
      return Optional.empty();
    }
  }
}
