package dev.jeton.redis;

import dev.jeton.Semaphore;
import dev.jeton.contract.SemaphoreContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/** The contract suite against the Redis semaphore, on whatever Redis {@link #uri()} names. */
abstract class RedisContractTestBase extends SemaphoreContract {
  private final List<RedisSemaphore> opened = new ArrayList<>();
  private static int created;

  /** Where the Redis under test is. */
  abstract String uri();

  /** How handles reach it: {@link RedisSemaphore.Builder#jedis()} or not. */
  boolean jedis() {
    return false;
  }

  @AfterEach
  void closeHandles() {
    opened.forEach(RedisSemaphore::close);
  }

  @Override
  protected Semaphore newSemaphore(int limit) {
    RedisSemaphore.Builder builder =
        RedisSemaphore.builder("contract-" + created++).uri(uri()).limit(limit);
    if (jedis()) {
      builder.jedis();
    }
    RedisSemaphore semaphore = builder.open();
    opened.add(semaphore);
    return semaphore;
  }

  @Override
  protected int rounds(int inProcessRounds) {
    return Math.max(20, inProcessRounds / 100); // every operation is a round trip
  }
}
