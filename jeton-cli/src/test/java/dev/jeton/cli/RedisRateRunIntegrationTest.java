package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.RedisRateLimiter;
import dev.jeton.redis.testing.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end: {@code jeton run --redis --rate} in real processes against a real redis-server, the
 * starts of the whole fleet within the bound, {@code --no-wait}, and {@code status}.
 */
@Timeout(180)
class RedisRateRunIntegrationTest {
  private static RedisServer server;
  private static int tests;
  @TempDir Path directory;
  private final List<Process> started = new ArrayList<>();
  private final String prefix = "rr" + tests++;

  @BeforeAll
  static void startRedis() {
    server = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    server.close();
  }

  @AfterEach
  void killLeftovers() {
    for (Process p : started) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  private Process jeton(String... args) throws IOException {
    List<String> all = new ArrayList<>(List.of("--redis", server.uri(), "--key-prefix", prefix));
    all.addAll(List.of(args));
    Path tmp = Files.createDirectories(directory.resolve("tmp"));
    Process p =
        new ProcessBuilder(
                AbstractJetonCommandTest.javaCommand(tmp, List.of(), all.toArray(new String[0])))
            .redirectErrorStream(true)
            .start();
    started.add(p);
    return p;
  }

  private Path log() {
    return directory.resolve("starts.log");
  }

  @Test
  void concurrentRunsAcrossTheFleet_neverStartMoreThanTheBoundAllows() throws Exception {
    int burst = 2;
    long perSecond = 4;
    List<Process> runs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      runs.add(
          jeton(
              "run",
              "--name",
              "deploy",
              "--rate",
              perSecond + "/1s",
              "--burst",
              Integer.toString(burst),
              "--",
              "sh",
              "-c",
              "echo $(date +%s%N) >> " + log()));
    }
    for (Process p : runs) {
      assertEquals(0, AbstractJetonCommandTest.exitOf(p), AbstractJetonCommandTest.outputOf(p));
    }
    List<Long> starts = new ArrayList<>();
    for (String line : Files.readAllLines(log())) {
      starts.add(Long.parseLong(line.trim()));
    }
    assertEquals(8, starts.size());
    // Redis's instants are exact; a start comes after its instant by the time to be told it and
    // to start the command (300 ms allowed on a loaded machine).
    RateRunTest.assertWithinBound(starts, burst, perSecond, 0.3e9);
  }

  @Test
  void noWait_exits75WithoutASlot_andStatusShowsTheRateAndTheNextFreeSlot() throws Exception {
    Process first = jeton("run", "--name", "hourly", "--rate", "1/1h", "true");
    assertEquals(
        0, AbstractJetonCommandTest.exitOf(first), AbstractJetonCommandTest.outputOf(first));
    Process busy = jeton("run", "--name", "hourly", "--rate", "1/1h", "--no-wait", "true");
    assertEquals(
        75, AbstractJetonCommandTest.exitOf(busy), AbstractJetonCommandTest.outputOf(busy));
    Process timed = jeton("run", "--name", "hourly", "--rate", "1/1h", "--timeout", "1s", "true");
    assertEquals(
        75, AbstractJetonCommandTest.exitOf(timed), AbstractJetonCommandTest.outputOf(timed));
    Process status = jeton("status", "--name", "hourly");
    String shown = AbstractJetonCommandTest.outputOf(status);
    assertEquals(0, AbstractJetonCommandTest.exitOf(status), shown);
    assertTrue(shown.contains("hourly: rate 1/1h, burst 1, next free slot in "), shown);
    assertTrue(!shown.contains("next free slot in 0"), shown);
    // what the command left in Redis is a limiter any handle opens
    try (RedisRateLimiter limiter =
        RedisRateLimiter.builder("hourly").uri(server.uri()).keyPrefix(prefix).open()) {
      assertEquals(1, limiter.permits());
    }
    Process other = jeton("run", "--name", "hourly", "--rate", "2/1h", "true");
    String said = AbstractJetonCommandTest.outputOf(other);
    assertEquals(2, AbstractJetonCommandTest.exitOf(other), said);
    assertTrue(said.contains("exists with 1 per PT1H"), said);
  }

  @Test
  void aRateRedisCannotCountExactly_failsAtOnceNamingIt() throws Exception {
    Process p = jeton("run", "--name", "fine", "--rate", "7000001/1s", "true");
    String said = AbstractJetonCommandTest.outputOf(p);
    assertEquals(2, AbstractJetonCommandTest.exitOf(p), said);
    assertTrue(said.contains("too fine to count exactly in Redis"), said);
  }
}
