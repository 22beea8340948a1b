package dev.jeton.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link RedisSemaphore} uses Redis: immutable, with named defaults; each {@code with}
 * method returns a copy with one setting changed, checked at once.
 *
 * <pre>{@code
 * RedisSemaphoreOptions options =
 *     RedisSemaphoreOptions.defaults().withLeaseTime(Duration.ofSeconds(10));
 * }</pre>
 *
 * @param keyPrefix the first part of every key: {@code {<prefix>:<name>}:...}. Default {@value
 *     #DEFAULT_KEY_PREFIX}.
 * @param leaseTime how long a permit stays held in Redis without a renewal. A holder that dies
 *     frees its permits this long after its last renewal. Default {@link #DEFAULT_LEASE_TIME}.
 * @param renewInterval how often held leases are renewed in the background; must be below the
 *     lease time (a third of it leaves room for two failed renewals). Default {@link
 *     #DEFAULT_RENEW_INTERVAL}.
 * @param pollInterval how often waiters ask Redis again when no wake-up message came: the bound
 *     on how long a lost message can delay a grant. Default {@link #DEFAULT_POLL_INTERVAL}.
 * @param waiterExpiry how long a waiter stays queued after its last poll: a waiter whose process
 *     died leaves the queue this long after. At least twice the poll interval. Default {@link
 *     #DEFAULT_WAITER_EXPIRY}.
 * @param replayWindow how long Redis remembers a finished request, at least, so that a request
 *     replayed after a reconnect (Lettuce re-sends commands whose reply it lost) cannot act
 *     twice. Finished requests are forgotten in batches, up to a quarter of the window later.
 *     Default {@link #DEFAULT_REPLAY_WINDOW}.
 * @param replicaAcks how many replicas must acknowledge a grant or renewal (Redis {@code WAIT})
 *     before the client relies on it; 0 (the default) does not wait. See the package
 *     documentation for what this does and does not buy.
 * @param replicaTimeout how long to wait for those acknowledgements. Default {@link
 *     #DEFAULT_REPLICA_TIMEOUT}.
 */
public record RedisSemaphoreOptions(
    String keyPrefix,
    Duration leaseTime,
    Duration renewInterval,
    Duration pollInterval,
    Duration waiterExpiry,
    Duration replayWindow,
    int replicaAcks,
    Duration replicaTimeout) {

  public static final String DEFAULT_KEY_PREFIX = "jeton";
  public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);
  public static final Duration DEFAULT_RENEW_INTERVAL = Duration.ofSeconds(10);
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
  public static final Duration DEFAULT_WAITER_EXPIRY = Duration.ofSeconds(10);
  public static final Duration DEFAULT_REPLAY_WINDOW = Duration.ofSeconds(60);
  public static final Duration DEFAULT_REPLICA_TIMEOUT = Duration.ofSeconds(1);

  private static final RedisSemaphoreOptions DEFAULTS =
      new RedisSemaphoreOptions(
          DEFAULT_KEY_PREFIX,
          DEFAULT_LEASE_TIME,
          DEFAULT_RENEW_INTERVAL,
          DEFAULT_POLL_INTERVAL,
          DEFAULT_WAITER_EXPIRY,
          DEFAULT_REPLAY_WINDOW,
          0,
          DEFAULT_REPLICA_TIMEOUT);

  /** Checks the settings together. */
  public RedisSemaphoreOptions {
    RedisSemaphore.checkKeyPart("key prefix", keyPrefix);
    positiveMillis("leaseTime", leaseTime);
    positiveMillis("renewInterval", renewInterval);
    positiveMillis("pollInterval", pollInterval);
    positiveMillis("waiterExpiry", waiterExpiry);
    positiveMillis("replayWindow", replayWindow);
    positiveMillis("replicaTimeout", replicaTimeout);
    if (renewInterval.compareTo(leaseTime) >= 0) {
      throw new IllegalArgumentException(
          "renewInterval (" + renewInterval + ") must be shorter than leaseTime (" + leaseTime
              + ")");
    }
    if (waiterExpiry.compareTo(pollInterval.multipliedBy(2)) < 0) {
      throw new IllegalArgumentException(
          "waiterExpiry (" + waiterExpiry + ") must be at least twice pollInterval ("
              + pollInterval + ")");
    }
    if (replicaAcks < 0) {
      throw new IllegalArgumentException("replicaAcks must be 0 or more, was " + replicaAcks);
    }
  }

  private static void positiveMillis(String what, Duration value) {
    Objects.requireNonNull(value, what);
    if (value.toMillis() < 1) {
      throw new IllegalArgumentException(what + " must be 1ms or more, was " + value);
    }
  }

  /** The defaults named above. */
  public static RedisSemaphoreOptions defaults() {
    return DEFAULTS;
  }

  public RedisSemaphoreOptions withKeyPrefix(String prefix) {
    return new RedisSemaphoreOptions(
        prefix, leaseTime, renewInterval, pollInterval, waiterExpiry, replayWindow, replicaAcks,
        replicaTimeout);
  }

  /**
   * Sets the lease time, and the renewal interval to a third of it (change it after with {@link
   * #withRenewInterval(Duration)}).
   */
  public RedisSemaphoreOptions withLeaseTime(Duration lease) {
    positiveMillis("leaseTime", lease);
    return new RedisSemaphoreOptions(
        keyPrefix, lease, Duration.ofMillis(Math.max(1, lease.toMillis() / 3)), pollInterval,
        waiterExpiry, replayWindow, replicaAcks, replicaTimeout);
  }

  public RedisSemaphoreOptions withRenewInterval(Duration interval) {
    return new RedisSemaphoreOptions(
        keyPrefix, leaseTime, interval, pollInterval, waiterExpiry, replayWindow, replicaAcks,
        replicaTimeout);
  }

  /**
   * Sets the poll interval, and the waiter expiry to ten times it (change it after with {@link
   * #withWaiterExpiry(Duration)}).
   */
  public RedisSemaphoreOptions withPollInterval(Duration interval) {
    positiveMillis("pollInterval", interval);
    return new RedisSemaphoreOptions(
        keyPrefix, leaseTime, renewInterval, interval, interval.multipliedBy(10), replayWindow,
        replicaAcks, replicaTimeout);
  }

  public RedisSemaphoreOptions withWaiterExpiry(Duration expiry) {
    return new RedisSemaphoreOptions(
        keyPrefix, leaseTime, renewInterval, pollInterval, expiry, replayWindow, replicaAcks,
        replicaTimeout);
  }

  public RedisSemaphoreOptions withReplayWindow(Duration window) {
    return new RedisSemaphoreOptions(
        keyPrefix, leaseTime, renewInterval, pollInterval, waiterExpiry, window, replicaAcks,
        replicaTimeout);
  }

  /** Waits for {@code replicas} replicas to acknowledge each grant and renewal. */
  public RedisSemaphoreOptions withReplicaAcks(int replicas, Duration timeout) {
    return new RedisSemaphoreOptions(
        keyPrefix, leaseTime, renewInterval, pollInterval, waiterExpiry, replayWindow, replicas,
        timeout);
  }
}
