package dev.jeton.redis;

import io.lettuce.core.AbstractRedisClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The connections of one {@link RedisSemaphore} handle to Redis: one for commands, whose order
 * Redis keeps (a withdrawal sent before a read is seen by it), and one for wake-up messages. Two
 * kinds: {@link LettuceLink} (the default: asynchronous, pipelined, any deployment) and {@link
 * JedisLink} (one command at a time, a server or a primary, but a process starts it in a fraction
 * of the time, decision 62).
 *
 * <p>Replies are rendered as Lettuce renders a nested array: {@code Long}, {@code String}, {@code
 * List}; failures as Lettuce's exceptions ({@code RedisConnectionException} when Redis cannot be
 * reached, {@code RedisCommandExecutionException} for an error reply, {@code
 * RedisCommandTimeoutException}), whichever the client.
 */
interface Link extends AutoCloseable {
  /** How long a command may take on a client Jeton creates itself. */
  Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Opens the link a builder describes: through {@code client} if not null (which the caller keeps
   * and closes), else to {@code redisUri} with a client of its own, Jedis's if {@code jedis}.
   */
  static Link open(@Nullable String redisUri, @Nullable AbstractRedisClient client, boolean jedis) {
    if (client != null) {
      return LettuceLink.open(client, null);
    } else if (redisUri != null && jedis) {
      return jedis(redisUri);
    } else if (redisUri != null) {
      return LettuceLink.connect(redisUri);
    }
    throw new IllegalArgumentException("where is Redis? call uri(...) or client(...)");
  }

  /**
   * Connects to {@code redisUri} through Jedis ({@link RedisSemaphore.Builder#jedis()}), saying how
   * to put Jedis on the path if it is missing.
   */
  static Link jedis(String redisUri) {
    try {
      Class.forName("redis.clients.jedis.Connection", false, Link.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(
          "jedis() needs Jedis (redis.clients:jedis) on the class path, or on the module path"
              + " with --add-modules redis.clients.jedis; or leave jedis() out",
          e);
    }
    return JedisLink.connect(redisUri);
  }

  /**
   * Calls the semaphore's function ({@link Library}), loading the library first if Redis does not
   * have it.
   */
  default CompletableFuture<List<Object>> run(String[] keys, String[] args) {
    return run(Library.FUNCTION, keys, args);
  }

  /**
   * Calls {@code function} of the library ({@link Library#FUNCTION} or {@link
   * Library#RATE_FUNCTION}), loading the library first if Redis does not have it.
   */
  CompletableFuture<List<Object>> run(String function, String[] keys, String[] args);

  /** Waits for {@code replicas} replicas to acknowledge what the command connection wrote. */
  CompletableFuture<Long> waitForReplicas(int replicas, Duration timeout);

  /** Every key matching {@code pattern} (on every primary of a cluster). */
  List<String> keys(String pattern);

  /** Calls {@code listener} with each message on {@code channel}, from when the future is done. */
  CompletableFuture<Void> subscribe(String channel, Consumer<String> listener);

  /** Drops the messages on {@code channel} from now on, as a broken subscription would. */
  void ignore(String channel);

  /** Closes the connections, and the client if it is the link's own. */
  CompletableFuture<Void> closeAsync();

  /**
   * Waits, unless called on one of the link's own threads, for {@code closing} and then for the
   * threads of the link's own client to end, a few seconds at most.
   */
  void awaitClosed(CompletableFuture<?> closing);

  /** Whether the calling thread is one that the link's replies and messages arrive on. */
  boolean onItsThread();

  /** Closes the link and, unless called on one of its threads, waits until it is closed. */
  @Override
  default void close() {
    awaitClosed(closeAsync());
  }
}
