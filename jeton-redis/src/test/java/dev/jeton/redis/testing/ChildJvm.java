package dev.jeton.redis.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running a test class's main, on this JVM's class path: a separate client process that
 * a test can kill, pause and talk to line by line.
 */
public final class ChildJvm implements AutoCloseable {
  /** Only against a hang: a child is awaited until it prints the line or exits. */
  private static final Duration HANG_GUARD = Duration.ofMinutes(5);

  /** Put after the child's last line, when its output ends (it exited). */
  private static final String END = new String("end of output"); // compared by identity

  private final Process process;
  private final PrintWriter in;
  private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final List<String> seen = new ArrayList<>();

  private ChildJvm(Process process) {
    this.process = process;
    this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                  lines.add(line);
                }
              } catch (IOException ignored) {
                // the child is gone
              }
              lines.add(END);
            },
            "child-output-" + process.pid());
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts {@code mainClass} with {@code args}; its stderr is merged into its stdout. */
  public static ChildJvm start(Class<?> mainClass, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xss1m");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    try {
      return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The next line starting with {@code prefix}, skipping others. Waits for it as long as the child
   * runs (a loaded machine can take long to start a JVM); fails if the child exits first, or after
   * a hang guard of minutes.
   */
  public String await(String prefix) throws InterruptedException {
    long deadline = System.nanoTime() + HANG_GUARD.toNanos();
    while (true) {
      String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (line == null || line == END) {
        if (line == END) {
          lines.add(END); // for the next call
        }
        throw new AssertionError(
            "child "
                + process.pid()
                + " printed no '"
                + prefix
                + "' line"
                + (line == null ? " within " + HANG_GUARD : " before its output ended")
                + "; it printed: "
                + seen
                + (process.isAlive() ? "" : " and exited"));
      }
      seen.add(line);
      if (line.startsWith(prefix)) {
        return line;
      }
    }
  }

  /** Lines printed so far and not yet awaited. */
  public List<String> drain() {
    List<String> rest = new ArrayList<>();
    lines.drainTo(rest);
    if (rest.remove(END)) {
      lines.add(END);
    }
    seen.addAll(rest);
    return rest;
  }

  /** Sends a line to the child's stdin. */
  public void tell(String line) {
    in.println(line);
  }

  /** {@return the child's process id} */
  public long pid() {
    return process.pid();
  }

  /** Sends a signal by name (KILL, STOP, CONT, TERM). */
  public void signal(String name) throws IOException, InterruptedException {
    int status = new ProcessBuilder("kill", "-" + name, Long.toString(pid())).start().waitFor();
    if (status != 0) {
      throw new IOException("kill -" + name + " " + pid() + " exited with " + status);
    }
  }

  /**
   * Stops the child with SIGSTOP and waits until every thread of it is stopped: from then on it
   * reads nothing, and answers nothing, until {@code signal("CONT")}. (The signal alone takes
   * effect a moment later, in which a thread of the child may still act.)
   */
  public void pause() throws IOException, InterruptedException {
    signal("STOP");
    long deadline = System.nanoTime() + HANG_GUARD.toNanos();
    while (!allThreadsStopped()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("child " + pid() + " did not stop within " + HANG_GUARD);
      }
      Thread.sleep(5);
    }
  }

  private boolean allThreadsStopped() throws IOException {
    try (java.util.stream.Stream<Path> tasks =
        java.nio.file.Files.list(Path.of("/proc", Long.toString(pid()), "task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        String stat;
        try {
          stat = java.nio.file.Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII);
        } catch (IOException threadEnded) {
          continue;
        }
        // The state follows the parenthesized name, which may itself hold spaces.
        char state = stat.charAt(stat.lastIndexOf(')') + 2);
        if (state != 'T' && state != 't') {
          return false;
        }
      }
      return true;
    }
  }

  /** Waits for the child to exit (failing after a hang guard of minutes); its exit code. */
  public int waitFor() throws InterruptedException {
    if (!process.waitFor(HANG_GUARD.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("child " + pid() + " did not exit within " + HANG_GUARD);
    }
    return process.exitValue();
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }
}
