package dev.jeton.redis;

/** Where futures complete, with handles that reach Redis through Jedis. */
class RedisJedisCompletionThreadIntegrationTest extends RedisCompletionThreadIntegrationTest {
  @Override
  boolean jedis() {
    return true;
  }
}
