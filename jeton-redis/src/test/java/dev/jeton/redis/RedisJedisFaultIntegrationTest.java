package dev.jeton.redis;

/**
 * The fault tests with this process's handles on Jedis (the killed holders and waiters, child
 * processes, stay on Lettuce: a fleet may mix them): restarts, lost wake-ups and lost replies.
 */
class RedisJedisFaultIntegrationTest extends RedisFaultIntegrationTest {
  @Override
  boolean jedis() {
    return true;
  }
}
