package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Permit;
import dev.jeton.redis.RedisSemaphore;
import dev.jeton.redis.RedisSemaphoreOptions;
import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisServer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link RedisSemaphore} behind the control, on a real {@code redis-server} that the test kills
 * (connections refused: every call fails at once) or freezes with SIGSTOP (nothing answers; the
 * client's own command timeout is 10 s). Issue 29's regression tests: queued, a dead Redis left
 * every request waiting out its {@code maxWait} to be told QUEUE_TIMEOUT (429 where configured),
 * never UNAVAILABLE; a frozen one held a request for the client's 10 s before anything, in either
 * mode.
 *
 * <p>"Within the bound" is checked without a clock: a witness thread asks the frozen semaphore
 * directly just before the request, and the request must be answered while the witness still waits
 * for its reply, which the client gives up on only after its 10 s command timeout.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS) // a hang guard only
class RedisUnavailableIntegrationTest {
  private static final Duration LEASE = Duration.ofSeconds(2); // the quarantine after a restart

  private final RedisServer redis = RedisServer.start();
  private final RedisSemaphore semaphore =
      RedisSemaphore.builder("admission")
          .uri(redis.uri())
          .limit(1)
          .options(RedisSemaphoreOptions.defaults().withLeaseTime(LEASE))
          .open();
  private AdmissionControl<Integer> control;
  private boolean paused;

  @AfterEach
  void stop() {
    if (paused) {
      redis.resume();
    }
    if (control != null) {
      control.close();
    }
    semaphore.close();
    redis.close();
  }

  private AdmissionControl<Integer> start(AdmissionControl.Builder<Integer> configured) {
    control = configured.build();
    return control;
  }

  private static AdmissionControl.Builder<Integer> over(RedisSemaphore semaphore) {
    return AdmissionControl.<Integer>builder().semaphore(semaphore).rejectionStatus(429);
  }

  private static Rejection rejection(Decision decision) {
    return assertInstanceOf(Rejection.class, decision);
  }

  private static void assertUnavailable(Decision decision) {
    Rejection r = rejection(decision);
    assertEquals(Reason.UNAVAILABLE, r.reason(), r::message);
    assertEquals(503, r.status(), "the backend failed, not the client: 503 despite 429");
  }

  private static Decision decided(CompletableFuture<Decision> decision) throws Exception {
    return decision.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
  }

  private void pause() {
    redis.pause();
    paused = true;
  }

  /** A request queued behind the holder of the only permit, its pump waiting on Redis. */
  private static CompletableFuture<Decision> queueBehind(AdmissionControl<Integer> control)
      throws InterruptedException {
    CompletableFuture<Decision> queued = control.admitAsync(1);
    Await.until(() -> control.queued() == 1, "a request queued behind the holder");
    return queued;
  }

  /** A direct call to the frozen semaphore: it waits for the client's 10 s command timeout. */
  private CompletableFuture<Optional<Permit>> witness() {
    CompletableFuture<Optional<Permit>> witness =
        CompletableFuture.supplyAsync(() -> semaphore.tryAcquire(1));
    return witness;
  }

  @Test
  void killed_bestEffort_unavailable() throws Exception {
    AdmissionControl<Integer> control = start(over(semaphore));
    redis.kill();
    assertUnavailable(control.admit(1));
    assertEquals(1, control.stats().rejected(Reason.UNAVAILABLE));
  }

  @Test
  void killed_queued_unavailableAtOnceRatherThanAfterMaxWait() throws Exception {
    // A wait long enough that only a prompt answer can be UNAVAILABLE before the queue's timeout.
    AdmissionControl<Integer> control = start(over(semaphore).queue(20, Duration.ofSeconds(10)));
    redis.kill();
    assertUnavailable(control.admit(1));
    assertUnavailable(control.admit(2));
    assertEquals(2, control.stats().rejected(Reason.UNAVAILABLE));
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));
    assertEquals(0, control.queued());
  }

  @Test
  void killed_whileRequestsQueue_theyAndNewcomersAreUnavailable() throws Exception {
    AdmissionControl<Integer> control = start(over(semaphore).queue(20, Duration.ofSeconds(20)));
    Ticket holder = assertInstanceOf(Ticket.class, control.admit(0));
    CompletableFuture<Decision> queued = queueBehind(control);
    redis.kill();
    assertUnavailable(decided(queued));
    assertUnavailable(control.admit(2));
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));
    holder.close();
  }

  @Test
  void frozen_bestEffort_answeredWithinTheBoundAndUnavailable() throws Exception {
    AdmissionControl<Integer> control = start(over(semaphore));
    pause();
    CompletableFuture<Optional<Permit>> witness = witness();
    assertUnavailable(control.admit(1));
    assertUnavailable(control.admit(2));
    assertFalse(witness.isDone(), "answered only after the client's own timeout");
    assertEquals(2, control.stats().rejected(Reason.UNAVAILABLE));
    redis.resume();
    paused = false;
    witness.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).ifPresent(Permit::release);
    Await.until(
        () -> {
          try {
            return control.admit(3) instanceof Ticket t && close(t);
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        },
        "admitted once Redis answers again");
  }

  private static boolean close(Ticket ticket) {
    ticket.close();
    return true;
  }

  @Test
  void frozen_queued_unavailableWithinMaxWait() throws Exception {
    AdmissionControl<Integer> control = start(over(semaphore).queue(20, Duration.ofSeconds(2)));
    pause();
    CompletableFuture<Optional<Permit>> witness = witness();
    assertUnavailable(control.admit(1));
    assertFalse(witness.isDone(), "answered only after the client's own timeout");
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));
  }

  @Test
  void frozen_whileRequestsQueue_theyAndNewcomersAreUnavailable() throws Exception {
    AdmissionControl<Integer> control = start(over(semaphore).queue(20, Duration.ofSeconds(6)));
    Ticket holder = assertInstanceOf(Ticket.class, control.admit(0));
    CompletableFuture<Decision> queued = queueBehind(control);
    pause();
    CompletableFuture<Optional<Permit>> witness = witness();
    assertUnavailable(decided(queued));
    assertUnavailable(control.admit(2));
    assertFalse(witness.isDone(), "answered only after the client's own timeout");
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));
    assertTrue(control.stats().rejected(Reason.UNAVAILABLE) >= 2);
    holder.close();
  }

  @Test
  void frozenAfterARequestQueued_itsTimeoutIsUnavailable_notAQueueTimeout() throws Exception {
    // maxWait 2 s: the checks are a second apart, and the one that goes unanswered after the
    // freeze is overdue only as late as the request's own timeout.
    AdmissionControl<Integer> control = start(over(semaphore).queue(20, Duration.ofSeconds(2)));
    Ticket holder = assertInstanceOf(Ticket.class, control.admit(0));
    CompletableFuture<Decision> queued = queueBehind(control);
    Await.until(
        () -> semaphore.queueLength() == 1, "the pump's acquire queued: the first check answered");
    pause();
    assertUnavailable(decided(queued));
    assertEquals(0, control.stats().rejected(Reason.QUEUE_TIMEOUT));
    holder.close();
  }
}
