package demo.classpath;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.host.HostSemaphore;
import dev.jeton.redis.Lease;
import dev.jeton.redis.RedisSemaphore;
import java.nio.file.Path;

/** A user's program on the class path, with every module. */
public final class Main {
  /** {@code args[0]}: the host semaphore directory; {@code args[1]}: the Redis URI. */
  public static void main(String[] args) throws Exception {
    try (Permit local = Semaphore.create(1).acquire(1);
        HostSemaphore host =
            HostSemaphore.builder("consumer").directory(Path.of(args[0])).limitIfNew(1).open();
        Permit machine = host.acquire(1);
        RedisSemaphore redis =
            RedisSemaphore.builder("consumer").uri(args[1]).limitIfNew(1).open();
        Lease fleet = redis.acquire(1)) {
      System.out.println("ok " + local + " " + machine + " " + fleet.fencingTokens());
    }
  }
}
