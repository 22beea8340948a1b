package dev.jeton.redis;

import dev.jeton.LeakDetection;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import dev.jeton.SemaphoreStats;
import dev.jeton.internal.Arguments;
import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.ThisProcess;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore shared by every process of a fleet through Redis. Its permits are {@link Lease
 * leases}: they expire on the Redis server's clock unless renewed, are renewed in the background
 * while held, and carry fencing tokens.
 *
 * <pre>{@code
 * try (RedisSemaphore deploys =
 *     RedisSemaphore.builder("deploys").uri("redis://localhost:6379").limitIfNew(2).open()) {
 *   try (Lease lease = deploys.acquire(1)) {
 *     lease.lost().thenRun(() -> System.err.println("lease lost: stop"));
 *     deploy(lease.fencingTokens());
 *   }
 * }
 * }</pre>
 *
 * <p>How it works (the state in Redis, request ids, wake-ups and polls, quarantine, replica
 * acknowledgements) is in the {@linkplain dev.jeton.redis package documentation}.
 *
 * <h2>Handles</h2>
 *
 * <p>Each {@code RedisSemaphore} is one handle with its own two connections (commands, wake-ups).
 * {@link #close()} closes the handle: its queued requests fail, held leases stay held (and renewed)
 * until released, and the connections close when the last one is.
 */
public final class RedisSemaphore implements Semaphore {
  /*
   * The parts of a handle, who calls whom, and its life are mapped in Handle: this class is the
   * public API and its builder, and delegates to them.
   */

  private final String name;
  private final RedisSemaphoreOptions options;
  private final Handle handle;
  private final Acquisitions acquisitions;

  private RedisSemaphore(String name, RedisSemaphoreOptions options, Handle handle) {
    this.name = name;
    this.options = options;
    this.handle = handle;
    this.acquisitions = new Acquisitions(handle.calls, handle.requests);
  }

  /**
   * Starts building a handle on the semaphore {@code name}.
   *
   * @param name the semaphore's name: letters, digits, {@code .}, {@code _} and {@code -}
   * @return a builder
   * @throws IllegalArgumentException if the name breaks that rule
   */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** Builds a {@link RedisSemaphore} handle: where Redis is, the limit, and the options. */
  public static final class Builder {
    private final String name;
    private @Nullable String uri;
    private @Nullable AbstractRedisClient client;
    private boolean jedis;
    private RedisSemaphoreOptions options = RedisSemaphoreOptions.defaults();
    private int limit = -1;
    private int limitIfNew = -1;
    private String owner = ThisProcess.command();
    private Executor completionExecutor = ForkJoinPool.commonPool();
    private @Nullable LeakDetection leakDetection;
    private boolean releaseLeaked;

    private Builder(String name) {
      this.name = RedisSemaphoreOptions.checkKeyPart("name", name);
    }

    /**
     * Where Redis is: {@code redis://[user:password@]host:port[/db]} or {@code rediss://} (one
     * server), {@code redis-sentinel://host:port[,host:port]/db#primary} (through Sentinel), or
     * {@code redis-cluster://host:port[,host:port...]} (Redis Cluster; {@code rediss-cluster://}
     * with TLS). The handle creates its own Lettuce client and closes it with itself.
     *
     * @param redisUri the Redis URI
     * @return this builder
     */
    public Builder uri(String redisUri) {
      this.uri = Objects.requireNonNull(redisUri, "uri");
      this.client = null;
      this.jedis = false;
      return this;
    }

    /**
     * Opens the connections to the {@link #uri} with Jedis instead of Lettuce, for a short-lived
     * process (a command, a batch job): a fresh JVM opens a handle through Jedis several times
     * faster and with a third of the CPU. The price: a handle's calls go to Redis one at a time
     * (Lettuce pipelines them), so it suits a process that holds a few permits, not a server taking
     * thousands a second. Jedis ({@code redis.clients:jedis}) must be on the class path; the URI
     * must be {@code redis://[[user]:password@]host[:port][/db]} (Sentinel, Cluster, TLS and Unix
     * sockets need the default client).
     *
     * @return this builder
     */
    public Builder jedis() {
      this.jedis = true;
      return this;
    }

    /**
     * Connects through {@code redisClient}, which the caller keeps and closes.
     *
     * @param redisClient a Lettuce client of one server or Sentinel
     * @return this builder
     */
    public Builder client(RedisClient redisClient) {
      this.client = Objects.requireNonNull(redisClient, "client");
      this.uri = null;
      this.jedis = false;
      return this;
    }

    /**
     * Connects to Redis Cluster through {@code clusterClient}, which the caller keeps and closes.
     *
     * @param clusterClient a Lettuce Redis Cluster client
     * @return this builder
     */
    public Builder client(RedisClusterClient clusterClient) {
      this.client = Objects.requireNonNull(clusterClient, "client");
      this.uri = null;
      this.jedis = false;
      return this;
    }

    /**
     * How the handle uses Redis: lease time, renewal, polling and the rest (default: {@link
     * RedisSemaphoreOptions#defaults()}).
     *
     * @param redisOptions the options
     * @return this builder
     */
    public Builder options(RedisSemaphoreOptions redisOptions) {
      this.options = Objects.requireNonNull(redisOptions, "options");
      return this;
    }

    /**
     * The limit the semaphore must have: it is created with it if new; if it exists with another
     * limit, {@link #open()} fails (change a limit with {@link RedisSemaphore#setLimit(int)}).
     *
     * @param permits the limit, 0 to 2^30-1
     * @return this builder
     */
    public Builder limit(int permits) {
      this.limit = Calls.checkLimit(permits);
      this.limitIfNew = -1;
      return this;
    }

    /**
     * The limit to create the semaphore with if it does not exist; an existing one keeps its.
     *
     * @param permits the limit, 0 to 2^30-1
     * @return this builder
     */
    public Builder limitIfNew(int permits) {
      this.limitIfNew = Calls.checkLimit(permits);
      this.limit = -1;
      return this;
    }

    /**
     * Who this handle's holders and waiters say they are (default: the command line).
     *
     * @param description any text; tabs and line breaks become spaces, and only its first 120
     *     characters are kept
     * @return this builder
     */
    public Builder owner(String description) {
      this.owner = Objects.requireNonNull(description, "owner");
      return this;
    }

    /**
     * Where asynchronous requests, releases and loss notices complete (default: the common
     * fork-join pool), so that a callback that blocks never holds up Lettuce's I/O threads. A
     * future that a thread waits for in {@code get} or {@code join} completes on that thread.
     *
     * @param executor the executor
     * @return this builder
     */
    public Builder completionExecutor(Executor executor) {
      this.completionExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * How closely this handle's leases are watched for leaks (see {@link LeakDetection}): a lease
     * that the garbage collector finds unreachable while held is reported. Beside a round trip to
     * Redis a watch costs nothing worth sparing, so each level watches more than in process: {@code
     * SAMPLED} (the default, or the system property {@code jeton.leakDetection}) watches every
     * lease and records the stack of one in 1,024; {@code PARANOID} records every stack.
     *
     * @param level the level
     * @return this builder
     */
    public Builder leakDetection(LeakDetection level) {
      this.leakDetection = Objects.requireNonNull(level, "level");
      return this;
    }

    /**
     * Whether a lease reported leaked is released (true): its renewals stop and Redis frees its
     * permits at once. By default (false) it stays held and renewed while this process runs: an
     * unreachable lease is no proof that the work it guarded is done.
     *
     * @param release whether to release leaked leases
     * @return this builder
     */
    public Builder releaseLeaked(boolean release) {
      this.releaseLeaked = release;
      return this;
    }

    /**
     * Connects and opens the handle. With neither {@link #limit} nor {@link #limitIfNew}, the
     * semaphore must exist.
     *
     * @return the open handle
     * @throws IllegalArgumentException if the semaphore exists with another limit than {@link
     *     #limit}, or does not exist and no limit was given; if no Redis URI or client was given,
     *     or the URI is bad
     * @throws io.lettuce.core.RedisException if Redis cannot be reached
     */
    public RedisSemaphore open() {
      return open(null);
    }

    /**
     * {@link #open()}, with the replica acknowledgement waits answered by {@code replicaWaiter}
     * (tests) instead of Redis's {@code WAIT} (null).
     */
    RedisSemaphore open(ReplicaAcks.@Nullable Waiter replicaWaiter) {
      Handle handle =
          new Handle(
              name,
              options,
              Link.open(uri, client, jedis),
              Math.max(limit, limitIfNew),
              owner,
              completionExecutor,
              LeakTracker.ofRoundTrips(
                  leakDetection, releaseLeaked, "Redis semaphore '" + name + "'"),
              replicaWaiter);
      handle.start(limit);
      return new RedisSemaphore(name, options, handle);
    }
  }

  // ---------------------------------------------------------------- Semaphore

  @Override
  public Lease acquire(int permits) throws InterruptedException {
    try {
      return acquisitions.acquire(permits, null);
    } catch (TimeoutException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Lease acquire(int permits, Duration timeout)
      throws InterruptedException, TimeoutException {
    Arguments.toNanos(timeout);
    return acquisitions.acquire(permits, timeout);
  }

  /**
   * {@inheritDoc}
   *
   * @throws SemaphoreQuarantinedException if the semaphore is in quarantine after Redis lost its
   *     state: nothing can be granted before the time it names, however many permits are free
   * @throws io.lettuce.core.RedisException if Redis cannot be reached
   */
  @Override
  public Optional<Permit> tryAcquire(int permits) {
    return tryAcquireLease(permits).map(lease -> lease);
  }

  /**
   * {@link #tryAcquire(int)}, typed as a lease.
   *
   * @param permits how many permits, 1 to the limit
   * @return the lease, or empty if the request would have had to wait
   * @throws IllegalArgumentException if {@code permits} is below 1 or above the limit
   * @throws SemaphoreClosedException if this handle is closed
   * @throws SemaphoreQuarantinedException if the semaphore is in quarantine
   * @throws io.lettuce.core.RedisException if Redis cannot be reached
   */
  public Optional<Lease> tryAcquireLease(int permits) {
    return acquisitions.tryAcquire(permits);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Returns at once, without waiting for Redis. The limit {@code permits} is checked against is
   * the one this handle last saw (every reply from Redis brings it); to rely on a limit raised
   * through another handle, read it first with {@link #limit()}. Use {@link
   * #acquireLeaseAsync(int)} for a future typed as a {@link Lease}.
   */
  @Override
  public CompletableFuture<Permit> acquireAsync(int permits) {
    return widen(acquireLeaseAsync(permits));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Returns at once, as {@link #acquireAsync(int)} does. A zero timeout is a try: one call to
   * Redis, never queued, and the future fails with a {@code TimeoutException} without a cause if no
   * permit was free. A {@code TimeoutException} with a cause says why nothing could be granted:
   * Redis could not be reached (the cause is its failure), or the semaphore is in quarantine
   * ({@link SemaphoreQuarantinedException}; a waiter with a longer timeout is queued, and fails so
   * only if its timeout runs out before the quarantine ends). Use {@link #acquireLeaseAsync(int,
   * Duration)} for a future typed as a {@link Lease}.
   */
  @Override
  public CompletableFuture<Permit> acquireAsync(int permits, Duration timeout) {
    return widen(acquireLeaseAsync(permits, timeout));
  }

  /**
   * {@link #acquireAsync(int)}, typed as a lease: waits as long as it takes.
   *
   * @param permits how many permits, 1 to the limit
   * @return a future of the lease, which fails as {@link #acquireAsync(int)} says
   * @throws IllegalArgumentException at once if {@code permits} is below 1 or above the limit this
   *     handle last saw
   */
  public CompletableFuture<Lease> acquireLeaseAsync(int permits) {
    return acquisitions.acquireAsync(permits, null);
  }

  /**
   * {@link #acquireAsync(int, Duration)}, typed as a lease.
   *
   * @param permits how many permits, 1 to the limit
   * @param timeout how long to wait before the future fails with {@link TimeoutException}
   * @return a future of the lease, which fails as {@link #acquireAsync(int, Duration)} says
   * @throws IllegalArgumentException at once if {@code permits} is below 1 or above the limit this
   *     handle last saw, or {@code timeout} is negative
   */
  public CompletableFuture<Lease> acquireLeaseAsync(int permits, Duration timeout) {
    Arguments.toNanos(timeout);
    return acquisitions.acquireAsync(permits, timeout);
  }

  @SuppressWarnings("unchecked") // a future of leases is a future of permits: only leases go in
  private static CompletableFuture<Permit> widen(CompletableFuture<Lease> future) {
    return (CompletableFuture<Permit>) (CompletableFuture<?>) future;
  }

  @Override
  public int limit() {
    return handle.calls.await(handle.calls.call("counts")).limit;
  }

  @Override
  public int available() {
    Reply reply = handle.calls.await(handle.calls.call("counts"));
    return reply.limit - reply.used;
  }

  @Override
  public int queueLength() {
    return handle.calls.await(handle.calls.call("counts")).queued;
  }

  @Override
  public void setLimit(int limit) {
    Calls.checkLimit(limit);
    handle.calls.await(handle.calls.callCreating("limit", limit, Integer.toString(limit)));
  }

  @Override
  public CompletableFuture<Void> awaitIdle() {
    return handle.requests.submit(0, false, null);
  }

  /**
   * Closes this handle: its queued requests fail with {@link SemaphoreClosedException} and it takes
   * no new ones; {@link #awaitIdle()} waiters keep waiting. Leases held stay held, and renewed,
   * until released; the connections close after the last one.
   *
   * <p>Waits (up to 5 seconds) until Redis has answered the withdrawals and releases this handle
   * has sent, so that a process may exit right after; when no lease is held, also until the
   * connections have closed and the threads of a client the handle opened itself have ended (up to
   * 5 more seconds). It does not wait when called on a thread of the handle's client (with Lettuce,
   * any Netty event loop, whatever the client's resources name it; with Jedis, the handle's command
   * and wake-up threads), which must stay free to read those answers.
   */
  @Override
  public void close() {
    handle.close();
  }

  /** Statistics are not kept for the Redis semaphore. */
  @Override
  public Optional<SemaphoreStats> stats() {
    return Optional.empty();
  }

  // ---------------------------------------------------------------- Redis-specific

  /** {@return the semaphore's name} */
  public String name() {
    return name;
  }

  /** {@return the options this handle was opened with} */
  public RedisSemaphoreOptions options() {
    return options;
  }

  /**
   * Lists the semaphores in a Redis: the keys of their states, less any whose name no semaphore can
   * have (a key someone else made).
   *
   * @param redisUri where Redis is, as {@link Builder#uri(String)} takes it
   * @param options whose key prefix to look under
   * @return the names of the semaphores there, sorted
   */
  public static List<String> list(String redisUri, RedisSemaphoreOptions options) {
    return Listing.names(LettuceLink.connect(redisUri), options);
  }

  /**
   * {@link #list}, through Jedis: as {@link Builder#jedis()}, for a short-lived process.
   *
   * @param redisUri where Redis is: {@code redis://[[user]:password@]host[:port][/db]}
   * @param options whose key prefix to look under
   * @return the names of the semaphores there, sorted
   */
  public static List<String> listWithJedis(String redisUri, RedisSemaphoreOptions options) {
    return Listing.names(Link.jedis(redisUri), options);
  }

  /** {@return who holds permits now and who waits, oldest first, as Redis sees it} */
  public Status status() {
    Reply reply = handle.calls.await(handle.calls.call("status"));
    return new Status(name, reply.limit, reply.used, reply.leaseInfos(0), reply.leaseInfos(1));
  }

  /**
   * A snapshot of a Redis semaphore.
   *
   * @param name its name
   * @param limit its limit
   * @param held the permits held in all
   * @param holders who holds them, soonest expiry first
   * @param waiters who waits, in queue order
   */
  public record Status(
      String name, int limit, int held, List<LeaseInfo> holders, List<LeaseInfo> waiters) {}

  @Override
  public String toString() {
    return "RedisSemaphore[name="
        + name
        + ", prefix="
        + options.keyPrefix()
        + (handle.requests.isClosed() ? ", closed]" : "]");
  }

  /** The parts, for tests (RedisSemaphores, on the test side): nothing here calls this. */
  Handle handle() {
    return handle;
  }
}
