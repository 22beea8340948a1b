package dev.jeton.redis;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisServer;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck, in stress mode (real threads; model checking cannot follow a network round trip):
 * concurrent tryAcquire, release, available and queueLength through one handle must give the
 * results of some sequential order of the in-process semaphore, {@link Spec}. Each thread releases
 * only what it holds, and waits for Redis to confirm, so that the next operation sees it.
 *
 * <p>Another handle holds {@value #BACKGROUND_HOLDERS} leases of the same semaphore throughout, as
 * a fleet-wide limit of thousands would have: the limit in Redis is {@value #LIMIT} more than that,
 * so the {@link Spec}'s semaphore of {@value #LIMIT} gives the same answers, from a state of
 * thousands of records.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class RedisSemaphoreLincheckIntegrationTest {
  private static final int THREADS = 3;
  private static final int LIMIT = 2;
  private static final int BACKGROUND_HOLDERS = 3000;
  private static final java.util.concurrent.atomic.AtomicInteger INSTANCES =
      new java.util.concurrent.atomic.AtomicInteger();
  private static RedisServer server;
  private static io.lettuce.core.RedisClient client;
  private static @org.jspecify.annotations.Nullable RedisSemaphore previous;
  private static @org.jspecify.annotations.Nullable RedisSemaphore previousBackground;
  private static volatile boolean previousIsClean;

  private final RedisSemaphore semaphore;

  @SuppressWarnings("unchecked")
  private final ArrayDeque<Permit>[] held =
      new ArrayDeque[THREADS + 2]; // ids from 0 to THREADS + 1

  /**
   * A scenario reuses the previous scenario's semaphore only if that one ended with everything
   * given back (its validation passed); otherwise it gets a new one (a new name), so that nothing a
   * failed scenario left behind leaks into the next.
   */
  public RedisSemaphoreLincheckIntegrationTest() {
    RedisSemaphore old = previous;
    if (old != null && previousIsClean) {
      semaphore = old;
    } else {
      if (old != null) {
        closeWithItsLeases(old);
        closeWithItsLeases(previousBackground);
      }
      String name = "lincheck-" + INSTANCES.incrementAndGet();
      semaphore =
          RedisSemaphore.builder(name).client(client).limit(LIMIT + BACKGROUND_HOLDERS).open();
      previous = semaphore;
      previousBackground = holdInBackground(name);
    }
    previousIsClean = false;
    for (int i = 0; i < held.length; i++) {
      held[i] = new ArrayDeque<>();
    }
  }

  /** A handle holding {@value #BACKGROUND_HOLDERS} leases of {@code name} that outlast the run. */
  private static RedisSemaphore holdInBackground(String name) {
    RedisSemaphore background =
        RedisSemaphore.builder(name)
            .client(client)
            .owner("background")
            // its leases are dropped here on purpose, and released through the handle at the end
            .leakDetection(dev.jeton.LeakDetection.OFF)
            .options(
                RedisSemaphoreOptions.defaults()
                    .withLeaseTime(java.time.Duration.ofMinutes(60))
                    .withRenewInterval(java.time.Duration.ofMinutes(30)))
            .open();
    try {
      RedisSemaphores.takeLeases(background, BACKGROUND_HOLDERS);
    } catch (Exception e) {
      throw new IllegalStateException("could not take the background leases", e);
    }
    return background;
  }

  private static void closeWithItsLeases(@org.jspecify.annotations.Nullable RedisSemaphore sem) {
    if (sem != null) {
      RedisSemaphores.heldLeases(sem).forEach(Lease::release);
      sem.close();
    }
  }

  @BeforeAll
  static void startRedis() {
    server = RedisServer.start();
    client = io.lettuce.core.RedisClient.create(server.uri());
  }

  @AfterAll
  static void stopRedis() {
    closeWithItsLeases(previous);
    closeWithItsLeases(previousBackground);
    client.shutdown();
    server.close();
  }

  @Operation
  public boolean tryAcquire(
      @Param(gen = ThreadIdGen.class) int thread, @Param(name = "permits") int permits) {
    Optional<Permit> permit = semaphore.tryAcquire(permits);
    permit.ifPresent(held[thread]::push);
    return permit.isPresent();
  }

  @Operation
  public int release(@Param(gen = ThreadIdGen.class) int thread) throws Exception {
    Permit permit = held[thread].poll();
    if (permit == null) {
      return 0;
    }
    ((Lease) permit).releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    return permit.permits();
  }

  @Operation
  public int available() {
    return semaphore.available();
  }

  @Operation
  public int queueLength() {
    return semaphore.queueLength();
  }

  /**
   * Runs after each scenario: gives back what the threads still hold, and checks it is all back.
   */
  @Validate
  public void releaseEverything() throws Exception {
    for (ArrayDeque<Permit> permits : held) {
      for (Permit p : permits) {
        ((Lease) p).releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
      }
      permits.clear();
    }
    if (semaphore.available() != LIMIT || semaphore.queueLength() != 0) {
      throw new IllegalStateException("a scenario left permits out or requests queued");
    }
    previousIsClean = true;
  }

  /** The sequential specification: the same operations on the in-process semaphore. */
  public static final class Spec {
    private final Semaphore model = Semaphore.create(LIMIT);

    @SuppressWarnings("unchecked")
    private final ArrayDeque<Permit>[] held =
        new ArrayDeque[THREADS + 2]; // ids from 0 to THREADS + 1

    public Spec() {
      for (int i = 0; i < held.length; i++) {
        held[i] = new ArrayDeque<>();
      }
    }

    public boolean tryAcquire(int thread, int permits) {
      Optional<Permit> permit = model.tryAcquire(permits);
      permit.ifPresent(held[thread]::push);
      return permit.isPresent();
    }

    public int release(int thread) {
      Permit permit = held[thread].poll();
      if (permit == null) {
        return 0;
      }
      permit.release();
      return permit.permits();
    }

    public int available() {
      return model.available();
    }

    public int queueLength() {
      return model.queueLength();
    }
  }

  @Test
  // Only against a hang, above the suite's default of 120 s: about a minute on an idle machine
  // (see below), but it took 8 on a 2-core machine running four other builds.
  @Timeout(value = 30, unit = TimeUnit.MINUTES)
  void stress() {
    // Far fewer invocations than the in-process tests: under Lincheck (which instruments Lettuce
    // and Netty too) an invocation here costs about 0.9 s of CPU on JDK 17 and 2.2 s on JDK 25,
    // against about 2 ms without Lincheck. 60 invocations: about 1 minute on JDK 17, 2 on JDK 25.
    new StressOptions()
        .iterations(3)
        .invocationsPerIteration(20)
        .threads(THREADS)
        .actorsPerThread(3)
        .sequentialSpecification(Spec.class)
        .check(RedisSemaphoreLincheckIntegrationTest.class);
  }
}
