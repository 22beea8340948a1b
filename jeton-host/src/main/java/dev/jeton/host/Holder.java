package dev.jeton.host;

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
 */
public record Holder(long pid, String host, String user, String command, Instant since, int permits) {

  /** A record describing this process, holding or asking for {@code permits} from now on. */
  static Holder ofThisProcess(int permits) {
    return new Holder(
        ThisProcess.pid(),
        ThisProcess.hostName(),
        System.getProperty("user.name", "?"),
        ThisProcess.command(),
        Instant.now(),
        permits);
  }

  /** The same record with another command line (the command {@code jeton run} runs, say). */
  public Holder withCommand(String newCommand) {
    return new Holder(pid, host, user, newCommand, since, permits);
  }

  String serialize() {
    Properties p = new Properties();
    p.setProperty("pid", Long.toString(pid));
    p.setProperty("host", host);
    p.setProperty("user", user);
    p.setProperty("command", command);
    p.setProperty("since", since.toString());
    p.setProperty("permits", Integer.toString(permits));
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
              Integer.parseInt(p.getProperty("permits", ""))));
    } catch (IOException | RuntimeException notARecord) {
      return Optional.empty();
    }
  }
}
