package dev.jeton.bench;

import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;

/**
 * The rate limiters {@link RateLimiterBenchmark} compares, each set to the same rate and burst:
 * {@value #PER_SECOND} a second, a burst of {@value #BURST}, so that a token is always there for
 * the benchmark's threads, which take far fewer than one a nanosecond; what is measured is the
 * bookkeeping of one admission.
 */
interface RateGate {
  String JETON = "jeton";
  String GUAVA = "guava";
  String RESILIENCE4J = "resilience4j";
  String BUCKET4J = "bucket4j";

  long PER_SECOND = 1_000_000_000L;
  int BURST = 1_000_000;

  /** Takes one token if it is there now. */
  boolean tryAcquire();

  /** Takes one token, through the library's waiting entry point (which does not wait here). */
  void acquire() throws InterruptedException;

  static RateGate create(String impl) {
    return switch (impl) {
      case JETON -> jeton();
      case GUAVA -> guava();
      case RESILIENCE4J -> resilience4j();
      case BUCKET4J -> bucket4j();
      default -> throw new IllegalArgumentException("unknown implementation: " + impl);
    };
  }

  /** {@code dev.jeton.RateLimiter}: {@code tryAcquire()}, {@code acquire()}. */
  private static RateGate jeton() {
    dev.jeton.RateLimiter limiter =
        dev.jeton.RateLimiter.builder()
            .rate(PER_SECOND, Duration.ofSeconds(1))
            .burst(BURST)
            .build();
    return new RateGate() {
      @Override
      public boolean tryAcquire() {
        return limiter.tryAcquire();
      }

      @Override
      public void acquire() throws InterruptedException {
        limiter.acquire();
      }
    };
  }

  /**
   * Guava's {@code RateLimiter.create(rate)} (bursty: up to one second's permits stored): {@code
   * tryAcquire()}, {@code acquire()}.
   */
  private static RateGate guava() {
    com.google.common.util.concurrent.RateLimiter limiter =
        com.google.common.util.concurrent.RateLimiter.create(PER_SECOND);
    return new RateGate() {
      @Override
      public boolean tryAcquire() {
        return limiter.tryAcquire();
      }

      @Override
      public void acquire() {
        var unused = limiter.acquire();
      }
    };
  }

  /**
   * resilience4j's {@code AtomicRateLimiter}: {@value #BURST} permits per millisecond; {@code
   * acquirePermission()} with a zero timeout, and with a long one for {@code acquire}.
   */
  private static RateGate resilience4j() {
    RateLimiterConfig.Builder config =
        RateLimiterConfig.custom()
            .limitForPeriod(BURST)
            .limitRefreshPeriod(Duration.ofNanos(BURST * 1_000_000_000L / PER_SECOND));
    io.github.resilience4j.ratelimiter.RateLimiter tries =
        io.github.resilience4j.ratelimiter.RateLimiter.of(
            "tries", config.timeoutDuration(Duration.ZERO).build());
    io.github.resilience4j.ratelimiter.RateLimiter waits =
        io.github.resilience4j.ratelimiter.RateLimiter.of(
            "waits", config.timeoutDuration(Duration.ofSeconds(5)).build());
    return new RateGate() {
      @Override
      public boolean tryAcquire() {
        return tries.acquirePermission();
      }

      @Override
      public void acquire() {
        if (!waits.acquirePermission()) {
          throw new IllegalStateException("no permission within 5 s");
        }
      }
    };
  }

  /**
   * Bucket4j's local bucket (lock-free, the default): capacity {@value #BURST}, greedy refill at
   * the rate; {@code tryConsume(1)}, {@code asBlocking().consume(1)}.
   */
  private static RateGate bucket4j() {
    Bucket bucket =
        Bucket.builder()
            .addLimit(
                limit -> limit.capacity(BURST).refillGreedy(PER_SECOND, Duration.ofSeconds(1)))
            .build();
    return new RateGate() {
      @Override
      public boolean tryAcquire() {
        return bucket.tryConsume(1);
      }

      @Override
      public void acquire() throws InterruptedException {
        bucket.asBlocking().consume(1);
      }
    };
  }
}
