package dev.jeton.host;

import dev.jeton.internal.Sessions;
import dev.jeton.internal.ThisProcess;
import java.io.IOException;
import java.io.StringReader;
import java.time.Instant;
import java.util.Optional;
import java.util.Properties;

/**
 * Who holds or waits for permits of a {@link HostSemaphore}: the record each holder writes into the
 * files it locks, so that status can show it. A record is only believed while its file is locked;
 * the record of a process that died is never shown.
 *
 * @param pid the process id
 * @param host the host name
 * @param user the user name
 * @param command the process's command line, as far as the JVM can tell
 * @param since when it started holding or waiting
 * @param permits how many permits it holds or asks for
 * @param session the process session whose members hold the permits too, even after {@code pid} has
 *     died ({@link HostSemaphore#holdWhileSessionRuns}), or 0
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
    leader
        .info()
        .startInstant()
        .ifPresent(start -> p.setProperty("sessionStart", start.toString()));
    return store(p);
  }

  /**
   * Whether {@code record} names a session that still runs: the permits it was written for are held
   * by that session's processes, whoever holds (or no longer holds) the file's lock.
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

  /**
   * The record in the format {@link Properties#load(java.io.Reader)} reads, written here rather
   * than by {@link Properties#store}: that one begins with a date comment, and formatting a date
   * loads the time-zone and locale data, which cost the command's start-up several milliseconds.
   */
  static String store(Properties p) {
    StringBuilder out = new StringBuilder();
    for (String key : p.stringPropertyNames()) {
      escape(key, true, out);
      out.append('=');
      escape(p.getProperty(key), false, out);
      out.append('\n');
    }
    return out.toString();
  }

  /** Escapes as {@code Properties.store} does for a writer (other characters are kept as is). */
  private static void escape(String text, boolean key, StringBuilder out) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '\\' -> out.append("\\\\");
        case '\t' -> out.append("\\t");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\f' -> out.append("\\f");
        case '=', ':', '#', '!' -> out.append('\\').append(c);
        case ' ' -> out.append(i == 0 || key ? "\\ " : " ");
        default -> {
          if (c < 0x20) {
            String hex = Integer.toHexString(c);
            out.append("\\u").append("0000", hex.length(), 4).append(hex);
          } else {
            out.append(c);
          }
        }
      }
    }
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
