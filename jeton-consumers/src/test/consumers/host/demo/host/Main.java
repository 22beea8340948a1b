package demo.host;

import dev.jeton.Permit;
import dev.jeton.host.HostSemaphore;
import java.nio.file.Path;

public final class Main {
  /** {@code args[0]}: the semaphore directory. */
  public static void main(String[] args) throws Exception {
    try (HostSemaphore semaphore =
        HostSemaphore.builder("consumer").directory(Path.of(args[0])).limitIfNew(1).open()) {
      try (Permit permit = semaphore.acquire(1)) {
        System.out.println("ok " + permit + " of " + semaphore);
      }
    }
  }
}
