package dev.jeton.redis;

import dev.jeton.redis.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redis semaphore passes the contract every Semaphore passes, against a real redis-server. */
class RedisSemaphoreContractIntegrationTest extends RedisContractTestBase {
  private static RedisServer server;

  @BeforeAll
  static void startRedis() {
    server = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    server.close();
  }

  @Override
  String uri() {
    return server.uri();
  }
}
