package dev.jeton.redis;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lettuce.core.RedisChannelWriter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.StatefulRedisConnectionImpl;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.json.JsonParser;
import io.lettuce.core.protocol.PushHandler;
import io.lettuce.core.pubsub.PubSubEndpoint;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnectionImpl;
import io.lettuce.core.pubsub.api.sync.RedisPubSubCommands;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The client Jeton opens for a {@code redis://}, {@code rediss://} or {@code redis-sentinel://}
 * URI: Lettuce's own, except that each connection makes its blocking command interface when it is
 * first asked for, not when the connection is made.
 *
 * <p>Why: Lettuce builds that interface (a proxy that maps each of some 400 command methods onto
 * the asynchronous ones, by reflection) in every connection's constructor. Jeton never uses it, and
 * in a fresh JVM it was about three quarters of the time to open a handle: a {@code jeton run
 * --redis} spent some 250 of its 400 ms there (JFR, decision 60). Lettuce provides these factory
 * methods to be overridden; the connections stay Lettuce's classes.
 */
final class LeanRedisClient extends RedisClient {
  LeanRedisClient(@Nullable ClientResources resources, RedisURI uri) {
    super(resources, uri);
  }

  @Override
  protected <K, V> StatefulRedisConnectionImpl<K, V> newStatefulRedisConnection(
      RedisChannelWriter channelWriter,
      PushHandler pushHandler,
      RedisCodec<K, V> codec,
      Duration timeout) {
    return new Connection<>(
        channelWriter, pushHandler, codec, timeout, getOptions().getJsonParser());
  }

  @Override
  protected <K, V> StatefulRedisPubSubConnectionImpl<K, V> newStatefulRedisPubSubConnection(
      PubSubEndpoint<K, V> endpoint,
      RedisChannelWriter channelWriter,
      RedisCodec<K, V> codec,
      Duration timeout) {
    return new PubSubConnection<>(endpoint, channelWriter, codec, timeout);
  }

  /** A connection whose blocking interface is made on first use. */
  private static final class Connection<K, V> extends StatefulRedisConnectionImpl<K, V> {
    private final Lazily<RedisCommands<K, V>> blocking =
        new Lazily<>(super::newRedisSyncCommandsImpl);

    Connection(
        RedisChannelWriter writer,
        PushHandler pushHandler,
        RedisCodec<K, V> codec,
        Duration timeout,
        Supplier<JsonParser> parser) {
      super(writer, pushHandler, codec, timeout, parser);
    }

    @Override
    @SuppressWarnings("NullAway") // called by the super constructor; sync() stands in for it
    protected @Nullable RedisCommands<K, V> newRedisSyncCommandsImpl() {
      return null;
    }

    @Override
    public RedisCommands<K, V> sync() {
      return blocking.get();
    }
  }

  /** A publish/subscribe connection whose blocking interface is made on first use. */
  private static final class PubSubConnection<K, V>
      extends StatefulRedisPubSubConnectionImpl<K, V> {
    private final Lazily<RedisPubSubCommands<K, V>> blocking =
        new Lazily<>(super::newRedisSyncCommandsImpl);

    PubSubConnection(
        PubSubEndpoint<K, V> endpoint,
        RedisChannelWriter writer,
        RedisCodec<K, V> codec,
        Duration timeout) {
      super(endpoint, writer, codec, timeout);
    }

    @Override
    @SuppressWarnings("NullAway") // called by the super constructor; sync() stands in for it
    protected @Nullable RedisPubSubCommands<K, V> newRedisSyncCommandsImpl() {
      return null;
    }

    @Override
    public RedisPubSubCommands<K, V> sync() {
      return blocking.get();
    }
  }

  /** A value made by the first {@link #get}. */
  private static final class Lazily<T> {
    private final Supplier<T> make;

    @GuardedBy("this")
    private @Nullable T made;

    Lazily(Supplier<T> make) {
      this.make = make;
    }

    synchronized T get() {
      T value = made;
      if (value == null) {
        value = make.get();
        made = value;
      }
      return value;
    }
  }
}
