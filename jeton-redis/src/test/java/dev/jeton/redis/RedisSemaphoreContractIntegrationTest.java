package dev.jeton.redis;

import dev.jeton.Semaphore;
import dev.jeton.contract.SemaphoreContract;
import dev.jeton.redis.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** The Redis semaphore passes the contract every Semaphore passes, against a real redis-server. */
class RedisSemaphoreContractIntegrationTest extends SemaphoreContract {
  private static RedisServer server;
  private final List<RedisSemaphore> opened = new ArrayList<>();
  private static int created;

  @BeforeAll
  static void startRedis() throws Exception {
    server = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    server.close();
  }

  @AfterEach
  void closeHandles() {
    opened.forEach(RedisSemaphore::close);
  }

  @Override
  protected Semaphore newSemaphore(int limit) {
    RedisSemaphore semaphore =
        RedisSemaphore.builder("contract-" + created++).uri(server.uri()).limit(limit).open();
    opened.add(semaphore);
    return semaphore;
  }

  @Override
  protected int rounds(int inProcessRounds) {
    return Math.max(20, inProcessRounds / 100); // every operation is a round trip
  }
}
