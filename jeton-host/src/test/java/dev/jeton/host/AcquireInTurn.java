package dev.jeton.host;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A child process for the FIFO test: acquires, appends its index to a log, releases, exits. */
public final class AcquireInTurn {
  private AcquireInTurn() {}

  public static void main(String[] args) throws Exception {
    HostSemaphore semaphore = HostSemaphore.builder(args[1]).directory(Path.of(args[0])).open();
    try (dev.jeton.Permit permit = semaphore.acquire(1)) {
      Files.writeString(
          Path.of(args[3]),
          args[2] + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
  }
}
