package dev.jeton.redis;

import dev.jeton.redis.testing.Await;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A client process for the fault tests: takes {@code permits} of a Redis semaphore and holds them,
 * saying on stdout what happens: {@code GRANTED <id> <tokens>}, {@code WRITE <tokens>} every 50 ms
 * (a holder that does not check its lease before writing, to test fencing), {@code LOST <reason>};
 * {@code release} on stdin releases and exits.
 *
 * <p>Arguments: uri name limit leaseMillis permits [waiterExpiryMillis]
 */
public final class LeaseHolder {
  private LeaseHolder() {}

  public static void main(String[] args) throws Exception {
    String uri = args[0];
    String name = args[1];
    int limit = Integer.parseInt(args[2]);
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    int permits = Integer.parseInt(args[4]);
    RedisSemaphoreOptions options =
        RedisSemaphoreOptions.defaults()
            .withLeaseTime(lease)
            .withPollInterval(Duration.ofMillis(100));
    if (args.length > 5) {
      options = options.withWaiterExpiry(Duration.ofMillis(Long.parseLong(args[5])));
    }
    RedisSemaphore semaphore =
        RedisSemaphore.builder(name).uri(uri).limitIfNew(limit).options(options).open();
    Lease held = semaphore.acquire(permits);
    String tokens = FencingToken.format(held.fencingTokens());
    System.out.println("GRANTED " + held.id() + " " + tokens);
    held.lost().thenAccept(loss -> System.out.println("LOST " + loss.reason()));
    ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor();
    writer.scheduleAtFixedRate(
        () -> System.out.println("WRITE " + tokens), 0, 50, TimeUnit.MILLISECONDS);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("release")) {
        break;
      }
    }
    writer.shutdownNow();
    boolean released = held.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    System.out.println("RELEASED " + released);
    semaphore.close();
    System.exit(0);
  }
}
