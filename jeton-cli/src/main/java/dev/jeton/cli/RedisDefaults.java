package dev.jeton.cli;

import dev.jeton.redis.RedisSemaphoreOptions;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The Redis side of the command line, kept apart so that the machine-wide commands never load
 * Lettuce (it adds start-up time).
 */
final class RedisDefaults {
  static final String KEY_PREFIX = RedisSemaphoreOptions.DEFAULT_KEY_PREFIX;

  /**
   * Lettuce and Netty log through java.util.logging here (Netty ignores slf4j's no-op binding).
   * The command reports Redis failures itself, so their reconnection chatter is silenced; the
   * loggers are kept here because java.util.logging holds them only weakly.
   */
  private static final java.util.logging.Logger[] QUIET = {
    java.util.logging.Logger.getLogger("io.lettuce"), java.util.logging.Logger.getLogger("io.netty")
  };

  private RedisDefaults() {}

  static Backend backend(String uri, String keyPrefix, @Nullable Duration leaseTime) {
    // Lettuce records JFR events unless told not to; setting them up costs ~0.4 s of start-up.
    if (System.getProperty("io.lettuce.core.jfr") == null) {
      System.setProperty("io.lettuce.core.jfr", "false");
    }
    for (java.util.logging.Logger logger : QUIET) {
      logger.setLevel(java.util.logging.Level.OFF);
    }
    RedisSemaphoreOptions options = RedisSemaphoreOptions.defaults().withKeyPrefix(keyPrefix);
    if (leaseTime != null) {
      options = options.withLeaseTime(leaseTime);
    }
    return new RedisBackend(uri, options);
  }

  /** Whether {@code e} is Redis failing (unreachable, refusing, timing out). */
  static boolean isRedisFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getClass().getName().startsWith("io.lettuce.")) {
        return true;
      }
    }
    return false;
  }

  /** The failure in one line, with the innermost cause. */
  static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = String.valueOf(e.getMessage());
    return root == e ? message : message + " (" + root.getMessage() + ")";
  }
}
