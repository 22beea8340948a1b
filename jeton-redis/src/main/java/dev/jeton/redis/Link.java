package dev.jeton.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.AsyncExecutions;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The connections of one {@link RedisSemaphore} handle: one for commands, whose order Redis keeps
 * (a withdrawal sent before a read is seen by it), and one for wake-up messages. Calls the
 * semaphore's Redis function ({@code FCALL}), and loads its library when Redis does not have it
 * (a new server, a restart without persistence, {@code FUNCTION FLUSH}).
 *
 * <p>The library is named after a digest of its code, so that processes running different
 * versions of Jeton against one Redis each call their own. A function, unlike an {@code EVAL}
 * script, is set up once when Redis loads it: its helpers are not made again on every call,
 * which halves the cost of a call on a small machine (decision 23).
 */
final class Link implements AutoCloseable {
  private static final String CODE = loadCode();

  /** The function's name, which is also its library's: {@code jeton_} and a digest of the code. */
  static final String FUNCTION = "jeton_" + digest(CODE);

  /** The library as {@code FUNCTION LOAD} takes it. */
  static final String LIBRARY =
      "#!lua name=" + FUNCTION + "\n" + CODE + "\nredis.register_function('" + FUNCTION
          + "', semaphore)\n";

  /** How long a command may take on a client Jeton creates itself. */
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

  private final @Nullable OwnClient own; // null: the caller's client, which stays open
  private final StatefulConnection<String, String> connection;
  private final RedisClusterAsyncCommands<String, String> commands;
  private final StatefulRedisPubSubConnection<String, String> pubsub;
  private final Map<String, Consumer<String>> listeners = new ConcurrentHashMap<>();

  private Link(
      @Nullable OwnClient own,
      StatefulConnection<String, String> connection,
      RedisClusterAsyncCommands<String, String> commands,
      StatefulRedisPubSubConnection<String, String> pubsub) {
    this.own = own;
    this.connection = connection;
    this.commands = commands;
    this.pubsub = pubsub;
    pubsub.addListener(
        new RedisPubSubAdapter<String, String>() {
          @Override
          public void message(String channel, String message) {
            Consumer<String> listener = listeners.get(channel);
            if (listener != null) {
              listener.accept(message);
            }
          }
        });
  }

  /**
   * Connects to {@code uri}: {@code redis://} or {@code rediss://} (one server), {@code
   * redis-sentinel://} (through Sentinel), or {@code redis-cluster://host:port[,host:port...]}
   * (Redis Cluster; {@code rediss-cluster://} for TLS). The client is Jeton's, closed with the
   * link.
   */
  static Link connect(String uri) {
    List<RedisURI> seeds = clusterSeeds(uri);
    if (seeds != null) {
      // Node connections open lazily, so commands may not be rejected while one is missing:
      // on a cluster, an unreachable node shows as a command timeout instead.
      OwnClient own =
          OwnClient.cluster(
              seeds,
              ClusterClientOptions.builder()
                  .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
                  .build());
      return open(own.client(), own);
    }
    RedisURI parsed;
    try {
      parsed = RedisURI.create(uri);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a Redis URI: '" + uri + "': " + e.getMessage(), e);
    }
    // While disconnected, commands fail at once with the reason, rather than wait for a
    // reconnection: an acquire keeps retrying within its timeout, and fails with that cause.
    OwnClient own =
        OwnClient.standalone(
            parsed,
            ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
                .build());
    return open(own.client(), own);
  }

  /** The seeds of a {@code redis-cluster://} URI, or null if it is another kind. */
  static @Nullable List<RedisURI> clusterSeeds(String uri) {
    String scheme;
    if (uri.startsWith("redis-cluster://")) {
      scheme = "redis://";
    } else if (uri.startsWith("rediss-cluster://")) {
      scheme = "rediss://";
    } else {
      return null;
    }
    String rest = uri.substring(uri.indexOf("://") + 3);
    String userInfo = "";
    int at = rest.lastIndexOf('@');
    if (at >= 0) {
      userInfo = rest.substring(0, at + 1);
      rest = rest.substring(at + 1);
    }
    String path = "";
    int slash = rest.indexOf('/');
    if (slash >= 0) {
      path = rest.substring(slash);
      rest = rest.substring(0, slash);
    }
    List<RedisURI> seeds = new ArrayList<>();
    for (String hostPort : rest.split(",", -1)) {
      if (hostPort.isBlank()) {
        throw new IllegalArgumentException("not a Redis URI: '" + uri + "': empty host");
      }
      seeds.add(RedisURI.create(scheme + userInfo + hostPort + path));
    }
    return seeds;
  }

  /**
   * Opens connections through {@code client}; {@code own}: the client is the link's, closed with
   * it (null: the caller's).
   */
  static Link open(AbstractRedisClient client, @Nullable OwnClient own) {
    try {
      if (client instanceof RedisClusterClient) {
        RedisClusterClient cluster = (RedisClusterClient) client;
        StatefulRedisClusterConnection<String, String> connection =
            cluster.connect(StringCodec.UTF8);
        return new Link(
            own, connection, connection.async(), cluster.connectPubSub(StringCodec.UTF8));
      }
      RedisClient standalone = (RedisClient) client;
      StatefulRedisConnection<String, String> connection = standalone.connect(StringCodec.UTF8);
      return new Link(
          own, connection, connection.async(), standalone.connectPubSub(StringCodec.UTF8));
    } catch (RuntimeException e) {
      if (own != null) {
        awaitClosed(own, own.shutdownAsync());
      }
      throw e;
    }
  }

