package dev.jeton.redis;

import io.lettuce.core.RedisException;
import java.util.List;

/**
 * An answer of {@code rate.lua} that carries the limiter's state: {@code code} ({@code A} reserved,
 * {@code W} would wait too long, {@code O} opened, {@code R} rate set), the wait from Redis's now,
 * the theoretical arrival time after the call, the limiter's rate and Redis's time.
 */
record RateReply(
    char code, long waitMicros, long tatMicros, long tatFraction, RedisRate rate, long nowMicros) {

  /** The one string {@code rate.lua} answers with. */
  static String text(List<Object> reply) {
    if (reply.size() != 1 || !(reply.get(0) instanceof String)) {
      throw new RedisException("the rate limiter's function answered " + reply);
    }
    return (String) reply.get(0);
  }

  /**
   * Reads an answer with state.
   *
   * @throws IllegalStateException if Redis answered that there is no such limiter ({@code N})
   * @throws RedisException if the answer does not read
   */
  static RateReply parse(List<Object> reply, String key) {
    String text = text(reply);
    if (text.equals("N")) {
      throw new IllegalStateException(
          "there is no rate limiter " + key + " in Redis: give the builder a rate to create it");
    }
    String[] f = text.split(" ", -1);
    try {
      if (f.length != 11 || f[0].length() != 1) {
        throw new NumberFormatException(text);
      }
      RedisRate rate =
          new RedisRate(
              Long.parseLong(f[4]),
              Long.parseLong(f[5]),
              Long.parseLong(f[6]),
              Long.parseLong(f[7]),
              Long.parseLong(f[8]),
              Integer.parseInt(f[9]));
      return new RateReply(
          f[0].charAt(0),
          Long.parseLong(f[1]),
          Long.parseLong(f[2]),
          Long.parseLong(f[3]),
          rate,
          Long.parseLong(f[10]));
    } catch (NumberFormatException e) {
      throw new RedisException("the rate limiter's function answered '" + text + "'", e);
    }
  }
}
