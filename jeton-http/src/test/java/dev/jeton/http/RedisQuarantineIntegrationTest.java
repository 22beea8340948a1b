package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.RedisSemaphore;
import dev.jeton.redis.RedisSemaphoreOptions;
import dev.jeton.redis.SemaphoreQuarantinedException;
import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link RedisSemaphore} behind the control, on a real {@code redis-server} restarted without
 * persistence: the semaphore is recreated in quarantine, and grants nothing for a lease time. Issue
 * 29's regression test: admission said QUEUE_TIMEOUT or LIMIT_REACHED (429 where configured)
 * through the whole quarantine, with nothing counted as unavailable, since Redis's answer to the
 * try was "busy", as for a full semaphore.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS) // a hang guard only
class RedisQuarantineIntegrationTest {
  /** The handle's lease time: the quarantine. Long enough that no test outlives it by chance. */
  private static final Duration LEASE = Duration.ofSeconds(60);

  private final RedisServer redis = RedisServer.start();
  private final Logger log = Logger.getLogger(AdmissionControl.class.getName()); // held: weak
  private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
  private final Handler capture =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          logged.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };
  private RedisSemaphore semaphore;
  private AdmissionControl<Integer> control;

  @AfterEach
  void stop() {
    log.removeHandler(capture);
    if (control != null) {
      control.close();
    }
    if (semaphore != null) {
      semaphore.close();
    }
    redis.close();
  }

  private AdmissionControl<Integer> restartedUnder(
      Duration lease, AdmissionControl.Builder<Integer> configured) throws Exception {
    semaphore =
        RedisSemaphore.builder("admission")
            .uri(redis.uri())
            .limit(2)
            .options(RedisSemaphoreOptions.defaults().withLeaseTime(lease))
            .open();
    control = configured.semaphore(semaphore).rejectionStatus(429).build();
    assertInstanceOf(Ticket.class, control.admit(0)).close(); // admitted before the restart
    log.addHandler(capture);
    redis.restart(); // no persistence: the state is gone
    return control;
  }

  /** Recreates the semaphore (in quarantine) through the handle, once it has reconnected. */
  private void recreated() throws InterruptedException {
    Await.until(
        () -> {
          try {
            return semaphore.limit() == 2;
          } catch (RuntimeException reconnecting) {
            return false;
          }
        },
        "the handle to reach the restarted Redis");
  }

  private void assertUnavailableForTheQuarantine(Decision decision) {
    Rejection r = assertInstanceOf(Rejection.class, decision);
    assertEquals(Reason.UNAVAILABLE, r.reason(), r::message);
    assertEquals(503, r.status(), "the backend cannot grant: 503 despite 429");
    assertEquals(1, control.stats().rejected(Reason.UNAVAILABLE));
    assertEquals(0, control.stats().rejected(Reason.LIMIT_REACHED));
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));
    assertEquals(1, logged.size(), "the first UNAVAILABLE is logged at once");
    Throwable why = logged.get(0).getThrown();
    assertNotNull(why, "the log says why");
    SemaphoreQuarantinedException quarantine =
        assertInstanceOf(SemaphoreQuarantinedException.class, why, why::toString);
    assertTrue(why.getMessage().contains("quarantine until "), why.getMessage());
    assertTrue(quarantine.until().isAfter(java.time.Instant.now()), "it ends in the future");
  }

  @Test
  void bestEffort_inQuarantine_unavailableNamingIt_notLimitReached() throws Exception {
    AdmissionControl<Integer> control = restartedUnder(LEASE, AdmissionControl.builder());
    recreated();
    assertUnavailableForTheQuarantine(control.admit(1));
  }

  @Test
  void queued_inQuarantine_unavailableAtOnce_notAQueueTimeout() throws Exception {
    AdmissionControl<Integer> control =
        restartedUnder(LEASE, AdmissionControl.<Integer>builder().queue(20, Duration.ofSeconds(2)));
    recreated();
    assertUnavailableForTheQuarantine(control.admit(1));
    assertEquals(0, control.queued());
  }

  /**
   * Through a short quarantine, every rejection is UNAVAILABLE (the handle reconnecting, then the
   * quarantine), and requests are admitted again once it ends.
   */
  @Test
  void queued_throughAShortQuarantine_onlyUnavailable_thenAdmittedAgain() throws Exception {
    AdmissionControl<Integer> control =
        restartedUnder(
            Duration.ofSeconds(2),
            AdmissionControl.<Integer>builder().queue(20, Duration.ofSeconds(1)));
    Await.until(
        () -> {
          try {
            return control.admit(1) instanceof Ticket t && closed(t);
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        },
        "admitted once the quarantine is over");
    assertTrue(control.stats().rejected(Reason.UNAVAILABLE) >= 1, "rejected during it");
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));
    assertEquals(0, control.stats().rejected(Reason.LIMIT_REACHED));
  }

  private static boolean closed(Ticket ticket) {
    ticket.close();
    return true;
  }
}
