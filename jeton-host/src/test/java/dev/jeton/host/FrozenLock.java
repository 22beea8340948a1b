package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A child process that holds the exclusive lock on a file and is then stopped ({@code SIGSTOP}): a
 * process frozen while it takes a place, say. Closing it kills the child, freeing the lock.
 */
final class FrozenLock implements AutoCloseable {
  private final Process child;

  private FrozenLock(Process child) {
    this.child = child;
  }

  /** Starts the child, waits until it holds the lock on {@code file}, and stops it. */
  static FrozenLock on(Path file) throws Exception {
    Process child =
        dev.jeton.contract.Processes.java(dev.jeton.contract.HoldLock.class, file.toString());
    FrozenLock frozen = new FrozenLock(child);
    try {
      String line =
          new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))
              .readLine();
      assertEquals("locked", line);
      frozen.signal("STOP");
      return frozen;
    } catch (Exception | Error e) {
      frozen.close();
      throw e;
    }
  }

  /** Sends the child {@code signal} ({@code CONT}, say). */
  void signal(String signal) throws Exception {
    assertEquals(
        0,
        new ProcessBuilder("kill", "-" + signal, Long.toString(child.pid())).start().waitFor(),
        "kill -" + signal);
  }

  /** Kills the child and waits until it is gone, and its lock with it. */
  @Override
  public void close() throws InterruptedException {
    child.destroyForcibly().waitFor();
  }
}
