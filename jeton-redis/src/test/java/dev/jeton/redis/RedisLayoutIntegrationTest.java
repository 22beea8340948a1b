package dev.jeton.redis;

import static dev.jeton.redis.RedisSemaphores.rawCall;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.RandomizedHistoryChecker.MonitorLine;
import dev.jeton.redis.RedisRandomizedIntegrationTest.RedisMonitor;
import dev.jeton.redis.testing.Await;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The state's layout in Redis (semaphore.lua, layout 2) against a real redis-server: what a call
 * does must not grow with the holders, sweeps are bounded, and a state left by the previous layout
 * is taken over when idle and refused when in use.
 */
class RedisLayoutIntegrationTest extends RedisServerPerTest {
  /** Long enough that no renewal or expiry lands inside a measurement. */
  private static final RedisSemaphoreOptions STILL =
      RedisSemaphoreOptions.defaults()
          .withLeaseTime(Duration.ofMinutes(10))
          .withRenewInterval(Duration.ofMinutes(5));

  private RedisSemaphore open(String name, int limit, RedisSemaphoreOptions options) {
    RedisSemaphore semaphore =
        RedisSemaphore.builder(name).uri(server.uri()).limitIfNew(limit).options(options).open();
    toClose.add(semaphore);
    return semaphore;
  }

