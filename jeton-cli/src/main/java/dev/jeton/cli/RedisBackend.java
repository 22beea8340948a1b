package dev.jeton.cli;

import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.RateLimiter;
import dev.jeton.Semaphore;
import dev.jeton.redis.FencingToken;
import dev.jeton.redis.Lease;
import dev.jeton.redis.LeaseInfo;
import dev.jeton.redis.RedisRateLimiter;
import dev.jeton.redis.RedisSemaphore;
import dev.jeton.redis.RedisSemaphoreOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** Semaphores and rate limiters of a fleet, in Redis. */
final class RedisBackend implements Backend {
  private final String uri;
  private final RedisSemaphoreOptions options;
  private final List<RedisSemaphore> opened = new ArrayList<>();
  private final List<RedisRateLimiter> openedRates = new ArrayList<>();

  RedisBackend(String uri, RedisSemaphoreOptions options) {
    this.uri = uri;
    this.options = options;
  }

  @Override
  public Semaphore open(String name, @Nullable Integer limit, int limitIfNew, String command) {
    RedisSemaphore.Builder builder =
        RedisSemaphore.builder(name)
            .uri(uri)
            .options(options)
            .owner(command)
            // The command holds its lease in one frame until the child ends: it cannot drop one
            // unreleased, and watching would start the leak reporter's thread in every run.
            .leakDetection(LeakDetection.OFF);
    if (plainServer(uri)) {
      builder.jedis(); // a third of Lettuce's start-up CPU (decision 62)
    }
    if (limit != null) {
      builder.limit(limit);
    } else if (limitIfNew > 0) {
      builder.limitIfNew(limitIfNew);
    }
    RedisSemaphore semaphore = builder.open();
    opened.add(semaphore);
    return semaphore;
  }

  /**
   * Whether {@code uri} names one server plainly (no TLS, Sentinel, Cluster, socket or options), as
   * Jedis takes it; a malformed one is refused by Jedis with its reason.
   */
  static boolean plainServer(String uri) {
    return uri.startsWith("redis://") && uri.indexOf('?') < 0 && uri.indexOf('#') < 0;
  }

  @Override
  public List<String> names() {
    return plainServer(uri)
        ? RedisSemaphore.listWithJedis(uri, options)
        : RedisSemaphore.list(uri, options);
  }

  @Override
  public View status(Semaphore semaphore) {
    RedisSemaphore.Status s = ((RedisSemaphore) semaphore).status();
    return new View(s.name(), s.limit(), s.held(), entries(s.holders()), entries(s.waiters()));
  }

  private static List<Entry> entries(List<LeaseInfo> leases) {
    List<Entry> entries = new ArrayList<>();
    for (LeaseInfo l : leases) {
      entries.add(
          new Entry(
              l.pid(),
              l.permits(),
              l.user(),
              l.host(),
              l.since(),
              l.owner(),
              l.id(),
              l.expiresAt(),
              l.expiresAt() == null ? null : FencingToken.format(l.fencingTokens())));
    }
    return entries;
  }

  @Override
  public String where() {
    return "in Redis at " + withoutPassword(uri);
  }

  /** The URI with any user and password left out, to be shown. */
  static String withoutPassword(String uri) {
    return uri.replaceFirst("//[^/@]*@", "//");
  }

  @Override
  public Map<String, String> environment(Semaphore semaphore, Permit permit) {
    Lease lease = (Lease) permit;
    Map<String, String> env = new HashMap<>();
    env.put("JETON_LEASE_ID", lease.id());
    env.put("JETON_FENCING_TOKENS", FencingToken.format(lease.fencingTokens()));
    env.put("JETON_KEY_PREFIX", options.keyPrefix());
    return env;
  }

  @Override
  public void release(Permit permit) {
    try {
      ((Lease) permit).releaseAsync().get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the lease expires on its own
    } catch (ExecutionException | TimeoutException e) {
      // Redis is unreachable: the lease expires on its own after the lease time.
    }
  }

  @Override
  public void holdWhileRuns(Semaphore semaphore, Permit permit, ProcessHandle leader) {
    // A lease is held by its renewals: if this process dies, the watchdog stops the command
    // before the lease can run out (stopGrace).
  }

  /**
   * At most 10 s, and at most half of what is left of the lease in the worst case (renewed a
   * renewal interval ago), so the command is stopped before the lease could run out.
   */
  @Override
  public java.time.Duration stopGrace() {
    java.time.Duration left = options.leaseTime().minus(options.renewInterval());
    // not dividedBy: it initializes BigDecimal, 9 ms of the command's start
    java.time.Duration half = java.time.Duration.ofMillis(left.toMillis() / 2);
    java.time.Duration grace =
        half.compareTo(java.time.Duration.ofSeconds(10)) < 0
            ? half
            : java.time.Duration.ofSeconds(10);
    return grace.isNegative() ? java.time.Duration.ZERO : grace;
  }

  @Override
  public boolean renews() {
    return true; // a lease lasts only as long as this process renews it
  }

  @Override
  public void whenLost(Permit permit, Consumer<String> onLost) {
    ((Lease) permit).lost().thenAccept(loss -> onLost.accept(loss.reason()));
  }

  @Override
  public RateLimiter openRate(String name, Rates.@Nullable Rate rate, int burst, String command) {
    RedisRateLimiter.Builder builder =
        RedisRateLimiter.builder(name).uri(uri).keyPrefix(options.keyPrefix());
    if (plainServer(uri)) {
      builder.jedis(); // a third of Lettuce's start-up CPU (decision 62)
    }
    if (rate != null) {
      builder.rate(rate.permits(), rate.period());
    }
    if (burst > 0) {
      builder.burst(burst);
    }
    RedisRateLimiter limiter = builder.open();
    openedRates.add(limiter);
    return limiter;
  }

  @Override
  public Map<String, String> environment(RateLimiter limiter) {
    return Map.of("JETON_KEY_PREFIX", options.keyPrefix());
  }

  @Override
  public List<String> rateNames() {
    return plainServer(uri)
        ? RedisRateLimiter.listWithJedis(uri, options.keyPrefix())
        : RedisRateLimiter.list(uri, options.keyPrefix());
  }

  /**
   * {@inheritDoc} Fleet-wide, no waiters are listed: Redis hands each request its instant and keeps
   * no record of who waits for one; the next free slot says how long the line is.
   */
  @Override
  public RateView rateStatus(RateLimiter limiter) {
    RedisRateLimiter redis = (RedisRateLimiter) limiter;
    java.time.Duration nextFree = redis.timeToAdmit(1); // also refreshes the rate it heard
    return new RateView(
        redis.name(),
        new Rates.Rate(redis.permits(), redis.period()),
        redis.burst(),
        nextFree,
        List.of());
  }

  @Override
  public void close() {
    opened.forEach(RedisSemaphore::close);
    openedRates.forEach(RedisRateLimiter::close);
  }
}
