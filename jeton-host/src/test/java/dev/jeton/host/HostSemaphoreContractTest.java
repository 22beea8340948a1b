package dev.jeton.host;

import dev.jeton.Semaphore;
import dev.jeton.contract.SemaphoreContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The machine-wide semaphore passes the contract every Semaphore passes. */
class HostSemaphoreContractTest extends SemaphoreContract {
  @TempDir Path directory;
  private int created;

  @Override
  protected Semaphore newSemaphore(int limit) {
    try {
      return HostSemaphore.builder("contract-" + created++)
          .directory(directory)
          .limit(limit)
          .open();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  protected int rounds(int inProcessRounds) {
    return Math.max(20, inProcessRounds / 100); // every operation here is file I/O
  }
}
