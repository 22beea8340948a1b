package dev.jeton.bench;

import dev.jeton.redis.Lease;
import dev.jeton.redis.RedisSemaphore;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One of the Redis semaphores compared, as the clients of a fleet would use it: {@link
 * #handle()} gives each benchmark thread its client's handle, and what the handles share (a
 * Lettuce client, a Redisson client) is made once and closed with the fleet.
 *
 * <ul>
 *   <li>{@value #JETON}: {@link RedisSemaphore}, default options (leases of 30 s, renewed every
 *       10 s). Each thread opens its own handle ({@code RedisSemaphore.builder(name).client(c)}),
 *       as each member of a fleet has its own; the handles share one Lettuce {@link RedisClient}
 *       (so its event loops), and each has its own two connections (commands, wake-ups).
 *   <li>{@value #JETON_SHARED}: one {@link RedisSemaphore} handle shared by every thread: one
 *       client process with many threads, the way {@value #REDISSON_SEMAPHORE} is used.
 *   <li>{@value #REDISSON_SEMAPHORE}: Redisson's {@link RSemaphore} ({@code acquire()}, {@code
 *       release()}), limit set with {@code trySetPermits}. One {@link RedissonClient}, default
 *       configuration (a pool of up to 64 connections, 1 to 50 for pub/sub), shared by every
 *       thread: that is how Redisson is meant to be used, one client per process.
 *   <li>{@value #REDISSON_EXPIRABLE}: Redisson's {@link RPermitExpirableSemaphore}: {@code
 *       acquire(30, SECONDS)} (a permit that expires after 30 s, like Jeton's default lease, but
 *       is never renewed) returns a permit id, {@code release(permitId)} gives it back. Same
 *       shared client.
 * </ul>
 *
 * <p>Each benchmark fork loads one implementation, so calls through these interfaces are
 * monomorphic; and at the tens of microseconds a Redis round trip costs, the adapter is noise.
 */
abstract class RedisFleet implements AutoCloseable {
  static final String JETON = "jeton";
  static final String JETON_SHARED = "jeton-shared";
  static final String REDISSON_SEMAPHORE = "redissonSemaphore";
  static final String REDISSON_EXPIRABLE = "redissonExpirable";

  /** The semaphore's name; Jeton's keys are {@code {jeton:<name>}:...}. */
  static final String NAME = "bench";

  /** The lease of a Redisson expirable permit: Jeton's default lease time. */
  static final long REDISSON_LEASE_SECONDS = 30;

  /** One client's handle; {@link #acquire()} returns what {@link #release} takes back. */
  interface Handle extends AutoCloseable {
    /** Acquires one permit, blocking while it waits. */
    Object acquire() throws InterruptedException;

    /** Gives the permit back and returns once Redis has answered. */
    void release(Object permit);

    /**
     * Gives the permit back without waiting for Redis's answer. Jeton: {@code Lease.release()}
     * (fire and forget by design); Redisson: {@code releaseAsync()}, its future ignored.
     */
    void releaseNoWait(Object permit);

    @Override
    void close();
  }

  /**
   * Makes the fleet {@code impl} (one of the constants above) on the server {@code uri}, and
   * creates its semaphore with {@code limit} permits; the database is expected to be empty.
   */
  static RedisFleet open(String impl, String uri, int limit) {
    return switch (impl) {
      case JETON -> new JetonFleet(uri, limit, false);
      case JETON_SHARED -> new JetonFleet(uri, limit, true);
      case REDISSON_SEMAPHORE -> new RedissonSemaphoreFleet(uri, limit);
      case REDISSON_EXPIRABLE -> new RedissonExpirableFleet(uri, limit);
      default -> throw new IllegalArgumentException("unknown implementation: " + impl);
    };
  }

  /** A handle for one more client (thread). */
  abstract Handle handle();

  /** The permits free now, as Redis sees them; for the sanity check after a run. */
  abstract int available();

  @Override
  public abstract void close();

  // ---------------------------------------------------------------- Jeton

  private static final class JetonFleet extends RedisFleet {
    private final RedisClient client;
    private final int limit;
    private final @Nullable RedisSemaphore shared;

    JetonFleet(String uri, int limit, boolean shareOneHandle) {
      this.client = RedisClient.create(uri);
      this.limit = limit;
      // With a handle per thread, the first handle opened creates the semaphore (limitIfNew).
      // No handle is opened and closed here: a handle on a caller's client keeps its connections,
      // and its wake-up subscription, open after close() until the client shuts down, and would
      // add a subscriber to every wake-up.
      this.shared = shareOneHandle ? open() : null;
    }

    private RedisSemaphore open() {
      return RedisSemaphore.builder(NAME).client(client).limitIfNew(limit).open();
    }

    @Override
    Handle handle() {
      RedisSemaphore s = shared;
      return s != null ? new JetonHandle(s, false) : new JetonHandle(open(), true);
    }

    @Override
    int available() {
      RedisSemaphore s = open(); // after the run: its connections close with the client
      try {
        return s.available();
      } finally {
        s.close();
      }
    }

    @Override
    public void close() {
      RedisSemaphore s = shared;
      if (s != null) {
        s.close();
      }
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
  }

  private static final class JetonHandle implements Handle {
    private final RedisSemaphore semaphore;
    private final boolean owned;

    JetonHandle(RedisSemaphore semaphore, boolean owned) {
      this.semaphore = semaphore;
      this.owned = owned;
    }

    @Override
    public Object acquire() throws InterruptedException {
      return semaphore.acquire(1);
    }

    @Override
    public void release(Object permit) {
      ((Lease) permit).releaseAsync().join();
    }

    @Override
    public void releaseNoWait(Object permit) {
      ((Lease) permit).release();
    }

    @Override
    public void close() {
      if (owned) {
        semaphore.close();
      }
    }
  }

  // ---------------------------------------------------------------- Redisson

  private static RedissonClient redisson(String uri) {
    Config config = new Config();
    config.useSingleServer().setAddress(uri);
    return Redisson.create(config);
  }

  private static final class RedissonSemaphoreFleet extends RedisFleet {
    private final RedissonClient client;
    private final RSemaphore semaphore;

    RedissonSemaphoreFleet(String uri, int limit) {
      this.client = redisson(uri);
      this.semaphore = client.getSemaphore(NAME);
      if (!semaphore.trySetPermits(limit)) {
        throw new IllegalStateException("Redisson semaphore '" + NAME + "' exists already");
      }
    }

    @Override
    Handle handle() {
      RSemaphore s = client.getSemaphore(NAME);
      return new Handle() {
        @Override
        public Object acquire() throws InterruptedException {
          s.acquire();
          return s;
        }

        @Override
        public void release(Object permit) {
          s.release();
        }

        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // fire and forget, on purpose
        public void releaseNoWait(Object permit) {
          s.releaseAsync();
        }

        @Override
        public void close() {}
      };
    }

    @Override
    int available() {
      return semaphore.availablePermits();
    }

    @Override
    public void close() {
      client.shutdown();
    }
  }

  private static final class RedissonExpirableFleet extends RedisFleet {
    private final RedissonClient client;
    private final RPermitExpirableSemaphore semaphore;

    RedissonExpirableFleet(String uri, int limit) {
      this.client = redisson(uri);
      this.semaphore = client.getPermitExpirableSemaphore(NAME);
      if (!semaphore.trySetPermits(limit)) {
        throw new IllegalStateException("Redisson semaphore '" + NAME + "' exists already");
      }
    }

    @Override
    Handle handle() {
      RPermitExpirableSemaphore s = client.getPermitExpirableSemaphore(NAME);
      return new Handle() {
        @Override
        public Object acquire() throws InterruptedException {
          return Objects.requireNonNull(s.acquire(REDISSON_LEASE_SECONDS, TimeUnit.SECONDS));
        }

        @Override
        public void release(Object permit) {
          s.release((String) permit);
        }

        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // fire and forget, on purpose
        public void releaseNoWait(Object permit) {
          s.releaseAsync((String) permit);
        }

        @Override
        public void close() {}
      };
    }

    @Override
    int available() {
      return semaphore.availablePermits();
    }

    @Override
    public void close() {
      client.shutdown();
    }
  }
}
