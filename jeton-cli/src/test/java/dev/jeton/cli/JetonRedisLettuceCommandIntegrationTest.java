package dev.jeton.cli;

import dev.jeton.redis.testing.RedisServer;

/**
 * The fleet-wide command's tests with a URI the command reaches through Lettuce (one with an
 * option; also the way for {@code rediss://}, Sentinel and Cluster), where the plain ones go
 * through Jedis (decision 62).
 */
class JetonRedisLettuceCommandIntegrationTest extends JetonRedisCommandIntegrationTest {
  @Override
  String uriOf(RedisServer redis) {
    String uri = super.uriOf(redis) + "?timeout=10s";
    if (RedisBackend.plainServer(uri)) {
      throw new AssertionError(uri + " would go through Jedis");
    }
    return uri;
  }
}
