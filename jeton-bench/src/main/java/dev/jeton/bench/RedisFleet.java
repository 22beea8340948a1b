package dev.jeton.bench;

import dev.jeton.LeakDetection;
import dev.jeton.redis.Lease;
import dev.jeton.redis.RedisSemaphore;
import dev.jeton.redis.RedisSemaphoreOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One of the Redis semaphores compared, as the clients of a fleet would use it: {@link #handle()}
 * gives each benchmark thread its client's handle, and what the handles share (a Lettuce client, a
 * Redisson client) is made once and closed with the fleet.
 *
 * <ul>
 *   <li>{@value #JETON}: {@link RedisSemaphore}, default options (leases of 30 s, renewed every 10
 *       s) but a replay window of 5 s ({@link #REPLAY_WINDOW}), so that finished requests are swept
 *       inside a trial rather than after it. Each thread opens its own handle ({@code
 *       RedisSemaphore.builder(name).client(c)}), as each member of a fleet has its own; the
 *       handles share one Lettuce {@link RedisClient} (so its event loops), and each has its own
 *       two connections (commands, wake-ups).
 *   <li>{@value #JETON_SHARED}: one {@link RedisSemaphore} handle shared by every thread: one
 *       client process with many threads, the way {@value #REDISSON_SEMAPHORE} is used.
 *   <li>{@value #REDISSON_SEMAPHORE}: Redisson's {@link RSemaphore} ({@code acquire()}, {@code
 *       release()}), limit set with {@code trySetPermits}. One {@link RedissonClient}, default
 *       configuration (a pool of up to 64 connections, 1 to 50 for pub/sub), shared by every
 *       thread: that is how Redisson is meant to be used, one client per process.
 *   <li>{@value #REDISSON_EXPIRABLE}: Redisson's {@link RPermitExpirableSemaphore}: {@code
 *       acquire(30, SECONDS)} (a permit that expires after 30 s, like Jeton's default lease, but is
 *       never renewed) returns a permit id, {@code release(permitId)} gives it back. Same shared
 *       client.
 *   <li>{@value #FLOOR}: no semaphore: acquire and release are each one {@code FCALL} of a function
 *       that returns 1 ({@link #FLOOR_LIBRARY}), on a key in Jeton's hash tag, through the same
 *       Lettuce {@link RedisClient} setup and {@link StringCodec} as {@value #JETON}, async and
 *       then {@code get()} as Jeton's blocking path. Its {@code latency} is two Lettuce round trips
 *       of a trivial function: the floor a Redis semaphore can get near.
 * </ul>
 *
 * <p>{@link #hold(int)} has a background client take permits before a trial and keep them, as the
 * other members of a fleet would; see there for how each implementation does it.
 *
 * <p>Each benchmark fork loads one implementation, so calls through these interfaces are
 * monomorphic; and at the tens of microseconds a Redis round trip costs, the adapter is noise.
 */
abstract class RedisFleet implements AutoCloseable {
  static final String JETON = "jeton";
  static final String JETON_SHARED = "jeton-shared";

  /** {@link #JETON} with leak detection off: the default watches every lease (decision 107). */
  static final String JETON_LEAKS_OFF = "jeton-leaks-off";

  static final String REDISSON_SEMAPHORE = "redissonSemaphore";
  static final String REDISSON_EXPIRABLE = "redissonExpirable";
  static final String FLOOR = "floor";

  /** The semaphore's name; Jeton's keys are {@code {jeton:<name>}:...}. */
  static final String NAME = "bench";

  /** The lease of a Redisson expirable permit: Jeton's default lease time. */
  static final long REDISSON_LEASE_SECONDS = 30;

  /**
   * The benchmark's Jeton handles remember finished requests this long (the default is 60 s, and
   * the sweep that forgets them would never run inside a trial of 40 s).
   */
  static final Duration REPLAY_WINDOW = Duration.ofSeconds(5);

  /** Options of the benchmark's Jeton handles. */
  static final RedisSemaphoreOptions JETON_OPTIONS =
      RedisSemaphoreOptions.defaults().withReplayWindow(REPLAY_WINDOW);

  /**
   * The background holders' leases: 10 minutes, renewed every 5, so no renewal lands inside a
   * trial.
   */
  static final RedisSemaphoreOptions HOLDER_OPTIONS =
      JETON_OPTIONS.withLeaseTime(Duration.ofMinutes(10)).withRenewInterval(Duration.ofMinutes(5));

  /** The floor's Redis function library: one function, which returns 1. */
  static final String FLOOR_LIBRARY =
      "#!lua name=jeton_floor\n"
          + "redis.register_function('jeton_floor', function(keys, args) return 1 end)";

  /** The floor's key: in Jeton's hash tag, as Jeton's keys are. */
  static final String FLOOR_KEY = "{jeton:" + NAME + "}:floor";

  /** Permits a background client holds; {@link #release()} gives them all back. */
  interface Held {
    void release();
  }

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
      case JETON -> new JetonFleet(uri, limit, false, null);
      case JETON_LEAKS_OFF -> new JetonFleet(uri, limit, false, LeakDetection.OFF);
      case JETON_SHARED -> new JetonFleet(uri, limit, true, null);
      case REDISSON_SEMAPHORE -> new RedissonSemaphoreFleet(uri, limit);
      case REDISSON_EXPIRABLE -> new RedissonExpirableFleet(uri, limit);
      case FLOOR -> new FloorFleet(uri, limit);
      default -> throw new IllegalArgumentException("unknown implementation: " + impl);
    };
  }

  /** A handle for one more client (thread). */
  abstract Handle handle();

  /** The permits free now, as Redis sees them; for the sanity check after a run. */
  abstract int available();

  /**
   * Has a client of its own (not one of the handles') take {@code permits} permits and keep them
   * until {@link Held#release()}; returns once all are held. Jeton: a separate handle with {@link
   * #HOLDER_OPTIONS}, {@code acquireLeaseAsync(1)} × permits, then joined; {@code
   * RPermitExpirableSemaphore}: {@code acquireAsync(10, MINUTES)} × permits, then joined; {@code
   * RSemaphore}: {@code acquire(permits)}; the floor has no permits and takes nothing.
   */
  abstract Held hold(int permits);

  /** Waits for every future; the values in order. */
  static <T> List<T> joinAll(List<? extends CompletableFuture<? extends T>> futures) {
    List<T> values = new ArrayList<>(futures.size());
    for (CompletableFuture<? extends T> future : futures) {
      values.add(future.join());
    }
    return values;
  }

  @Override
  public abstract void close();

  // ---------------------------------------------------------------- Jeton

  private static final class JetonFleet extends RedisFleet {
    private final String uri;
    private final RedisClient client;
    private final int limit;
    private final @Nullable LeakDetection leaks;
    private final @Nullable RedisSemaphore shared;

    /** {@code leaks}: the handles' leak detection, or null for the default. */
    JetonFleet(String uri, int limit, boolean shareOneHandle, @Nullable LeakDetection leaks) {
      this.uri = uri;
      this.client = RedisClient.create(uri);
      this.limit = limit;
      this.leaks = leaks;
      // With a handle per thread, the first handle opened creates the semaphore (limitIfNew).
      // No handle is opened and closed here: a handle on a caller's client keeps its connections,
      // and its wake-up subscription, open after close() until the client shuts down, and would
      // add a subscriber to every wake-up.
      this.shared = shareOneHandle ? open() : null;
    }

    private RedisSemaphore open() {
      RedisSemaphore.Builder builder =
          RedisSemaphore.builder(NAME).client(client).options(JETON_OPTIONS).limitIfNew(limit);
      if (leaks != null) {
        builder.leakDetection(leaks);
      }
      return builder.open();
    }

    @Override
    Held hold(int permits) {
      // Its own Lettuce client (uri): another member of the fleet, closed with the handle.
      RedisSemaphore holder =
          RedisSemaphore.builder(NAME)
              .uri(uri)
              .options(HOLDER_OPTIONS)
              .limitIfNew(limit)
              .owner("jeton-bench holders")
              .open();
      List<CompletableFuture<Lease>> acquiring = new ArrayList<>(permits);
      for (int i = 0; i < permits; i++) {
        acquiring.add(holder.acquireLeaseAsync(1));
      }
      List<Lease> leases = joinAll(acquiring);
      return () -> {
        try {
          List<CompletableFuture<Boolean>> releasing = new ArrayList<>(leases.size());
          for (Lease lease : leases) {
            releasing.add(lease.releaseAsync());
          }
          joinAll(releasing);
        } finally {
          holder.close();
        }
      };
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
    Held hold(int permits) {
      try {
        semaphore.acquire(permits);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while taking the holders' permits", e);
      }
      return () -> semaphore.release(permits);
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
    Held hold(int permits) {
      List<CompletableFuture<String>> acquiring = new ArrayList<>(permits);
      for (int i = 0; i < permits; i++) {
        acquiring.add(semaphore.acquireAsync(10, TimeUnit.MINUTES).toCompletableFuture());
      }
      List<String> ids = joinAll(acquiring);
      return () -> {
        List<CompletableFuture<Void>> releasing = new ArrayList<>(ids.size());
        for (String id : ids) {
          releasing.add(semaphore.releaseAsync(id).toCompletableFuture());
        }
        joinAll(releasing);
      };
    }

    @Override
    public void close() {
      client.shutdown();
    }
  }

  // ---------------------------------------------------------------- the floor

  private static final class FloorFleet extends RedisFleet {
    private final RedisClient client;
    private final int limit;

    FloorFleet(String uri, int limit) {
      this.client = RedisClient.create(uri);
      this.limit = limit;
      try (StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8)) {
        connection.sync().functionLoad(FLOOR_LIBRARY, true);
      }
    }

    @Override
    Handle handle() {
      StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8);
      RedisAsyncCommands<String, String> commands = connection.async();
      return new Handle() {
        @Override
        public Object acquire() throws InterruptedException {
          return call();
        }

        @Override
        public void release(Object permit) {
          try {
            call();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
        }

        private Long call() throws InterruptedException {
          try {
            return commands.<Long>fcall("jeton_floor", ScriptOutputType.INTEGER, FLOOR_KEY).get();
          } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
          }
        }

        @Override
        @SuppressWarnings("FutureReturnValueIgnored") // fire and forget, as Jeton's release()
        public void releaseNoWait(Object permit) {
          commands.fcall("jeton_floor", ScriptOutputType.INTEGER, FLOOR_KEY);
        }

        @Override
        public void close() {
          connection.close();
        }
      };
    }

    /** No permits to leak: the limit, so that the check after a run passes. */
    @Override
    int available() {
      return limit;
    }

    @Override
    Held hold(int permits) {
      return () -> {};
    }

    @Override
    public void close() {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
  }
}
