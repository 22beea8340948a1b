package dev.jeton.redis;

import io.lettuce.core.RedisCommandExecutionException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Jeton's Redis function library: the semaphore ({@code semaphore.lua}, then {@code repair.lua})
 * and the rate limiter ({@code rate.lua}); its code, its names, and what its errors mean, for every
 * {@link Link}.
 *
 * <p>The library is named after a digest of its code, so that processes running different versions
 * of Jeton against one Redis each call their own. A function, unlike an {@code EVAL} script, is set
 * up once when Redis loads it: its helpers are not made again on every call, which halves the cost
 * of a call on a small machine (decision 23).
 */
final class Library {
  private static final String CODE =
      loadCode("semaphore.lua") + "\n" + loadCode("repair.lua") + "\n" + loadCode("rate.lua");

  /** The function's name, which is also its library's: {@code jeton_} and a digest of the code. */
  static final String FUNCTION = "jeton_" + digest(CODE);

  /** The rate limiter's function ({@code rate.lua}), in the same library. */
  static final String RATE_FUNCTION = FUNCTION + "_rate";

  /** The library as {@code FUNCTION LOAD} takes it. */
  static final String LIBRARY =
      "#!lua name="
          + FUNCTION
          + "\n"
          + CODE
          + "\nredis.register_function('"
          + FUNCTION
          + "', semaphore)\nredis.register_function('"
          + RATE_FUNCTION
          + "', rate)\n";

  private Library() {}

  /** Whether {@code failure} says that Redis does not have the function: load it, call again. */
  static boolean isMissingFunction(@Nullable Throwable failure) {
    return failure instanceof RedisCommandExecutionException
        && String.valueOf(failure.getMessage()).contains("Function not found");
  }

  /**
   * Whether {@code failure} says that the semaphore's stored limit is damaged: a handle still
   * opens, so that {@code setLimit} can repair it (semaphore.lua, Damage).
   */
  static boolean isDamagedLimit(Throwable failure) {
    return failure instanceof RedisCommandExecutionException
        && String.valueOf(failure.getMessage()).contains("has a damaged limit");
  }

  /** A Redis too old for functions says so in terms of what to do. */
  static @Nullable Throwable explain(@Nullable Throwable failure) {
    if (failure instanceof RedisCommandExecutionException
        && String.valueOf(failure.getMessage())
            .toLowerCase(java.util.Locale.ROOT)
            .contains("unknown command")) {
      return new RedisCommandExecutionException(
          "Jeton needs Redis 7.0 or later (it runs as a Redis function, FCALL): "
              + failure.getMessage(),
          failure);
    }
    return failure;
  }

  /**
   * 64 bits that change with the code, in hex: its CRC-32C and CRC-32. The name only has to tell
   * versions apart (anyone who can load a function can replace ours anyway); SHA-1 did as well, but
   * its provider's set-up cost 5 ms of every command's start, and these are native.
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

  private static String loadCode(String resource) {
    try (InputStream in = Library.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(resource + " is missing from the jeton-redis jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
