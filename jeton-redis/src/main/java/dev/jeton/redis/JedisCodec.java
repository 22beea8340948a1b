package dev.jeton.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * What {@link JedisLink} takes from and gives to Jedis, in the terms the rest of the package knows
 * (Lettuce's): the URIs it takes, replies rendered as Lettuce renders them, failures as Lettuce's
 * exceptions.
 */
final class JedisCodec {
  private JedisCodec() {}

  /** Whether {@code uri} is one that {@link JedisLink#connect} takes. */
  static boolean takes(String uri) {
    try {
      parse(uri);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  static URI parse(String uri) {
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("not a Redis URI: '" + uri + "': " + e.getMessage(), e);
    }
    if (!"redis".equals(parsed.getScheme())
        || parsed.getQuery() != null
        || parsed.getFragment() != null) {
      throw new IllegalArgumentException(
          "Jedis takes redis://[[user]:password@]host[:port][/db] URIs only, not '"
              + uri
              + "': use the default client (Lettuce) for TLS, Sentinel, Cluster or options");
    }
    String path = parsed.getPath();
    if (parsed.getHost() == null
        || !JedisURIHelper.isValid(parsed)
        || !(path == null || path.isEmpty() || path.matches("/\\d*"))) {
      throw new IllegalArgumentException(
          "not a Redis URI: '" + uri + "': expected redis://[[user]:password@]host[:port][/db]");
    }
    return parsed;
  }

  /**
   * The function's reply as Lettuce renders it with {@code ScriptOutputType.MULTI}: an array as a
   * List, a single value (the function answers most calls with one string) as a List of it.
   */
  static List<Object> functionReply(Object raw) {
    Object rendered = rendered(raw);
    if (rendered instanceof List) {
      @SuppressWarnings("unchecked")
      List<Object> list = (List<Object>) rendered;
      return list;
    }
    List<Object> single = new ArrayList<>(1);
    single.add(rendered);
    return single;
  }

  /** A reply as Lettuce renders it: bulk strings as Strings, arrays as Lists. */
  @SuppressWarnings("unchecked")
  static List<Object> list(Object raw) {
    Object rendered = rendered(raw);
    if (!(rendered instanceof List)) {
      throw new RedisException("Redis answered " + rendered + " where an array was expected");
    }
    return (List<Object>) rendered;
  }

  private static @Nullable Object rendered(@Nullable Object raw) {
    if (raw instanceof byte[]) {
      return new String((byte[]) raw, StandardCharsets.UTF_8);
    }
    if (raw instanceof List) {
      List<Object> out = new ArrayList<>(((List<?>) raw).size());
      for (Object element : (List<?>) raw) {
        out.add(rendered(element));
      }
      return out;
    }
    if (raw instanceof JedisDataException) {
      throw (JedisDataException) raw; // an error inside an array
    }
    return raw; // Long, or null (a nil)
  }

  /** Jedis's failures as Lettuce's, which the rest of the package and its users know. */
  static RuntimeException translate(JedisException e) {
    if (e instanceof JedisDataException) {
      return new RedisCommandExecutionException(e.getMessage(), e);
    }
    if (e instanceof JedisConnectionException) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof SocketTimeoutException) {
          return new RedisCommandTimeoutException(
              "Command timed out after " + Link.COMMAND_TIMEOUT.toSeconds() + " second(s)");
        }
      }
      return new RedisConnectionException(e.getMessage(), e);
    }
    return new RedisException(e.getMessage(), e);
  }
}
