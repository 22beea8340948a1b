package dev.jeton.redis.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fixtures themselves, against real {@code redis-server} processes. */
class RedisServerTest {
  @TempDir Path temp;

  @Test
  void start_answersCommandsOnItsPort() {
    try (RedisServer redis = RedisServer.start()) {
      assertEquals("redis://127.0.0.1:" + redis.port(), redis.uri());
      assertEquals("PONG", redis.command("PING"));
      assertEquals("OK", redis.command("SET", "key", "välue"));
      assertEquals("välue", redis.command("GET", "key"));
      assertEquals("(nil)", redis.command("GET", "missing"));
      assertEquals("1", redis.command("DBSIZE"));
      assertTrue(redis.command("INFO", "server").contains("process_id:" + redis.pid()));
      assertTrue(redis.command("NO-SUCH-COMMAND").startsWith("ERR "));
      assertEquals(List.of("save", ""), redis.call("CONFIG", "GET", "save"), "no snapshots");
    }
  }

  @Test
  void command_flattensArraysOneElementPerLine() {
    try (RedisServer redis = RedisServer.start()) {
      redis.command("RPUSH", "list", "a", "b", "c");
      assertEquals("a\nb\nc", redis.command("LRANGE", "list", "0", "-1"));
      assertEquals("", redis.command("LRANGE", "nothing", "0", "-1"));
      assertEquals(
          "1\nx\n(nil)\ny\nz", redis.command("EVAL", "return {1, {'x', false, 'y'}, 'z'}", "0"));
      assertEquals(
          List.of(1L, List.of("x"), "z"), redis.call("EVAL", "return {1, {'x'}, 'z'}", "0"));
    }
  }

  @Test
  void restart_losesTheDataAndKeepsThePort() {
    try (RedisServer redis = RedisServer.start()) {
      redis.command("SET", "key", "value");
      int port = redis.port();
      long pid = redis.pid();

      redis.restart();

      assertEquals(port, redis.port());
      assertNotEquals(pid, redis.pid());
      assertEquals("(nil)", redis.command("GET", "key"));
      assertEquals("0", redis.command("DBSIZE"));
    }
  }

  @Test
  void restart_waitsForThePortToBeFreed() throws Exception {
    try (RedisServer redis = RedisServer.start()) {
      redis.kill();
      ServerSocket squatter =
          new ServerSocket(redis.port(), 1, InetAddress.getByAddress(new byte[] {127, 0, 0, 1}));
      Thread release =
          new Thread(
              () -> {
                try {
                  Thread.sleep(500);
                  squatter.close();
                } catch (InterruptedException | IOException e) {
                  throw new IllegalStateException(e);
                }
              });
      release.start();

      redis.restart();

      release.join();
      String log = Files.readString(redis.directory().resolve("redis.log"));
      assertTrue(log.contains("Address already in use"), "the restart found the port taken");
      assertEquals("PONG", redis.command("PING"));
    }
  }

  @Test
  void pause_leavesCommandsUnansweredUntilResume() {
    try (RedisServer redis = RedisServer.start()) {
      redis.pause();
      UncheckedIOException e =
          assertThrows(
              UncheckedIOException.class, () -> redis.command(Duration.ofMillis(300), "PING"));
      assertInstanceOf(SocketTimeoutException.class, e.getCause());

      redis.resume();
      assertEquals("PONG", redis.command(Duration.ofMillis(300), "PING"));
    }
  }

  @Test
  void kill_makesCommandsFailUntilRestart() {
    try (RedisServer redis = RedisServer.start()) {
      redis.kill();
      assertFalse(ProcessHandle.of(redis.pid()).map(ProcessHandle::isAlive).orElse(false));
      assertThrows(UncheckedIOException.class, () -> redis.command(Duration.ofSeconds(1), "PING"));

      redis.restart();
      assertEquals("PONG", redis.command("PING"));
    }
  }

  @Test
  void close_endsTheProcessAndDeletesTheDirectory() {
    RedisServer redis = RedisServer.start();
    long pid = redis.pid();
    Path directory = redis.directory();
    assertTrue(Files.exists(directory.resolve("redis.log")));

    redis.close();
    redis.close();

    assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
    assertFalse(Files.exists(directory));
    assertThrows(IllegalStateException.class, redis::restart);
  }

  @Test
  void cluster_formsAndCoversEverySlot() {
    try (RedisClusterServers cluster = RedisClusterServers.start(3)) {
      List<RedisServer> nodes = cluster.nodes();
      assertEquals(3, nodes.size());
      assertEquals(nodes.get(0).uri(), cluster.uri());
      assertEquals(nodes.stream().map(RedisServer::uri).toList(), cluster.uris());
      for (RedisServer node : nodes) {
        String info = node.command("CLUSTER", "INFO");
        assertTrue(info.contains("cluster_state:ok"), info);
        assertTrue(info.contains("cluster_known_nodes:3"), info);
      }

      // Every slot has exactly one owner, and every node owns some.
      int covered = 0;
      Set<Long> owners = new TreeSet<>();
      for (Object range : (List<?>) nodes.get(1).call("CLUSTER", "SLOTS")) {
        List<?> fields = (List<?>) range;
        covered += (int) ((Long) fields.get(1) - (Long) fields.get(0) + 1);
        owners.add((Long) ((List<?>) fields.get(2)).get(1));
      }
      assertEquals(16384, covered);
      assertEquals(
          nodes.stream().map(node -> (long) node.port()).collect(Collectors.toSet()), owners);

      // A key is written on its owner only; the others redirect.
      List<String> replies = nodes.stream().map(node -> node.command("SET", "key", "v")).toList();
      assertEquals(1, replies.stream().filter("OK"::equals).count(), replies.toString());
      assertEquals(
          2, replies.stream().filter(r -> r.startsWith("MOVED ")).count(), replies.toString());
    }
  }

  @Test
  void binary_isTheOneNamedByTheVariable() throws IOException {
    Path fake = Files.createFile(temp.resolve("my-redis-server"));
    Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));

    Path found = RedisServer.find(Map.of("JETON_REDIS_SERVER", fake.toString()), List.of());

    assertEquals(fake.toAbsolutePath(), found);
  }

  @Test
  void binary_failsWhenTheVariableNamesNoExecutable() {
    String bogus = temp.resolve("no-such-redis-server").toString();
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> RedisServer.find(Map.of("JETON_REDIS_SERVER", bogus), List.of()));
    assertTrue(e.getMessage().contains("JETON_REDIS_SERVER is set to " + bogus), e.getMessage());
  }

  @Test
  void binary_searchesPathThenTheUsualPlaces() throws IOException {
    Path empty = Files.createDirectory(temp.resolve("empty"));
    Path usual = Files.createDirectory(temp.resolve("usual"));
    Path fake = Files.createFile(usual.resolve("redis-server"));
    Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));

    assertEquals(
        fake, RedisServer.find(Map.of("PATH", empty + File.pathSeparator + usual), List.of()));
    assertEquals(fake, RedisServer.find(Map.of("PATH", empty.toString()), List.of(usual)));
  }

  @Test
  void binary_explainsHowToInstallRedisWhenThereIsNone() {
    Path empty = temp.resolve("empty");
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> RedisServer.find(Map.of("PATH", empty.toString()), List.of(empty)));
    assertEquals(
        "redis-server was not found on PATH. The Redis tests start a real server: install one"
            + " (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) or"
            + " set JETON_REDIS_SERVER to its path.",
        e.getMessage());
  }
}
