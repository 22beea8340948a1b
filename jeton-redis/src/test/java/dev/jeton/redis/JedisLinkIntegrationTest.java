package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisServer;
import io.lettuce.core.RedisConnectionException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Handles that reach Redis through Jedis ({@link RedisSemaphore.Builder#jedis()}), against a real
 * redis-server: what differs from Lettuce's (the contract and fault suites run on both).
 */
class JedisLinkIntegrationTest {
  private static RedisServer server;
  private final List<RedisSemaphore> toClose = new ArrayList<>();

  @BeforeAll
  static void startRedis() {
    server = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    server.close();
  }

  @AfterEach
  void closeHandles() {
    toClose.forEach(RedisSemaphore::close);
  }

  private RedisSemaphore open(String name, String uri) {
    RedisSemaphore semaphore = RedisSemaphore.builder(name).uri(uri).jedis().limitIfNew(1).open();
    toClose.add(semaphore);
    return semaphore;
  }

  @Test
  void close_withNoLeaseHeld_returnsWhenTheLinksThreadsHaveEnded() throws Exception {
    for (int round = 0; round < 20; round++) {
      Set<Long> before = new HashSet<>();
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        before.add(t.getId());
      }
      RedisSemaphore sem =
          RedisSemaphore.builder("threads").uri(server.uri()).jedis().limitIfNew(1).open();
      sem.acquire(1).release();
      List<Thread> started = new ArrayList<>();
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (!before.contains(t.getId())
            && t.getName().startsWith("jeton-redis-")
            && !t.getName().equals("jeton-redis-timer")) {
          started.add(t);
        }
      }
      assertEquals(2, started.size(), "the command and wake-up threads: " + started);
      sem.close();
      for (Thread t : started) {
        assertFalse(
            t.isAlive(),
            "round "
                + round
                + ": "
                + t.getName()
                + " runs after close(): "
                + java.util.Arrays.toString(t.getStackTrace()));
      }
    }
  }

  @Test
  void functionFlushed_isLoadedAgain() throws Exception {
    RedisSemaphore sem = open("flushed", server.uri());
    assertTrue(sem.acquire(1).releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    assertEquals("OK", server.command("FUNCTION", "FLUSH"));
    Lease lease = sem.acquire(1, Await.HANG_GUARD);
    assertEquals(0, sem.available());
    assertTrue(lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    assertEquals(1, sem.available());
  }

  @Test
  void aServerThatIsNotThere_failsToOpen_sayingWhy() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    RedisConnectionException e =
        assertThrows(
            RedisConnectionException.class, () -> open("nowhere", "redis://127.0.0.1:" + port));
    assertEquals("Unable to connect to 127.0.0.1:" + port, e.getMessage());
    assertInstanceOf(java.net.ConnectException.class, e.getCause(), "the socket's own reason");
  }

  @Test
  void uriJedisDoesNotTake_isRefusedAtOnce_namingTheWayOut() {
    for (String uri :
        List.of(
            "rediss://127.0.0.1:" + server.port(),
            "redis-sentinel://127.0.0.1:" + server.port() + "#primary",
            "redis://127.0.0.1:" + server.port() + "?timeout=5s")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> open("refused", uri));
      assertTrue(e.getMessage().contains("default client"), uri + ": " + e.getMessage());
    }
    IllegalArgumentException bad =
        assertThrows(
            IllegalArgumentException.class,
            () -> open("refused", "redis://127.0.0.1:" + server.port() + "/nine"));
    assertTrue(bad.getMessage().startsWith("not a Redis URI"), bad.getMessage());
  }

  @Test
  void theDatabaseOfTheUri_holdsTheState() throws Exception {
    RedisSemaphore sem = open("in-db-3", server.uri() + "/3");
    assertTrue(sem.acquire(1).releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    String key = "{jeton:in-db-3}:state";
    assertEquals("0", server.command("EXISTS", key).trim(), "not in database 0");
    assertEquals(
        "1",
        server
            .command(
                "EVAL", "redis.call('SELECT', 3) return redis.call('EXISTS', KEYS[1])", "1", key)
            .trim());
  }

  @Test
  void aUserAndPasswordInTheUri_areUsed_andAWrongPasswordRefused() throws Exception {
    server.command("ACL", "SETUSER", "jeton-test", "on", ">sekret", "~*", "&*", "+@all");
    try {
      RedisConnectionException e =
          assertThrows(
              RedisConnectionException.class,
              () -> open("guarded", "redis://jeton-test:wrong@127.0.0.1:" + server.port()));
      assertTrue(String.valueOf(e.getCause()).contains("WRONGPASS"), String.valueOf(e.getCause()));
      RedisSemaphore sem = open("guarded", "redis://jeton-test:sekret@127.0.0.1:" + server.port());
      sem.acquire(1).release();
      assertEquals(1, sem.available());
      assertTrue(server.command("CLIENT", "LIST").contains("user=jeton-test"));
    } finally {
      server.command("ACL", "DELUSER", "jeton-test");
    }
  }
}
