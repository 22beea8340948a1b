package dev.jeton.host;

import java.nio.file.Path;

/**
 * A child process for tests: acquires permits of a host semaphore, says so on stdout, and holds
 * them until it is killed. Arguments: directory, name, limit, permits.
 */
public final class HoldForever {
  private HoldForever() {}

  public static void main(String[] args) throws Exception {
    HostSemaphore semaphore =
        HostSemaphore.builder(args[1])
            .directory(Path.of(args[0]))
            .limit(Integer.parseInt(args[2]))
            .open();
    semaphore.acquire(Integer.parseInt(args[3]));
    System.out.println("held");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
