package dev.jeton.redis;

import dev.jeton.RateLimiter;
import dev.jeton.RateLimiterStats;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} shared by a fleet through Redis: at most {@code burst + rate * t} weight
 * passes in any window of length {@code t}, whichever process asks, on Redis's clock.
 *
 * <pre>{@code
 * try (RedisRateLimiter vendor =
 *     RedisRateLimiter.builder("vendor-api")
 *         .uri("redis://localhost:6379")
 *         .rate(100, Duration.ofSeconds(1))
 *         .burst(20)
 *         .open()) {
 *   vendor.acquire();   // waits for this process's turn in the fleet
 *   callVendor();
 * }
 * }</pre>
 *
 * <p><b>How it works.</b> The limiter's state is one value in Redis, kept by one Redis function
 * (GCRA, {@code rate.lua}). A request is one call: Redis gives it the first instant at which it may
 * pass, in the order the calls arrive (first come, first served across the fleet, heavy requests
 * included), and the caller waits for that instant on a timer here, asking nothing more: one round
 * trip per request, however many wait. A timed request that would wait beyond its timeout is told
 * so at once, and takes no instant. A request given up while it waits (cancel, interrupt, its
 * handle closed) gives its instant back if no one has taken one after it; if someone has, that
 * instant goes unused (the fleet loses that much of its rate, once; the bound is never broken). A
 * process killed while it waits leaves its instants unused the same way.
 *
 * <p><b>Not like the in-process limiter.</b> An instant, once given, stays: {@link #setRate} paces
 * the requests made after it, not those already waiting. {@link #queueLength()} and {@link
 * #stats()} are this handle's own requests; {@link #permits()}, {@link #period()} and {@link
 * #burst()} are the rate as this handle last heard it (every answer carries it), and {@link
 * #timeToAdmit} asks Redis. While Redis cannot be reached a request fails at once with the reason;
 * nothing is retried.
 *
 * <p><b>If Redis loses the state</b> (a restart without persistence, {@code FLUSHALL}), the next
 * request recreates it: from a handle that had seen it, as if a full burst had just passed and no
 * earlier than the last instant that handle knows, so its own waiters keep the bound; waiters of
 * other processes may pass beside new requests once, at most the backlog they had.
 */
public final class RedisRateLimiter implements RateLimiter, AutoCloseable {
  /** Timeouts this long or longer are waits without a timeout: about 100 years. */
  static final long UNBOUNDED_SECONDS = 100L * 365 * 24 * 3600;

  /** What follows the name in the limiter's key, {@code {<prefix>:<name>}:rate}. */
  private static final String KEY_SUFFIX = "}:rate";

  private final RateHandle handle;

  private RedisRateLimiter(RateHandle handle) {
    this.handle = handle;
  }

  /**
   * Starts building a handle on the rate limiter {@code name}.
   *
   * @param name letters, digits, {@code .}, {@code _} and {@code -}
   * @throws IllegalArgumentException if the name breaks that rule
   */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** Builds a {@link RedisRateLimiter} handle: where Redis is, and the rate. */
  public static final class Builder {
    private final String name;
    private String keyPrefix = RedisSemaphoreOptions.DEFAULT_KEY_PREFIX;
    private @Nullable String uri;
    private @Nullable AbstractRedisClient client;
    private boolean jedis;
    private long permits;
    private @Nullable Duration period;
    private int burst;
    private boolean statistics;
    private Executor completionExecutor = ForkJoinPool.commonPool();

    private Builder(String name) {
      this.name = RedisSemaphoreOptions.checkKeyPart("name", name);
    }

    /** Where Redis is, as {@link RedisSemaphore.Builder#uri(String)} takes it. */
    public Builder uri(String redisUri) {
      this.uri = Objects.requireNonNull(redisUri, "uri");
      this.client = null;
      return this;
    }

    /** Connects through Jedis, as {@link RedisSemaphore.Builder#jedis()}. */
    public Builder jedis() {
      this.jedis = true;
      return this;
    }

    /** Connects through {@code redisClient}, which the caller keeps and closes. */
    public Builder client(RedisClient redisClient) {
      this.client = Objects.requireNonNull(redisClient, "client");
      this.uri = null;
      this.jedis = false;
      return this;
    }

    /** Connects to Redis Cluster through {@code clusterClient}, which the caller keeps. */
    public Builder client(RedisClusterClient clusterClient) {
      this.client = Objects.requireNonNull(clusterClient, "client");
      this.uri = null;
      this.jedis = false;
      return this;
    }

    /**
     * The first part of the limiter's key, {@code {<prefix>:<name>}:rate} (default {@value
     * RedisSemaphoreOptions#DEFAULT_KEY_PREFIX}, as the semaphores').
     */
    public Builder keyPrefix(String prefix) {
      this.keyPrefix = RedisSemaphoreOptions.checkKeyPart("key prefix", prefix);
      return this;
    }

    /**
     * The rate: {@code permits} per {@code period}. The limiter is created with it if new; if it
     * exists with another rate, {@link #open()} fails (change a rate with {@link #setRate}).
     * Without a rate, the limiter must exist.
     *
     * @throws IllegalArgumentException if {@code permits} is below 1 or {@code period} not positive
     */
    public Builder rate(long permits, Duration period) {
      Objects.requireNonNull(period, "period");
      RateLimiter.builder().rate(permits, period); // the in-process rules and messages
      this.permits = permits;
      this.period = period;
      return this;
    }

    /**
     * The most weight that may pass at once (default: the rate's permits, at most 2^31-1), used
     * when the limiter is created; if given and the limiter exists with another, {@link #open()}
     * fails.
     *
     * @throws IllegalArgumentException if {@code burst} is below 1
     */
    public Builder burst(int burst) {
      RateLimiter.builder().burst(burst);
      this.burst = burst;
      return this;
    }

    /** Whether to keep {@link RateLimiterStats statistics} of this handle's requests. */
    public Builder statistics(boolean keep) {
      this.statistics = keep;
      return this;
    }

    /** Where asynchronous requests complete (default: the common fork-join pool). */
    public Builder completionExecutor(Executor executor) {
      this.completionExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Connects and opens the handle.
     *
     * @throws IllegalArgumentException if the limiter exists with another rate or burst than given,
     *     or does not exist and no rate was given; if the rate cannot be counted exactly in Redis;
     *     if no Redis URI or client was given, or the URI is bad
     * @throws io.lettuce.core.RedisException if Redis cannot be reached
     */
    public RedisRateLimiter open() {
      Duration p = period;
      RedisRate wanted =
          p == null
              ? null
              : RedisRate.of(
                  permits, p, burst != 0 ? burst : (int) Math.min(permits, Integer.MAX_VALUE));
      Link link = Link.open(uri, client, jedis);
      try {
        return new RedisRateLimiter(
            RateHandle.open(
                name,
                "{" + keyPrefix + ":" + name + KEY_SUFFIX,
                link,
                completionExecutor,
                statistics ? RateCounters.counting() : RateCounters.NONE,
                wanted,
                burst != 0));
      } catch (RuntimeException e) {
        link.close();
        throw e;
      }
    }
  }

  /**
   * {@return the names of the rate limiters in the Redis at {@code redisUri} under {@code
   * keyPrefix}, sorted}
   */
  public static java.util.List<String> list(String redisUri, String keyPrefix) {
    return Listing.names(LettuceLink.connect(redisUri), keyPrefix, KEY_SUFFIX);
  }

  /** {@link #list}, through Jedis (see {@link Builder#jedis()}). */
  public static java.util.List<String> listWithJedis(String redisUri, String keyPrefix) {
    return Listing.names(Link.jedis(redisUri), keyPrefix, KEY_SUFFIX);
  }

  @Override
  public void acquire(int weight) throws InterruptedException {
    try {
      await(acquireAsync(weight));
    } catch (TimeoutException impossible) {
      throw new AssertionError("a request without a timeout timed out", impossible);
    }
  }

  @Override
  public void acquire(int weight, Duration timeout) throws InterruptedException, TimeoutException {
    await(acquireAsync(weight, timeout));
  }

  /**
   * Waits for {@code request}; an interrupt gives it up, unless it ended meanwhile: then its
   * outcome stands and the thread stays interrupted. Failures come back unwrapped.
   */
  private static void await(CompletableFuture<Void> request)
      throws InterruptedException, TimeoutException {
    try {
      request.get();
    } catch (InterruptedException e) {
      if (request.cancel(false)) {
        throw e;
      }
      Thread.currentThread().interrupt(); // it passed (or failed) as the interrupt came
      outcome(request);
    } catch (ExecutionException e) {
      throw unwrapped(e);
    }
  }

  /** The outcome of a request that is done. */
  private static void outcome(CompletableFuture<Void> done) throws TimeoutException {
    try {
      done.join();
    } catch (java.util.concurrent.CompletionException e) {
      throw unwrapped(e);
    }
  }

  /** The cause of {@code e}, thrown as it is if it is unchecked or a timeout. */
  private static RuntimeException unwrapped(Exception e) throws TimeoutException {
    Throwable cause = e.getCause();
    if (cause instanceof TimeoutException) {
      throw (TimeoutException) cause;
    }
    if (cause instanceof RuntimeException) {
      return (RuntimeException) cause;
    }
    if (cause instanceof Error) {
      throw (Error) cause;
    }
    return new IllegalStateException(cause);
  }

  /** {@inheritDoc} One round trip to Redis. */
  @Override
  public boolean tryAcquire(int weight) {
    return handle.tryAcquire(weight);
  }

  @Override
  public CompletableFuture<Void> acquireAsync(int weight) {
    return handle.submit(weight, null);
  }

  @Override
  public CompletableFuture<Void> acquireAsync(int weight, Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("the timeout must not be negative, was " + timeout);
    }
    return handle.submit(weight, timeout.getSeconds() >= UNBOUNDED_SECONDS ? null : timeout);
  }

  /**
   * {@inheritDoc} For every process, from the next request on; requests already waiting keep their
   * instants. One round trip.
   */
  @Override
  public void setRate(long permits, Duration period) {
    Objects.requireNonNull(period, "period");
    handle.setRate(permits, period);
  }

  @Override
  public long permits() {
    return handle.rate().permits();
  }

  @Override
  public Duration period() {
    return handle.rate().period();
  }

  @Override
  public int burst() {
    return handle.rate().burst();
  }

  /** {@return the number of this handle's requests that wait} */
  @Override
  public int queueLength() {
    return handle.queueLength();
  }

  /** {@inheritDoc} Asks Redis: one round trip; for the whole fleet's queue. */
  @Override
  public Duration timeToAdmit(int weight) {
    return handle.timeToAdmit(weight);
  }

  /** {@return this handle's statistics, if it keeps them} */
  @Override
  public Optional<RateLimiterStats> stats() {
    return handle.stats == RateCounters.NONE
        ? Optional.empty()
        : Optional.of(handle.stats.snapshot(handle.queueLength()));
  }

  /**
   * Closes the handle: its waiting requests fail with an {@link IllegalStateException} and give
   * their instants back, then its connections close (and its client, if it made one).
   */
  @Override
  public void close() {
    handle.close();
  }

  /** {@return the limiter's name} */
  public String name() {
    return handle.name;
  }

  @Override
  public String toString() {
    return "RedisRateLimiter["
        + handle.name
        + ", "
        + handle.rate()
        + ", queued="
        + queueLength()
        + "]";
  }
}
