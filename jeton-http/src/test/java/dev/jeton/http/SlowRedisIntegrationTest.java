package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.jeton.redis.RedisSemaphore;
import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A healthy but distant Redis: a real {@code redis-server} behind a proxy that delays every chunk
 * by 50 ms each way, and many more requests at once than the control once had threads to ask it on
 * (16). Every call is answered, a round trip later, so none may be called UNAVAILABLE, and the
 * limit must fill. Issue 29: the calls waited for one of 16 threads, the wait counted against the
 * semaphore timeout, and requests got 503 UNAVAILABLE from a Redis that answered every call.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS) // a hang guard only
class SlowRedisIntegrationTest {
  private static final int LIMIT = 32;
  private static final int REQUESTS = 300;

  private final RedisServer redis = RedisServer.start();
  private final DelayingProxy proxy = new DelayingProxy(redis.port(), Duration.ofMillis(50));
  private final RedisSemaphore semaphore =
      RedisSemaphore.builder("distant").uri(proxy.redisUri()).limit(LIMIT).open();
  private AdmissionControl<Integer> control;

  @AfterEach
  void stop() {
    if (control != null) {
      control.close();
    }
    semaphore.close();
    proxy.close();
    redis.close();
  }

  private List<CompletableFuture<Decision>> admitAll() {
    List<CompletableFuture<Decision>> decisions = new ArrayList<>();
    for (int i = 0; i < REQUESTS; i++) {
      decisions.add(control.admitAsync(i));
    }
    return decisions;
  }

  private static List<Ticket> tickets(List<CompletableFuture<Decision>> decisions) {
    List<Ticket> tickets = new ArrayList<>();
    for (CompletableFuture<Decision> d : decisions) {
      if (d.isDone() && d.join() instanceof Ticket t) {
        tickets.add(t);
      }
    }
    return tickets;
  }

  @Test
  void bestEffort_everyRequestIsAnswered_noneUnavailable_andTheLimitFills() throws Exception {
    control = AdmissionControl.<Integer>builder().semaphore(semaphore).build();
    List<CompletableFuture<Decision>> decisions = admitAll();
    CompletableFuture.allOf(decisions.toArray(CompletableFuture[]::new))
        .get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    AdmissionStats stats = control.stats();
    assertEquals(0, stats.rejected(Reason.UNAVAILABLE), "Redis answered every call: " + stats);
    assertEquals(LIMIT, control.inFlight(), "the limit filled: " + stats);
    assertEquals(REQUESTS - LIMIT, stats.rejected(Reason.LIMIT_REACHED), stats::toString);
    tickets(decisions).forEach(Ticket::close);
  }

  @Test
  void queued_theLimitFills_noneUnavailable_andFillsAgainAsTicketsClose() throws Exception {
    control =
        AdmissionControl.<Integer>builder()
            .semaphore(semaphore)
            .queue(REQUESTS, Duration.ofMinutes(1))
            .build();
    List<CompletableFuture<Decision>> decisions = admitAll();
    Await.until(() -> control.inFlight() == LIMIT, "the limit to fill");
    List<Ticket> first = tickets(decisions);
    assertEquals(LIMIT, first.size());
    first.forEach(Ticket::close);
    Await.until(() -> control.stats().admitted() == 2L * LIMIT, "the next to be admitted");
    Await.until(() -> control.inFlight() == LIMIT, "the limit to fill again");
    assertEquals(0, control.stats().rejectedTotal(), control.stats()::toString);
    tickets(decisions).forEach(Ticket::close);
  }
}
