package dev.jeton.redis;

/** The contract every Semaphore passes, with handles that reach Redis through Jedis. */
class RedisJedisContractIntegrationTest extends RedisSemaphoreContractIntegrationTest {
  @Override
  boolean jedis() {
    return true;
  }
}
