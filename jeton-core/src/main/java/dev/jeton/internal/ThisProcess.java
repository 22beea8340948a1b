package dev.jeton.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Who this process is, as shown to other processes in holder and waiter records. Not API: exported
 * only to Jeton's own modules.
 */
public final class ThisProcess {
  private static final String HOST = findHostName();
  private static final String COMMAND = findCommand();

  private ThisProcess() {}

  /** The machine's host name: the kernel's, else $HOSTNAME, else the resolver's. */
  public static String hostName() {
    return HOST;
  }

  /** This process's command line, or its executable if the OS does not tell the arguments. */
  public static String command() {
    return COMMAND;
  }

  /** This process's id. */
  public static long pid() {
    return ProcessHandle.current().pid();
  }

  private static String findCommand() {
    ProcessHandle.Info info = ProcessHandle.current().info();
    return info.commandLine().orElseGet(() -> info.command().orElse("java"));
  }

  private static String findHostName() {
    try {
      String kernel = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
      if (!kernel.isEmpty()) {
        return kernel;
      }
    } catch (IOException | RuntimeException notLinux) {
      // fall through
    }
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isBlank()) {
      return env;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }
}
