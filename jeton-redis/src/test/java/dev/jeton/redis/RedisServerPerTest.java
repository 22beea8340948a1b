package dev.jeton.redis;

import dev.jeton.redis.testing.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the suites against a redis-server of their own per test share: the server, started before
 * each test, and what the test opened (handles, child processes), closed after it, before the
 * server.
 */
abstract class RedisServerPerTest {
  RedisServer server;
  final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void startRedis() {
    server = RedisServer.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    server.close();
  }
}
