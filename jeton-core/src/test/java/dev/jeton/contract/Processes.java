package dev.jeton.contract;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Child processes for tests that need real processes: JVMs of the test's class path, and pids. */
public final class Processes {
  private Processes() {}

  /** Starts {@code main} with {@code args} in a new JVM with this JVM's class path. */
  public static Process java(Class<?> main, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(main.getName());
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /**
   * Whether process {@code pid} runs. A zombie (exited, not yet reaped; for ever in a container
   * whose first process reaps no orphans) does not.
   */
  public static boolean runs(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
    } catch (IOException gone) {
      return false;
    }
  }
}
