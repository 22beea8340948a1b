package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.ChildJvm;
import dev.jeton.redis.testing.RedisServer;
import io.lettuce.core.RedisCommandExecutionException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A semaphore's state damaged in Redis (a key of the wrong type, a field or record that does not
 * read, a piece missing), then its holder killed, as a real process: the damage is found, said in
 * Redis's log, and repaired, and the killed holder's permit comes back to the waiter; never a
 * permit lost for good (semaphore.lua, Damage). A damaged limit, which nothing else records, is
 * refused with the way to set it, and setting it repairs it.
 */
class RedisDamageIntegrationTest extends RedisServerPerTest {
  private static final Duration LEASE = Duration.ofMillis(1500);
  private static final Duration PATIENCE = Await.HANG_GUARD; // only against a hang

  /** Damage done to a semaphore's keys by hand, knowing its holder's and its waiter's ids. */
  interface Damage {
    void apply(RedisServer redis, String keys, String holder, String waiter);
  }

  static Stream<Arguments> damages() {
    return Stream.of(
        damage("timers of the wrong type", (r, k, h, w) -> replace(r, k + "timers")),
        damage("timers deleted", (r, k, h, w) -> r.command("DEL", k + "timers")),
        damage("the holder's timer removed", (r, k, h, w) -> r.command("ZREM", k + "timers", h)),
        damage(
            "the holder's timer moved ten years ahead",
            (r, k, h, w) -> r.command("ZADD", k + "timers", "XX", yearsAhead(r, 10), h)),
        damage(
            "the holder's expiry and timer moved ten years ahead",
            (r, k, h, w) -> {
              String record = r.command("HGET", k + "state", "r:" + h);
              r.command(
                  "HSET",
                  k + "state",
                  "r:" + h,
                  record.replaceFirst("^(H\\|\\d+\\|)\\d+", "$1" + yearsAhead(r, 10)));
              r.command("ZADD", k + "timers", "XX", yearsAhead(r, 10), h);
            }),
        damage("queue of the wrong type", (r, k, h, w) -> replace(r, k + "queue")),
        damage("queue deleted", (r, k, h, w) -> r.command("DEL", k + "queue")),
        damage("spare list of the wrong type", (r, k, h, w) -> replace(r, k + "spare")),
        damage("spare list with garbage", (r, k, h, w) -> r.command("RPUSH", k + "spare", "x")),
        damage("counters garbage", (r, k, h, w) -> r.command("HSET", k + "state", "c", "x|1")),
        damage("counters deleted", (r, k, h, w) -> r.command("HDEL", k + "state", "c")),
        damage("layout deleted", (r, k, h, w) -> r.command("HDEL", k + "state", "layout")),
        damage("layout garbage", (r, k, h, w) -> r.command("HSET", k + "state", "layout", "x")),
        damage(
            "the holder's record garbage",
            (r, k, h, w) -> r.command("HSET", k + "state", "r:" + h, "\u001b[2J")),
        damage(
            "the holder's record deleted",
            (r, k, h, w) -> r.command("HDEL", k + "state", "r:" + h)),
        damage(
            "the holder's record with more permits than slots",
            (r, k, h, w) ->
                r.command(
                    "HSET",
                    k + "state",
                    "r:" + h,
                    r.command("HGET", k + "state", "r:" + h).replaceFirst("^H\\|1\\|", "H|2|"))),
        damage(
            "the waiter's record garbage",
            (r, k, h, w) -> r.command("HSET", k + "state", "r:" + w, "Q|x")),
        damage("a field not its own", (r, k, h, w) -> r.command("HSET", k + "state", "f", "v")),
        damage("state of the wrong type", (r, k, h, w) -> replace(r, k + "state")));
  }

  private static Arguments damage(String what, Damage damage) {
    return Arguments.of(what, damage);
  }

  /** Redis's clock {@code years} ahead, in ms. */
  private static String yearsAhead(RedisServer redis, int years) {
    long seconds = Long.parseLong(redis.command("TIME").lines().findFirst().orElseThrow().trim());
    return Long.toString((seconds + years * 366L * 86_400) * 1000);
  }

