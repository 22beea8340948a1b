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
   * Lettuce and Netty log through java.util.logging here (Netty ignores slf4j's no-op binding). The
   * command reports Redis failures itself, so their reconnection chatter is silenced; the loggers
   * are kept here because java.util.logging holds them only weakly.
   */
  private static java.util.logging.Logger @Nullable [] quiet; // set once, on the main thread

  private static final String[] QUIET = {"io.lettuce", "io.netty"};

  /** System properties for Lettuce and Netty, set unless the user set them. */
  static final String[][] STARTUP_PROPERTIES = {
    {"io.lettuce.core.jfr", "false"},
    {"io.lettuce.core.epoll", "false"},
    {"io.lettuce.core.iouring", "false"},
    {"io.lettuce.core.kqueue", "false"},
    {"io.netty.transport.noNative", "true"},
    {"io.netty.allocator.type", "unpooled"},
    {"io.netty.leakDetection.level", "disabled"},
    {"io.netty.machineId", "00:00:00:00:00:00:00:01"},
  };

  private RedisDefaults() {}

  static Backend backend(String uri, String keyPrefix, @Nullable Duration leaseTime) {
    if (!RedisBackend.plainServer(uri)) {
      quietLettuce(); // the others go through Jedis, which logs nothing here (slf4j's no-op)
    }
    RedisSemaphoreOptions options = RedisSemaphoreOptions.defaults().withKeyPrefix(keyPrefix);
    if (leaseTime != null) {
      options = options.withLeaseTime(leaseTime);
    }
    return new RedisBackend(uri, options);
  }

  private static void quietLettuce() {
    // Lettuce records JFR events unless told not to; setting them up costs ~0.4 s of start-up.
    // The rest is start-up a short-lived command does not need (decision 59): the native
    // transports (Netty unpacks and loads a library), a pooled allocator (arenas, their JFR
    // events), leak sampling, and the machine id (a walk over the network interfaces; it only
    // names channels in logs). Properties the user set are left as they are.
    for (String[] property : STARTUP_PROPERTIES) {
      if (System.getProperty(property[0]) == null) {
        System.setProperty(property[0], property[1]);
      }
    }
    java.util.logging.Logger[] loggers = new java.util.logging.Logger[QUIET.length];
    for (int i = 0; i < QUIET.length; i++) {
      loggers[i] = java.util.logging.Logger.getLogger(QUIET[i]);
      loggers[i].setLevel(java.util.logging.Level.OFF);
    }
    quiet = loggers;
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

  /**
   * Whether {@code e} is a Redis semaphore's quarantine ({@code SemaphoreQuarantinedException}),
   * told by its name: the machine-wide command must not load Redis's classes, not even to check
   * (picocli's reflection over the command verifies its classes at start).
   */
  static boolean isQuarantine(@Nullable Throwable e) {
    return e != null
        && e.getClass().getName().equals("dev.jeton.redis.SemaphoreQuarantinedException");
  }

  /** The failure in one line, with the innermost cause unless its text is already there. */
  static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = String.valueOf(e.getMessage());
    String rootMessage = root.getMessage();
    // Jedis's errors come wrapped in Lettuce's exception type with the same text: say it once.
    boolean saidAlready = root == e || rootMessage == null || message.contains(rootMessage);
    return saidAlready ? message : message + " (" + rootMessage + ")";
  }
}
