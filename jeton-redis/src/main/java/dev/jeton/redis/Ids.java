package dev.jeton.redis;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Request ids and wake-up channel names: chosen here, unique across the fleet, so that a request
 * sent twice (a retry, a poll, Lettuce re-sending after a reconnect) is known by Redis as one.
 *
 * <p>An id is this process's random prefix (96 bits, drawn once) and a counter. Unique within the
 * process by the counter, and across processes unless two of them drew the same prefix (about
 * n²/2^97 for n processes). Shorter than a random UUID (so are the records in Redis), and made
 * without a call to the shared {@code SecureRandom} on every request.
 */
final class Ids {
  private static final String PROCESS = randomPrefix();
  private static final AtomicLong NEXT = new AtomicLong();

  private Ids() {}

  /** {@return a new id, never used before by any process} */
  static String newId() {
    return PROCESS + Long.toString(NEXT.incrementAndGet(), 36);
  }

  private static String randomPrefix() {
    byte[] bits = new byte[12];
    // The kernel's generator, read directly where there is one: setting up SecureRandom cost
    // 19 ms of a short-lived process's start (decision 62); it reads the same device.
    try (java.io.InputStream urandom = new java.io.FileInputStream("/dev/urandom")) {
      if (urandom.readNBytes(bits, 0, bits.length) != bits.length) {
        throw new java.io.IOException("short read");
      }
    } catch (java.io.IOException | SecurityException e) {
      new SecureRandom().nextBytes(bits);
    }
    return HexFormat.of().formatHex(bits) + "-";
  }
}
