package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The bounds {@link RedisSemaphoreOptions} keeps. */
class RedisSemaphoreOptionsTest {
  /**
   * A lease or a waiter's expiry further ahead than a day is what Redis takes for damage
   * (semaphore.lua, MAX_AHEAD_MS): no handle may ask for one.
   */
  @Test
  void aLeaseTimeOrWaiterExpiryOverADay_isRefused() {
    RedisSemaphoreOptions defaults = RedisSemaphoreOptions.defaults();
    Duration day = Duration.ofHours(24);
    assertEquals(day, defaults.withLeaseTime(day).leaseTime());
    assertEquals(day, defaults.withWaiterExpiry(day).waiterExpiry());
    IllegalArgumentException lease =
        assertThrows(
            IllegalArgumentException.class, () -> defaults.withLeaseTime(day.plusMillis(1)));
    assertTrue(
        lease.getMessage().startsWith("leaseTime must be at most 24 hours"), lease.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> defaults.withWaiterExpiry(day.plusMillis(1)));
  }
}