  /** Calls the function; its reply as Lettuce renders a nested array (Long, String, List). */
  CompletableFuture<List<Object>> run(String[] keys, String[] args) {
    CompletableFuture<List<Object>> reply = new CompletableFuture<>();
    commands
        .<List<Object>>fcall(FUNCTION, ScriptOutputType.MULTI, keys, args)
        .whenComplete(
            (result, failure) -> {
              if (isMissingFunction(failure)) {
                load()
                    .thenCompose(
                        loaded ->
                            commands.<List<Object>>fcall(
                                FUNCTION, ScriptOutputType.MULTI, keys, args))
                    .whenComplete((again, failedAgain) -> settle(reply, again, explain(failedAgain)));
              } else {
                settle(reply, result, explain(failure));
              }
            });
    return reply;
  }

  private static boolean isMissingFunction(@Nullable Throwable failure) {
    return failure instanceof RedisCommandExecutionException
        && String.valueOf(failure.getMessage()).contains("Function not found");
  }

  /** A Redis too old for functions says so in terms of what to do. */
  static @Nullable Throwable explain(@Nullable Throwable failure) {
    if (failure instanceof RedisCommandExecutionException
        && String.valueOf(failure.getMessage()).toLowerCase(java.util.Locale.ROOT)
            .contains("unknown command")) {
      return new RedisCommandExecutionException(
          "Jeton needs Redis 7.0 or later (it runs as a Redis function, FCALL): "
              + failure.getMessage(),
          failure);
    }
    return failure;
  }

  /** Loads the library: on the server, or on every primary of a cluster. */
  private CompletableFuture<?> load() {
    if (connection instanceof StatefulRedisClusterConnection) {
      AsyncExecutions<String> loads =
          ((StatefulRedisClusterConnection<String, String>) connection)
              .async()
              .upstream()
              .commands()
              .functionLoad(LIBRARY, true);
      return CompletableFuture.allOf(loads.futures());
    }
    return commands.functionLoad(LIBRARY, true).toCompletableFuture();
  }

  /** Waits for {@code replicas} replicas to acknowledge what this connection wrote. */
  CompletableFuture<Long> waitForReplicas(int replicas, Duration timeout) {
    return commands.waitForReplication(replicas, timeout.toMillis()).toCompletableFuture();
  }

  private static <T> void settle(
      CompletableFuture<T> future, @Nullable T result, @Nullable Throwable failure) {
    if (failure != null) {
      future.completeExceptionally(failure);
    } else {
      future.complete(result);
    }
  }

  /** Every key matching {@code pattern}, on every primary of a cluster. */
  List<String> keys(String pattern) {
    List<String> found = new ArrayList<>();
    ScanArgs args = ScanArgs.Builder.matches(pattern).limit(1000);
    KeyScanCursor<String> cursor = commands.scan(args).toCompletableFuture().join();
    while (true) {
      found.addAll(cursor.getKeys());
      if (cursor.isFinished()) {
        return found;
      }
      cursor = commands.scan(cursor, args).toCompletableFuture().join();
    }
  }

  /** Calls {@code listener} with each message on {@code channel}. */
  CompletableFuture<Void> subscribe(String channel, Consumer<String> listener) {
    listeners.put(channel, listener);
    return pubsub.async().subscribe(channel).toCompletableFuture();
  }

  /** Drops the messages on {@code channel} from now on, as a broken subscription would. */
  void ignore(String channel) {
    listeners.remove(channel);
  }

  /**
   * Closes both connections, and the client if it is the link's own; the future completes when
   * they have.
   */
  CompletableFuture<Void> closeAsync() {
    OwnClient client = own;
    if (client != null) {
      return client.shutdownAsync(); // closes both connections too
    }
    return CompletableFuture.allOf(pubsub.closeAsync(), connection.closeAsync());
  }

  /** Closes the link and, unless called on one of its threads, waits until it is closed. */
  @Override
  public void close() {
    CompletableFuture<Void> closing = closeAsync();
    awaitClosed(closing);
  }

  /**
   * Waits, unless called on a Netty event loop, for {@code closing} (3 s at most) and then for
   * the threads of the link's own client to end (2 s at most).
   */
  void awaitClosed(CompletableFuture<?> closing) {
    OwnClient client = own;
    if (client != null) {
      awaitClosed(client, closing);
    } else if (!onEventLoop()) {
      Calls.awaitQuietly(closing, Duration.ofSeconds(3));
    }
  }

  private static void awaitClosed(OwnClient client, CompletableFuture<?> closing) {
    if (onEventLoop()) {
      return; // the loop must stay free to close
    }
    Calls.awaitQuietly(closing, Duration.ofSeconds(3));
    try {
      client.awaitThreadsEnded(Duration.ofSeconds(2));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Whether this thread runs a Netty event executor: an I/O thread of any Lettuce client, or one
   * of its event threads. Netty records that for each thread it runs, whatever its name.
   */
  static boolean onEventLoop() {
    return io.netty.util.internal.ThreadExecutorMap.currentExecutor() != null;
  }

  private static String loadCode() {
    try (InputStream in = Link.class.getResourceAsStream("semaphore.lua")) {
      if (in == null) {
        throw new IllegalStateException("semaphore.lua is missing from the jeton-redis jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * 64 bits that change with the code, in hex: its CRC-32C and CRC-32. The name only has to tell
   * versions apart (anyone who can load a function can replace ours anyway); SHA-1 did as well,
   * but its provider's set-up cost 5 ms of every command's start, and these are native.
   */
  static String digest(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(bytes);
    java.util.zip.CRC32 d = new java.util.zip.CRC32();
    d.update(bytes);
    String hex = Long.toHexString(c.getValue() << 32 | d.getValue());
    return "0".repeat(16 - hex.length()) + hex;
  }

}
