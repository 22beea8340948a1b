package dev.jeton.redis;

import dev.jeton.RateLimiter;
import dev.jeton.redis.testing.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck, in stress mode (real threads; model checking cannot follow a network round trip):
 * concurrent tries and {@code timeToAdmit} through two handles of one fleet-wide limiter must give
 * the results of some sequential order of the in-process limiter, {@link Spec}. The rate is one a
 * day, so nothing refills during a scenario and exactly the burst can pass; each scenario starts
 * from a full limiter (its state written back as new).
 */
@Param(name = "weight", gen = IntGen.class, conf = "1:2")
public class RedisRateLimiterLincheckIntegrationTest {
  private static final int BURST = 3;
  private static final Duration DAY = Duration.ofDays(1);
  private static final String NAME = "lincheck";
  private static RedisServer server;
  private static io.lettuce.core.RedisClient client;
  private static io.lettuce.core.api.sync.RedisCommands<String, String> raw;
  private static RedisRateLimiter one;
  private static RedisRateLimiter other;

  /** Each scenario starts from a full limiter: its state written back as new (tat 0). */
  public RedisRateLimiterLincheckIntegrationTest() {
    raw.set(
        "{" + RedisSemaphoreOptions.DEFAULT_KEY_PREFIX + ":" + NAME + "}:rate",
        "1 " + RedisRate.of(1, DAY, BURST).createArgument() + " 0 0");
  }

  @BeforeAll
  static void startRedis() {
    server = RedisServer.start();
    client = io.lettuce.core.RedisClient.create(server.uri());
    raw = client.connect().sync();
    one = RedisRateLimiter.builder(NAME).client(client).rate(1, DAY).burst(BURST).open();
    other = RedisRateLimiter.builder(NAME).client(client).open();
  }

  @AfterAll
  static void stopRedis() {
    one.close();
    other.close();
    client.shutdown();
    server.close();
  }

  @Operation
  public boolean tryAcquire(@Param(name = "weight") int weight) {
    return one.tryAcquire(weight);
  }

  @Operation
  public boolean tryAcquireElsewhere(@Param(name = "weight") int weight) {
    return other.tryAcquire(weight);
  }

  @Operation
  public boolean canPass(@Param(name = "weight") int weight) {
    return one.timeToAdmit(weight).isZero();
  }

  /** The sequential specification: the in-process limiter at the same rate and burst. */
  public static final class Spec {
    private final RateLimiter model = RateLimiter.builder().rate(1, DAY).burst(BURST).build();

    public boolean tryAcquire(int weight) {
      return model.tryAcquire(weight);
    }

    public boolean tryAcquireElsewhere(int weight) {
      return model.tryAcquire(weight);
    }

    public boolean canPass(int weight) {
      return model.timeToAdmit(weight).isZero();
    }
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.MINUTES) // only against a hang; see the semaphore's test
  void stress() {
    // Fewer invocations than the semaphore's test (60), for the same reason: each costs about a
    // second of CPU under Lincheck's instrumentation of Lettuce and Netty, and CI has 25 minutes.
    // The exact bound is checked on Redis's answers in RedisRateScheduleIntegrationTest.
    new StressOptions()
        .iterations(2)
        .invocationsPerIteration(10)
        .threads(3)
        .actorsPerThread(3)
        .sequentialSpecification(Spec.class)
        .check(RedisRateLimiterLincheckIntegrationTest.class);
  }
}
