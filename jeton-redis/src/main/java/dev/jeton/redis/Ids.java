package dev.jeton.redis;

import java.util.UUID;

/**
 * Request ids and wake-up channel names: chosen here, unique across the fleet, so that a request
 * sent twice (a retry, a poll, Lettuce re-sending after a reconnect) is known by Redis as one.
 */
final class Ids {
  private Ids() {}

  /** {@return a new id, never used before by any process} */
  static String newId() {
    return UUID.randomUUID().toString();
  }
}
