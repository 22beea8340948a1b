package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.RateLimiter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's machine-wide rate limiter example, as written there. */
class HostRateLimiterReadmeExamplesTest {
  @TempDir Path dir;
  private final AtomicInteger deploys = new AtomicInteger();

  private void deploy() {
    deploys.incrementAndGet();
  }

  @Test
  void theDeployExample() throws Exception {
    // At most 10 deploys a minute on this machine, whichever process asks, 2 at once after a pause;
    // the ones that wait go first come, first served.
    RateLimiter deploys =
        HostRateLimiter.builder("deploy")
            .directory(dir) // optional: the default is HostSemaphore's, /tmp/jeton-UID
            .rate(10, Duration.ofMinutes(1))
            .burst(2)
            .open();
    deploys.acquire();
    deploy();
    deploys.setRate(20, Duration.ofMinutes(1)); // for every process from now on

    assertEquals(1, this.deploys.get());
    RateLimiter another = HostRateLimiter.builder("deploy").directory(dir).open();
    assertEquals(20, another.permits(), "the new rate, for every handle");
    assertTrue(another.tryAcquire(), "the second of the burst of 2");
    assertFalse(another.tryAcquire(), "then one every 3 s");
    assertEquals(List.of("deploy"), HostRateLimiter.list(dir));
  }
}