  /** The commands the function ran on the semaphore's keys for one acquire and its release. */
  private List<MonitorLine> oneAcquireAndRelease(RedisSemaphore sem, String keyTag)
      throws Exception {
    RedisMonitor monitor = RedisMonitor.start(server.port(), keyTag);
    try {
      // releaseAsync: completes once Redis has run the release, so it is in the log
      assertTrue(sem.acquire(1).releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
      return monitor.finish(server).stream().filter(MonitorLine::lua).toList();
    } finally {
      monitor.close();
    }
  }

  @Test
  void aCallDoesTheSameWorkWith3000HoldersAsWith10() throws Exception {
    int holders = 3000;
    RedisSemaphore sem = open("many", holders + 2, STILL);
    RedisSemaphore background = open("many", holders + 2, STILL);
    List<Lease> held = new ArrayList<>(RedisSemaphores.takeLeases(background, 10));
    List<MonitorLine> few = oneAcquireAndRelease(sem, "{jeton:many}");
    held.addAll(RedisSemaphores.takeLeases(background, holders - 10));
    assertEquals(2, sem.available());
    List<MonitorLine> many = oneAcquireAndRelease(sem, "{jeton:many}");

    assertEquals(commands(few), commands(many), "the same commands with 10 and 3,000 holders");
    for (MonitorLine line : many) {
      for (String arg : line.args()) {
        assertTrue(arg.length() < 2000, "an argument of " + arg.length() + " chars: " + line);
      }
    }
    for (Lease lease : held) {
      lease.releaseAsync();
    }
    Await.until(() -> sem.available() == holders + 2, "every lease to be released");
    String state = server.command("HLEN", "{jeton:many}:state");
    assertTrue(Integer.parseInt(state) >= holders, "tombstones are kept: " + state);
  }

  private static List<String> commands(List<MonitorLine> lines) {
    return lines.stream().map(MonitorLine::command).toList();
  }

  @Test
  void expiredLeases_areSweptAFewDozenACall_andOneTouchedFirstSaysExpired() throws Exception {
    int stale = 200;
    RedisSemaphore sem = open("sweep", stale + 1, STILL);
    // Leases nobody renews: granted by raw calls, which no handle keeps (sent all at once, so
    // that none expires before the last is granted).
    List<CompletableFuture<List<Object>>> asked = new ArrayList<>();
    for (int i = 0; i < stale; i++) {
      asked.add(rawAcquire(sem, "stale-" + i, "1000"));
    }
    for (CompletableFuture<List<Object>> reply : asked) {
      assertEquals("granted", ((List<?>) reply.get().get(0)).get(1));
    }
    // Expires a little later than the others: the first sweeps take those first.
    List<?> touched = (List<?>) rawAcquire(sem, "touched", "1200").get().get(0);
    assertEquals("granted", touched.get(1));
    long expiry = Long.parseLong((String) touched.get(2));
    assertEquals(0, sem.available());
    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(stale + 1);
    Await.until(() -> System.currentTimeMillis() > expiry + 5, "every lease to expire");

    RedisMonitor monitor = RedisMonitor.start(server.port(), "{jeton:sweep}");
    List<MonitorLine> log;
    try {
      List<Object> items = rawCall(sem, "release", "touched").toCompletableFuture().get();
      assertEquals(List.of("touched", "expired"), items.get(0), "a release after the expiry");
      Lease lease = waiter.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
      lease.release();
      log = monitor.finish(server);
    } finally {
      monitor.close();
    }
    int calls = 0;
    for (MonitorLine line : log) {
      if (line.lua() && line.command().equals("HSET")) {
        calls++;
        long ended = line.args().stream().filter("D|expired"::equals).count();
        assertTrue(ended <= 65, "one call ended " + ended + " leases: " + line.command());
      }
    }
    assertTrue(calls >= 4, "the 201 expired leases took several calls: " + calls);
    assertEquals(stale + 1, sem.available());
  }

  private static CompletableFuture<List<Object>> rawAcquire(
      RedisSemaphore sem, String id, String leaseMs) {
    return rawCall(sem, "acquire", "queue", id, "1", leaseMs, "h\t1\ttest").toCompletableFuture();
  }

  @Test
  void aHandleRenewsManyLeasesInCallsOfAtMost200() throws Exception {
    RedisSemaphoreOptions quick =
        RedisSemaphoreOptions.defaults()
            .withLeaseTime(Duration.ofMillis(3000))
            .withRenewInterval(Duration.ofMillis(1000));
    RedisSemaphore sem = open("renewals", 450, quick);
    List<Lease> held = RedisSemaphores.takeLeases(sem, 450);
    RedisMonitor monitor = RedisMonitor.start(server.port(), "{jeton:renewals}");
    List<MonitorLine> log;
    try {
      // Two renewal rounds: every lease's expiry moved past the one it was granted with.
      Instant granted = held.get(held.size() - 1).expiresAt();
      Await.until(
          () -> held.stream().allMatch(l -> l.expiresAt().isAfter(granted.plusMillis(1500))),
          "two renewals of every lease");
      log = monitor.finish(server);
    } finally {
      monitor.close();
    }
    List<Integer> sizes = new ArrayList<>();
    for (MonitorLine line : log) {
      if (!line.lua() && line.command().equals("FCALL") && line.arg(7).equals("renew")) {
        // FCALL, name, 4, the keys, renew, limit, channel, replay ms, waiter ms, lease ms, ids
        sizes.add(line.args().size() - 13);
      }
    }
    assertTrue(sizes.size() >= 3, "renewal calls: " + sizes);
    assertTrue(sizes.stream().allMatch(n -> n >= 1 && n <= 200), "leases per call: " + sizes);
    assertTrue(sizes.contains(200) && sizes.contains(50), "450 leases in 200 + 200 + 50: " + sizes);
    held.forEach(lease -> assertTrue(lease.isHeld()));
  }

  // ----------------------------------------------------------------------- the layout before

  /** Loads the previous layout's function (as it was at 7bb109c) as {@code jeton_layout1}. */
  private void loadLayout1() throws IOException {
    String code;
    try (InputStream in =
        RedisLayoutIntegrationTest.class.getResourceAsStream("layout1-semaphore.lua")) {
      code = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    server.command(
        "FUNCTION",
        "LOAD",
        "#!lua name=jeton_layout1\n"
            + code
            + "\nredis.register_function('jeton_layout1', semaphore)\n");
  }

  /** An acquire through the previous layout's function, as a Jeton of then would send it. */
  private String layout1Acquire(String name, String id) {
    String base = "{jeton:" + name + "}:";
    return server.command(
        "FCALL",
        "jeton_layout1",
        "3",
        base + "state",
        base + "queue",
        base + "done",
        "acquire",
        "2",
        base + "wake:old",
        "60000",
        "try",
        "10000",
        id,
        "1",
        "30000",
        "old");
  }

  @Test
  void idleStateOfTheLayoutBefore_isTakenOverKeepingItsLimitAndTokens() throws Exception {
    loadLayout1();
    assertTrue(layout1Acquire("old", "old-1").contains("granted"));
    String oldToken = server.command("HGET", "{jeton:old}:state", "token");
    server.command(
        "FCALL",
        "jeton_layout1",
        "3",
        "{jeton:old}:state",
        "{jeton:old}:queue",
        "{jeton:old}:done",
        "release",
        "2",
        "{jeton:old}:wake:old",
        "60000",
        "old-1");

    RedisSemaphore sem = open("old", 7, STILL);
    Lease lease = sem.acquire(2);
    assertEquals(2, sem.limit(), "the limit it had, not the one asked for");
    assertTrue(lease.fencingTokens().get(0).token() > Long.parseLong(oldToken), "tokens grow");
    assertEquals("0", server.command("EXISTS", "{jeton:old}:done"), "the old index is gone");
    lease.release();

    // The function of then fails on this layout before writing anything.
    String refused = layout1Acquire("old", "old-2");
    assertTrue(refused.contains("compare number with nil"), refused);
    assertEquals(2, sem.available());
  }

  @Test
  void stateOfTheLayoutBeforeInUse_isRefusedWithAClearError() throws Exception {
    loadLayout1();
    assertTrue(layout1Acquire("busy", "old-1").contains("granted"));
    RuntimeException e = assertThrows(RuntimeException.class, () -> sem("busy"));
    StringBuilder said = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      said.append(t).append('\n');
    }
    assertTrue(said.toString().contains("in use by an older Jeton"), said.toString());
    assertFalse(layout1Acquire("busy", "old-1").contains("ERR"), "the old users go on");
  }

  private RedisSemaphore sem(String name) {
    return open(name, 2, STILL);
  }
}
