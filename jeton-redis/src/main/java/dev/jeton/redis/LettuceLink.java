package dev.jeton.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Link} over Lettuce: one connection for commands, whose order Redis keeps (a withdrawal
 * sent before a read is seen by it), and one for wake-up messages, both through a client of the
 * caller's or one of the link's own. Loads the function's library when Redis does not have it (a
 * new server, a restart without persistence, {@code FUNCTION FLUSH}), on every primary of a
 * cluster.
 */
final class LettuceLink implements Link {

  private final @Nullable OwnClient own; // null: the caller's client, which stays open
  private final StatefulConnection<String, String> connection;
  private final RedisClusterAsyncCommands<String, String> commands;
  private final StatefulRedisPubSubConnection<String, String> pubsub;
  private final Map<String, Consumer<String>> listeners = new ConcurrentHashMap<>();

  private LettuceLink(
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
  static LettuceLink connect(String uri) {
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
   * Opens connections through {@code client}; {@code own}: the client is the link's, closed with it
   * (null: the caller's).
   */
  static LettuceLink open(AbstractRedisClient client, @Nullable OwnClient own) {
    try {
      if (client instanceof RedisClusterClient) {
        RedisClusterClient cluster = (RedisClusterClient) client;
        StatefulRedisClusterConnection<String, String> connection =
            cluster.connect(StringCodec.UTF8);
        return new LettuceLink(
            own, connection, connection.async(), cluster.connectPubSub(StringCodec.UTF8));
      }
      RedisClient standalone = (RedisClient) client;
      StatefulRedisConnection<String, String> connection = standalone.connect(StringCodec.UTF8);
      return new LettuceLink(
          own, connection, connection.async(), standalone.connectPubSub(StringCodec.UTF8));
    } catch (RuntimeException e) {
      if (own != null) {
        awaitClosed(own, own.shutdownAsync());
      }
      throw e;
    }
  }

  @Override
  public CompletableFuture<List<Object>> run(String function, String[] keys, String[] args) {
    CompletableFuture<List<Object>> reply = new CompletableFuture<>();
    commands
        .<List<Object>>fcall(function, ScriptOutputType.MULTI, keys, args)
        .whenComplete(
            (result, failure) -> {
              if (Library.isMissingFunction(failure)) {
                load()
                    .thenCompose(
                        loaded ->
                            commands.<List<Object>>fcall(
                                function, ScriptOutputType.MULTI, keys, args))
                    .whenComplete(
                        (again, failedAgain) -> settle(reply, again, Library.explain(failedAgain)));
              } else {
                settle(reply, result, Library.explain(failure));
              }
            });
    return reply;
  }

  /** Loads the library: on the server, or on every primary of a cluster. */
  private CompletableFuture<?> load() {
    if (connection instanceof StatefulRedisClusterConnection) {
      AsyncExecutions<String> loads =
          ((StatefulRedisClusterConnection<String, String>) connection)
              .async()
              .upstream()
              .commands()
              .functionLoad(Library.LIBRARY, true);
      return CompletableFuture.allOf(loads.futures());
    }
    return commands.functionLoad(Library.LIBRARY, true).toCompletableFuture();
  }

  @Override
  public CompletableFuture<Long> waitForReplicas(int replicas, Duration timeout) {
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

  @Override
  public List<String> keys(String pattern) {
    List<String> found = new ArrayList<>();
    ScanArgs args = ScanArgs.Builder.matches(pattern).limit(1000);
    KeyScanCursor<String> cursor = joined(commands.scan(args));
    while (true) {
      found.addAll(cursor.getKeys());
      if (cursor.isFinished()) {
        return found;
      }
      cursor = joined(commands.scan(cursor, args));
    }
  }

  /** A reply, or its failure unwrapped; an Error (out of memory on a huge key) as Redis's. */
  private static <T> T joined(java.util.concurrent.CompletionStage<T> reply) {
    try {
      return Calls.join(reply.toCompletableFuture());
    } catch (Error e) {
      throw Calls.failedInThisProcess(e);
    }
  }

  @Override
  public CompletableFuture<Void> subscribe(String channel, Consumer<String> listener) {
    listeners.put(channel, listener);
    return pubsub.async().subscribe(channel).toCompletableFuture();
  }

  @Override
  public void ignore(String channel) {
    listeners.remove(channel);
  }

  /** Closes both connections, and the client if it is the link's own. */
  @Override
  public CompletableFuture<Void> closeAsync() {
    OwnClient client = own;
    if (client != null) {
      return client.shutdownAsync(); // closes both connections too
    }
    return CompletableFuture.allOf(pubsub.closeAsync(), connection.closeAsync());
  }

  /**
   * Waits, unless called on a Netty event loop, for {@code closing} (3 s at most) and then for the
   * threads of the link's own client to end (2 s at most).
   */
  @Override
  public void awaitClosed(CompletableFuture<?> closing) {
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
   * Whether this thread runs a Netty event executor: an I/O thread of any Lettuce client, or one of
   * its event threads. Netty records that for each thread it runs, whatever its name.
   */
  @Override
  public boolean onItsThread() {
    return onEventLoop();
  }

  static boolean onEventLoop() {
    return io.netty.util.internal.ThreadExecutorMap.currentExecutor() != null;
  }
}
