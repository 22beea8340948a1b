package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.jeton.redis.testing.RedisServer;
import io.lettuce.core.RedisURI;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client Jeton opens for a Redis URI (decision 60): connections whose blocking interface is
 * made when first asked for, and works as Lettuce's does.
 */
class LeanRedisClientIntegrationTest {
  private RedisServer server;
  private LeanRedisClient client;

  @BeforeEach
  void start() {
    server = RedisServer.start();
    client = new LeanRedisClient(null, RedisURI.create(server.uri()));
  }

  @AfterEach
  void stop() {
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    server.close();
  }

  @Test
  void connection_makesItsBlockingInterfaceOnFirstUse() throws Exception {
    StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8);
    assertNull(eagerSync(connection), "no blocking interface made with the connection");
    assertEquals("PONG", connection.sync().ping());
    assertSame(connection.sync(), connection.sync(), "made once");
    assertEquals("OK", connection.sync().set("k", "v"));
    assertEquals("v", connection.async().get("k").get());
  }

  @Test
  void pubSubConnection_makesItsBlockingInterfaceOnFirstUse() throws Exception {
    StatefulRedisPubSubConnection<String, String> connection =
        client.connectPubSub(StringCodec.UTF8);
    assertNull(eagerSync(connection), "no blocking interface made with the connection");
    connection.sync().subscribe("channel");
    assertSame(connection.sync(), connection.sync(), "made once");
    assertEquals(
        "1",
        server.command("PUBSUB", "NUMSUB", "channel").lines().skip(1).findFirst().orElseThrow());
  }

  /** The field Lettuce's constructor fills with the blocking interface. */
  private static Object eagerSync(Object connection) throws ReflectiveOperationException {
    var field = StatefulRedisConnectionImpl.class.getDeclaredField("sync");
    field.setAccessible(true);
    return field.get(connection);
  }
}
