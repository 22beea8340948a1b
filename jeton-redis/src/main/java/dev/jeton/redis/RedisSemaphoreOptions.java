package dev.jeton.redis;

import dev.jeton.internal.Arguments;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link RedisSemaphore} uses Redis: immutable, with named defaults; each {@code with} method
 * returns a copy with one setting changed, checked at once.
 *
 * <pre>{@code
 * RedisSemaphoreOptions options =
 *     RedisSemaphoreOptions.defaults().withLeaseTime(Duration.ofSeconds(10));
 * }</pre>
 *
 * @param keyPrefix the first part of every key: {@code {<prefix>:<name>}:...}. Default {@value
 *     #DEFAULT_KEY_PREFIX}.
 * @param leaseTime how long a permit stays held in Redis without a renewal. A holder that dies
 *     frees its permits this long after its last renewal. At most {@link #MAX_EXPIRY}. Default
 *     {@link #DEFAULT_LEASE_TIME}.
 * @param renewInterval how often held leases are renewed in the background; must be below the lease
 *     time (a third of it leaves room for two failed renewals). Default {@link
 *     #DEFAULT_RENEW_INTERVAL}.
 * @param pollInterval how often waiters ask Redis again when no wake-up message came: the bound on
 *     how long a lost message can delay a grant. Default {@link #DEFAULT_POLL_INTERVAL}.
 * @param waiterExpiry how long a waiter stays queued after its last poll: a waiter whose process
 *     died leaves the queue this long after. At least twice the poll interval, at most {@link
 *     #MAX_EXPIRY}. Default {@link #DEFAULT_WAITER_EXPIRY}.
 * @param replayWindow how long Redis remembers a finished request, at least, so that a request
 *     replayed after a reconnect (Lettuce re-sends commands whose reply it lost) cannot act twice.
 *     Finished requests are forgotten in batches, up to a quarter of the window later. Default
 *     {@link #DEFAULT_REPLAY_WINDOW}.
 * @param replicaAcks how many replicas must acknowledge a grant or renewal (Redis {@code WAIT})
 *     before the client relies on it; 0 (the default) does not wait. See the package documentation
 *     for what this does and does not buy.
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

  /** The default {@link #keyPrefix() key prefix}. */
  public static final String DEFAULT_KEY_PREFIX = "jeton";

  /** The longest {@link #leaseTime() lease time} and {@link #waiterExpiry() waiter expiry}. */
  public static final Duration MAX_EXPIRY = Duration.ofHours(24);

  /** The default {@link #leaseTime() lease time}: 30 seconds. */
  public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);

  /** The default {@link #renewInterval() renewal interval}: a third of the default lease time. */
  public static final Duration DEFAULT_RENEW_INTERVAL = Duration.ofSeconds(10);

  /** The default {@link #pollInterval() poll interval}: 1 second. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

  /** The default {@link #waiterExpiry() waiter expiry}: ten times the default poll interval. */
  public static final Duration DEFAULT_WAITER_EXPIRY = Duration.ofSeconds(10);

  /** The default {@link #replayWindow() replay window}: 60 seconds. */
  public static final Duration DEFAULT_REPLAY_WINDOW = Duration.ofSeconds(60);

  /** The default {@link #replicaTimeout() replica timeout}: 1 second. */
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

  /**
   * Checks the settings together; each is described above.
   *
   * @param keyPrefix the first part of every key
   * @param leaseTime how long a permit stays held without a renewal
   * @param renewInterval how often held leases are renewed
   * @param pollInterval how often waiters ask again
   * @param waiterExpiry how long a waiter stays queued after its last poll
   * @param replayWindow how long Redis remembers a finished request
   * @param replicaAcks how many replicas must acknowledge a grant or renewal
   * @param replicaTimeout how long to wait for those acknowledgements
   * @throws IllegalArgumentException if a duration is below 1 ms, the lease time or the waiter
   *     expiry is above {@link #MAX_EXPIRY}, the renewal interval is not shorter than the lease
   *     time, the waiter expiry is shorter than twice the poll interval, replicaAcks is negative,
   *     or the key prefix is not a valid name
   */
  public RedisSemaphoreOptions {
    checkKeyPart("key prefix", keyPrefix);
    positiveMillis("leaseTime", leaseTime);
    positiveMillis("renewInterval", renewInterval);
    positiveMillis("pollInterval", pollInterval);
    positiveMillis("waiterExpiry", waiterExpiry);
    positiveMillis("replayWindow", replayWindow);
    positiveMillis("replicaTimeout", replicaTimeout);
    atMostADay("leaseTime", leaseTime);
    atMostADay("waiterExpiry", waiterExpiry);
    if (renewInterval.compareTo(leaseTime) >= 0) {
      throw new IllegalArgumentException(
          "renewInterval ("
              + renewInterval
              + ") must be shorter than leaseTime ("
              + leaseTime
              + "): set a shorter renewInterval with withRenewInterval");
    }
    // plus, not multipliedBy: that one initializes BigDecimal, 9 ms of a command's start
    if (waiterExpiry.compareTo(pollInterval.plus(pollInterval)) < 0) {
      throw new IllegalArgumentException(
          "waiterExpiry ("
              + waiterExpiry
              + ") must be at least twice pollInterval ("
              + pollInterval
              + ")");
    }
    if (replicaAcks < 0) {
      throw new IllegalArgumentException("replicaAcks must be 0 or more, was " + replicaAcks);
    }
  }

  /**
   * A lease or a waiter's expiry is at most {@link #MAX_EXPIRY}: the semaphore takes one further
   * ahead in Redis for damage (semaphore.lua, MAX_AHEAD_MS), since its permits would never come
   * back, and a dead holder's permits should come back within a day anyway.
   */
  private static void atMostADay(String what, Duration value) {
    if (value.compareTo(MAX_EXPIRY) > 0) {
      throw new IllegalArgumentException(
          what + " must be at most " + MAX_EXPIRY.toHours() + " hours, was " + value);
    }
  }

  private static void positiveMillis(String what, Duration value) {
    Objects.requireNonNull(value, what);
    if (value.toMillis() < 1) {
      throw new IllegalArgumentException(what + " must be 1ms or more, was " + value);
    }
  }

  /**
   * The defaults named above.
   *
   * @return the default options
   */
  public static RedisSemaphoreOptions defaults() {
    return DEFAULTS;
  }

  /**
   * Sets the key prefix.
   *
   * @param prefix the first part of every key, by the rule names follow (letters, digits, {@code
   *     .}, {@code _} and {@code -})
   * @return a copy with this key prefix
   * @throws IllegalArgumentException if the prefix breaks that rule
   */
  public RedisSemaphoreOptions withKeyPrefix(String prefix) {
    return new RedisSemaphoreOptions(
        prefix,
        leaseTime,
        renewInterval,
        pollInterval,
        waiterExpiry,
        replayWindow,
        replicaAcks,
        replicaTimeout);
  }

  /**
   * Sets the lease time. The renewal interval follows it (a third of it) while it is a third of the
   * lease time, as by default; one set to anything else with {@link #withRenewInterval(Duration)}
   * is kept.
   *
   * @param lease the lease time, 1 ms or more
   * @return a copy with this lease time
   * @throws IllegalArgumentException if it is below 1 ms, or not longer than a renewal interval
   *     that is kept
   */
  public RedisSemaphoreOptions withLeaseTime(Duration lease) {
    positiveMillis("leaseTime", lease);
    Duration renew = renewInterval.equals(thirdOf(leaseTime)) ? thirdOf(lease) : renewInterval;
    return new RedisSemaphoreOptions(
        keyPrefix,
        lease,
        renew,
        pollInterval,
        waiterExpiry,
        replayWindow,
        replicaAcks,
        replicaTimeout);
  }

  private static Duration thirdOf(Duration lease) {
    return Duration.ofMillis(Math.max(1, lease.toMillis() / 3));
  }

  /**
   * Sets how often held leases are renewed.
   *
   * @param interval the renewal interval, 1 ms or more and shorter than the lease time
   * @return a copy with this renewal interval
   * @throws IllegalArgumentException if it is below 1 ms or not shorter than the lease time
   */
  public RedisSemaphoreOptions withRenewInterval(Duration interval) {
    return new RedisSemaphoreOptions(
        keyPrefix,
        leaseTime,
        interval,
        pollInterval,
        waiterExpiry,
        replayWindow,
        replicaAcks,
        replicaTimeout);
  }

  /**
   * Sets the poll interval. The waiter expiry follows it (ten times it) while it is ten times the
   * poll interval, as by default; one set to anything else with {@link #withWaiterExpiry(Duration)}
   * is kept.
   *
   * @param interval the poll interval, 1 ms or more
   * @return a copy with this poll interval
   * @throws IllegalArgumentException if it is below 1 ms, or more than half a waiter expiry that is
   *     kept
   */
  public RedisSemaphoreOptions withPollInterval(Duration interval) {
    positiveMillis("pollInterval", interval);
    Duration expiry =
        waiterExpiry.equals(pollInterval.multipliedBy(10))
            ? interval.multipliedBy(10)
            : waiterExpiry;
    return new RedisSemaphoreOptions(
        keyPrefix,
        leaseTime,
        renewInterval,
        interval,
        expiry,
        replayWindow,
        replicaAcks,
        replicaTimeout);
  }

  /**
   * Sets how long a waiter stays queued after its last poll.
   *
   * @param expiry the waiter expiry, at least twice the poll interval
   * @return a copy with this waiter expiry
   * @throws IllegalArgumentException if it is shorter than twice the poll interval
   */
  public RedisSemaphoreOptions withWaiterExpiry(Duration expiry) {
    return new RedisSemaphoreOptions(
        keyPrefix,
        leaseTime,
        renewInterval,
        pollInterval,
        expiry,
        replayWindow,
        replicaAcks,
        replicaTimeout);
  }

  /**
   * Sets how long Redis remembers a finished request.
   *
   * @param window the replay window, 1 ms or more; longer than any delay after which Lettuce could
   *     still re-send a command
   * @return a copy with this replay window
   * @throws IllegalArgumentException if it is below 1 ms
   */
  public RedisSemaphoreOptions withReplayWindow(Duration window) {
    return new RedisSemaphoreOptions(
        keyPrefix,
        leaseTime,
        renewInterval,
        pollInterval,
        waiterExpiry,
        window,
        replicaAcks,
        replicaTimeout);
  }

  /**
   * Waits for {@code replicas} replicas to acknowledge each grant and renewal.
   *
   * @param replicas how many replicas, 0 (do not wait) or more
   * @param timeout how long to wait for them, 1 ms or more
   * @return a copy with these settings
   * @throws IllegalArgumentException if {@code replicas} is negative or {@code timeout} below 1 ms
   */
  public RedisSemaphoreOptions withReplicaAcks(int replicas, Duration timeout) {
    return new RedisSemaphoreOptions(
        keyPrefix,
        leaseTime,
        renewInterval,
        pollInterval,
        waiterExpiry,
        replayWindow,
        replicas,
        timeout);
  }

  /**
   * Checks a name or key prefix by the rule every backend shares ({@link Arguments#checkName}),
   * which also keeps it from breaking the key layout ('{', '}' and ':' would).
   */
  static String checkKeyPart(String what, String value) {
    return Arguments.checkName(what, value);
  }
}