  /** Replaces {@code key} with a string. */
  private static void replace(RedisServer redis, String key) {
    redis.command("DEL", key);
    redis.command("SET", key, "garbage");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("damages")
  void damage_thenAKilledHolder_isRepairedAndItsPermitComesBack(String what, Damage damage)
      throws Exception {
    RedisSemaphore sem = open("damaged");
    ChildJvm holder = holder("damaged");
    String holderId = holder.await("GRANTED").split(" ")[1];
    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 1, "this process to queue");
    String waiterId = RedisSemaphores.waitingIds(sem).iterator().next();

    damage.apply(server, "{jeton:damaged}:", holderId, waiterId);
    holder.signal("KILL");

    Lease lease = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertTrue(lease.releaseAsync().get(PATIENCE.toSeconds(), TimeUnit.SECONDS), what);
    sem.acquire(1, PATIENCE).release();
    Await.until(() -> sem.available() == 1, "every permit back");
    assertEquals(0, sem.queueLength(), what);
    assertEquals(List.of(), sem.status().holders(), what);
    String log = server.log();
    assertTrue(
        log.contains("jeton: semaphore {jeton:damaged}:state was damaged ("),
        "said in Redis's log: " + log);
  }

  /**
   * A live holder whose record was damaged learns its lease is lost, and why. One damaged record is
   * a tombstone whose outcome holds the reply's separators: a reply is one string, {@code
   * id|status|...} items space-separated, so an outcome read as it stands would split into items
   * that no request made.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"garbage", "D|two words|and bars"})
  void aLiveHoldersRecordDamaged_itLearnsItsLeaseIsLost(String record) throws Exception {
    RedisSemaphore sem = open("live");
    Lease held = sem.acquire(1);
    server.command("HSET", "{jeton:live}:state", "r:" + held.id(), record);
    Lease.LeaseLoss loss =
        held.lost().toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertTrue(loss.reason().contains("damaged"), loss.reason());
    sem.acquire(1, PATIENCE).release();
  }

  /**
   * A record larger than any client writes (a live holder's, 40 MB) is damage: status never sends
   * it (it sent it whole, and ran the command's 64 MB JVM out of memory), the record ends as
   * damaged, Redis's log says why, and its holder learns its lease is lost.
   */
  @Test
  void aHugeRecord_isNeverSentAndEndsAsDamaged() throws Exception {
    RedisSemaphore sem = open("huge");
    Lease held = sem.acquire(1);
    String state = "{jeton:huge}:state";
    String field = "r:" + held.id();
    server.command(
        "HSET", state, field, server.command("HGET", state, field) + "x".repeat(40 << 20));

    assertEquals(List.of(), sem.status().holders());
    Lease.LeaseLoss loss =
        held.lost().toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertTrue(loss.reason().contains("damaged"), loss.reason());
    assertTrue(server.log().contains("(a record is too large)"), "said in Redis's log");
    sem.acquire(1, PATIENCE).release();
  }

  /**
   * The limit is the one thing the records cannot tell: damaged or missing, every call says so and
   * how to set it; a handle still opens, and setting the limit repairs the state.
   */
  @Test
  void aDamagedLimit_isRefusedWithTheFixAndSettingItRepairsIt() throws Exception {
    for (String[] damage :
        new String[][] {
          {"HSET", "{jeton:limited}:state", "limit", "many"},
          {"HDEL", "{jeton:limited}:state", "limit"}
        }) {
      RedisSemaphore sem = open("limited");
      ChildJvm holder = holder("limited");
      holder.await("GRANTED");
      server.command(damage);
      holder.signal("KILL");
      RedisCommandExecutionException refused =
          assertThrows(RedisCommandExecutionException.class, sem::available);
      assertTrue(
          refused.getMessage().contains("has a damaged limit")
              && refused.getMessage().contains("jeton limit --name limited N"),
          refused.getMessage());

      RedisSemaphore opened =
          RedisSemaphore.builder("limited").uri(server.uri()).options(options()).open();
      toClose.add(opened);
      opened.setLimit(1);
      sem.acquire(1, PATIENCE).release(); // once the killed holder's lease has expired
      assertEquals(1, sem.available());
    }
  }

  private static RedisSemaphoreOptions options() {
    return RedisSemaphoreOptions.defaults()
        .withLeaseTime(LEASE)
        .withPollInterval(Duration.ofMillis(100));
  }

  private RedisSemaphore open(String name) {
    RedisSemaphore semaphore =
        RedisSemaphore.builder(name).uri(server.uri()).limitIfNew(1).options(options()).open();
    toClose.add(semaphore);
    return semaphore;
  }

  /** A process holding the one permit, with a short lease, to be killed. */
  private ChildJvm holder(String name) {
    ChildJvm child =
        ChildJvm.start(
            LeaseHolder.class, server.uri(), name, "1", Long.toString(LEASE.toMillis()), "1");
    toClose.add(child);
    return child;
  }
}
