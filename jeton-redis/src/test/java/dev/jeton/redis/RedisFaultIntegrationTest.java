package dev.jeton.redis;

import static dev.jeton.redis.RedisSemaphores.rawCall;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Faults against real redis-server processes and real client processes: a holder killed or paused,
 * Redis restarted empty, the wake-up connection killed, requests replayed.
 */
class RedisFaultIntegrationTest extends RedisServerPerTest {
  private static final Duration LEASE = Duration.ofMillis(1500);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration PATIENCE = Await.HANG_GUARD; // only against a hang

  private RedisSemaphore open(String name, int limit) {
    return open(
        name, limit, RedisSemaphoreOptions.defaults().withLeaseTime(LEASE).withPollInterval(POLL));
  }

  /** How this test's own handles reach Redis: {@link RedisSemaphore.Builder#jedis()} or not. */
  boolean jedis() {
    return false;
  }

  private RedisSemaphore open(String name, int limit, RedisSemaphoreOptions options) {
    RedisSemaphore.Builder builder =
        RedisSemaphore.builder(name).uri(server.uri()).limitIfNew(limit).options(options);
    if (jedis()) {
      builder.jedis();
    }
    RedisSemaphore semaphore = builder.open();
    toClose.add(semaphore);
    return semaphore;
  }

  private ChildJvm holder(String name, int limit, int permits) {
    ChildJvm child =
        ChildJvm.start(
            LeaseHolder.class,
            server.uri(),
            name,
            Integer.toString(limit),
            Long.toString(LEASE.toMillis()),
            Integer.toString(permits));
    toClose.add(child);
    return child;
  }

  @Test
  void killedHolder_permitsReturnAfterTheLeaseAndWaitersGetThemInFifoOrder() throws Exception {
    RedisSemaphore sem = open("killed", 2);
    ChildJvm child = holder("killed", 2, 2);
    child.await("GRANTED");
    List<String> order = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Lease>> waiters = new ArrayList<>();
    for (String who : List.of("first", "second", "third")) {
      CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
      waiter.thenRun(() -> order.add(who));
      waiters.add(waiter);
      int queued = waiters.size();
      Await.until(() -> sem.queueLength() == queued, who + " to queue");
    }

    child.signal("KILL");
    Lease first = waiters.get(0).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    Lease second = waiters.get(1).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertFalse(waiters.get(2).isDone(), "only two permits came back");
    first.release();
    waiters.get(2).get(PATIENCE.toSeconds(), TimeUnit.SECONDS).release();
    second.release();
    Await.until(() -> order.size() == 3, "all three to be granted");
    // The first two are granted by one script, so their callbacks may run in either order.
    assertEquals("third", order.get(2), "the third waiter is served last: " + order);
  }

  @Test
  void killedWaiter_dropsOutOfTheQueueAfterTheWaiterExpiry() throws Exception {
    RedisSemaphore sem = open("dead-waiter", 1);
    Lease held = sem.acquire(1);
    ChildJvm waiter = holder("dead-waiter", 1, 1); // queues: the permit is held here
    Await.until(() -> sem.queueLength() == 1, "the child to queue");
    CompletableFuture<Lease> behind = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 2, "this process to queue behind it");

    waiter.signal("KILL");
    // The child polled every 100 ms, so its entry expires 1 s after its last poll (ten polls).
    Await.until(() -> sem.queueLength() == 1, "the dead waiter to drop out of the queue");
    assertEquals(1, sem.status().waiters().size());
    assertEquals(ProcessHandle.current().pid(), sem.status().waiters().get(0).pid());
    held.release(); // straight to the live waiter, not to the dead one
    Lease lease = behind.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertEquals(0, sem.queueLength());
    lease.release();
  }

  /**
   * A waiter killed while queued, before its grant: the grant it never picks up lasts only as long
   * as its queue entry would have (its waiter expiry after its last poll), not its lease time, and
   * its slot goes to the next waiter with a newer fencing token. (It was held for the whole lease
   * before: 30 s by default.)
   */
  @Test
  void waiterKilledBeforeItsGrant_permitsComeBackAtItsWaiterExpiryNotItsLeaseTime()
      throws Exception {
    long waiterExpiryMillis = 2000;
    RedisSemaphore sem = open("dead-grant", 1);
    Lease held = sem.acquire(1);
    ChildJvm dead =
        ChildJvm.start(
            LeaseHolder.class,
            server.uri(),
            "dead-grant",
            "1",
            "60000",
            "1",
            Long.toString(waiterExpiryMillis));
    toClose.add(dead);
    Await.until(() -> sem.queueLength() == 1, "the child to queue");
    CompletableFuture<Lease> next = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 2, "this process to queue behind it");
    dead.signal("KILL");
    dead.waitFor();

    held.release(); // to the dead waiter, first in line, whose queue entry is still alive
    Await.until(() -> sem.status().waiters().size() == 1, "the dead waiter's grant");
    LeaseInfo grant = sem.status().holders().get(0);
    assertEquals(dead.pid(), grant.pid());
    long lastsMillis = grant.expiresAt().toEpochMilli() - grant.since().toEpochMilli();
    assertTrue(
        lastsMillis <= waiterExpiryMillis,
        "the grant lasts until the waiter's entry would have expired, by Redis's clock: "
            + lastsMillis
            + " ms");

    Lease lease = next.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    FencingToken before = grant.fencingTokens().get(0);
    FencingToken after = lease.fencingTokens().get(0);
    assertEquals(before.slot(), after.slot());
    assertTrue(after.token() > before.token(), before + " then " + after);
    lease.release();
  }

  /**
   * A waiter paused (SIGSTOP) as it is granted, for longer than its waiter expiry: its grant
   * expires and goes to the next waiter. Once it runs again it must not take the expired grant for
   * a lease (one already lost, with a token older than the new holder's): it queues again, and gets
   * a lease of its own when the new holder releases.
   */
  @Test
  void waiterPausedAcrossItsGrant_queuesAgainInsteadOfTakingTheExpiredGrant() throws Exception {
    RedisSemaphore sem = open("paused-grant", 1);
    Lease held = sem.acquire(1);
    ChildJvm paused =
        ChildJvm.start(LeaseHolder.class, server.uri(), "paused-grant", "1", "60000", "1", "1500");
    toClose.add(paused);
    Await.until(() -> sem.queueLength() == 1, "the child to queue");
    CompletableFuture<Lease> next = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 2, "this process to queue behind it");
    paused.pause(); // before the grant: a child that heard of it first would hold a real lease
    held.release(); // to the paused waiter, until its waiter expiry

    Lease lease = next.get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // once that grant expired
    paused.signal("CONT");
    Await.until(() -> sem.queueLength() == 1, "the paused waiter to queue again");
    assertFalse(
        paused.drain().stream().anyMatch(line -> line.startsWith("GRANTED")),
        "no lease while this one holds the only permit");
    long newer = lease.fencingTokens().get(0).token();
    lease.release();
    String granted = paused.await("GRANTED");
    assertTrue(FencingToken.parse(granted.split(" ")[2]).get(0).token() > newer, granted);
    paused.tell("release");
    assertEquals("RELEASED true", paused.await("RELEASED"));
  }

  /**
   * A live waiter granted from the queue, whose grant lasts its waiter expiry until it renews it
   * (see above), renews it into a whole lease itself: it still holds once that expiry has passed by
   * Redis's clock, long before the handle's first round of renewals (20 s here).
   */
  @Test
  void waiterGrantedFromTheQueue_keepsItsLeasePastItsWaiterExpiry() throws Exception {
    long waiterExpiryMillis = 1500;
    RedisSemaphoreOptions options =
        RedisSemaphoreOptions.defaults()
            .withLeaseTime(Duration.ofSeconds(60))
            .withPollInterval(POLL)
            .withWaiterExpiry(Duration.ofMillis(waiterExpiryMillis));
    RedisSemaphore sem = open("renewed-grant", 1, options);
    Lease held = sem.acquire(1);
    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 1, "the waiter to queue");
    held.release();
    Lease granted = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    long since = sem.status().holders().get(0).since().toEpochMilli();

    Await.until(() -> serverMillis() > since + waiterExpiryMillis, "the waiter expiry to pass");
    assertTrue(granted.isHeld());
    assertFalse(granted.lost().toCompletableFuture().isDone(), "never lost");
    LeaseInfo info = sem.status().holders().get(0);
    assertEquals(granted.id(), info.id());
    assertTrue(info.expiresAt().toEpochMilli() - since > waiterExpiryMillis, "renewed: " + info);
    assertTrue(granted.releaseAsync().get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
  }

  /** The Redis server's clock, in milliseconds. */
  private long serverMillis() {
    String[] time = server.command("TIME").split("\n");
    return Long.parseLong(time[0].trim()) * 1000 + Long.parseLong(time[1].trim()) / 1000;
  }

  @Test
  void pausedHolder_losesItsLeaseToAWaiterLearnsItAndIsFencedOff() throws Exception {
    RedisSemaphore sem = open("paused", 1);
    ChildJvm child = holder("paused", 1, 1);
    String granted = child.await("GRANTED");
    List<FencingToken> stale = FencingToken.parse(granted.split(" ")[2]);
    FencingGuard resource = new FencingGuard();
    assertTrue(resource.admit(FencingToken.parse(child.await("WRITE").substring(6))));

    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    child.signal("STOP");
    Lease taken = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // after the lease time
    assertEquals(stale.get(0).slot(), taken.fencingTokens().get(0).slot(), "the same slot");
    assertTrue(taken.fencingTokens().get(0).token() > stale.get(0).token(), "a newer token");
    assertTrue(resource.admit(taken.fencingTokens()), "the new holder writes");

    child.drain();
    child.signal("CONT");
    String lost = child.await("LOST");
    assertTrue(lost.contains("renew") || lost.contains("no longer held"), lost);
    for (String line : child.drain()) {
      if (line.startsWith("WRITE")) {
        assertFalse(
            resource.admit(FencingToken.parse(line.substring(6))),
            "a write from the paused holder after resuming must be rejected: " + line);
      }
    }
    assertFalse(resource.admit(stale), "the stale holder's tokens are rejected");
    assertTrue(taken.isHeld());
    child.tell("release");
    assertEquals("RELEASED false", child.await("RELEASED"), "its release was a no-op");
    taken.release();
  }

  @Test
  void redisRestart_holdersLearnTheirLeasesAreLostAndWaitersRecover() throws Exception {
    RedisSemaphore sem = open("restart", 1);
    Lease held = sem.acquire(1);
    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 1, "the waiter to queue");

    server.restart(); // no persistence: every key is gone

    Lease.LeaseLoss loss =
        held.lost().toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertTrue(
        loss.reason().contains("no longer held") || loss.reason().contains("renew"), loss.reason());
    assertFalse(held.isHeld());
    Lease recovered = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertTrue(recovered.isHeld());
    FencingToken before = held.fencingTokens().get(0);
    FencingToken after = recovered.fencingTokens().get(0);
    assertEquals(before.slot(), after.slot());
    assertTrue(
        after.token() > before.token(),
        "tokens keep growing although Redis lost them: " + before + " then " + after);
    assertEquals(1, sem.limit(), "the semaphore is recreated with the limit this handle knew");
    recovered.release();
    sem.acquire(1, PATIENCE).release();
    assertEquals(1, sem.available());
  }

  /**
   * Only the state key lost (a DEL, or an eviction of that key alone) while the queue key stays,
   * headed by a waiter whose process was killed: the semaphore is recreated as after a restart, not
   * wedged by a queue head whose record went with the state (regression: every call failed on that
   * head from then on).
   */
  @Test
  void stateKeyAloneLost_underADeadWaiter_holdersLearnItAndLiveWaitersRecover() throws Exception {
    RedisSemaphore sem = open("state-lost", 1);
    Lease held = sem.acquire(1);
    ChildJvm dead = holder("state-lost", 1, 1); // queues: the permit is held here
    Await.until(() -> sem.queueLength() == 1, "the child to queue");
    dead.signal("KILL");
    String base = "{" + RedisSemaphoreOptions.DEFAULT_KEY_PREFIX + ":state-lost}:";

    assertEquals("1", server.command("DEL", base + "state"));
    assertEquals("1", server.command("EXISTS", base + "queue"), "the queue key stays");

    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    held.lost().toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertFalse(held.isHeld());
    Lease recovered = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertTrue(recovered.isHeld());
    recovered.release();
    sem.acquire(1, PATIENCE).release();
    assertEquals(1, sem.available());
    assertEquals(0, sem.queueLength());
  }

  @Test
  void redisRestart_noWaiterIsGrantedBeforeEveryOldHolderKnowsItsLeaseIsLost() throws Exception {
    noWaiterGrantedBeforeEveryOldHolderKnows("restart-limit", 3);
  }

  /**
   * The same with 3,000 holders, as a fleet-wide limit of thousands has: their renewals go in
   * batches, and every batch must learn of the loss before any waiter is granted.
   */
  @Test
  void redisRestart_withThousandsOfHolders_noWaiterIsGrantedBeforeEveryOneKnows() throws Exception {
    noWaiterGrantedBeforeEveryOldHolderKnows("restart-many", 3000);
  }

  private void noWaiterGrantedBeforeEveryOldHolderKnows(String name, int holderCount)
      throws Exception {
    // The holders renew rarely (every 2.5 s of a 3 s lease) and the waiters poll often, so after
    // the restart the waiters reach the empty Redis well before the holders' next renewal.
    RedisSemaphoreOptions options =
        RedisSemaphoreOptions.defaults()
            .withLeaseTime(Duration.ofSeconds(3))
            .withRenewInterval(Duration.ofMillis(2500))
            .withPollInterval(POLL);
    RedisSemaphore holding = open(name, holderCount, options);
    RedisSemaphore queueing = open(name, holderCount, options);
    List<Lease> holders = RedisSemaphores.takeLeases(holding, holderCount);
    // How many old holders still believed they held, at each grant to a waiter.
    List<Long> believersAtGrant = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Lease>> waiters = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      CompletableFuture<Lease> waiter = queueing.acquireLeaseAsync(1);
      waiter.thenRun(() -> believersAtGrant.add(holders.stream().filter(Lease::isHeld).count()));
      waiters.add(waiter);
    }
    Await.until(() -> holding.queueLength() == 3, "the waiters to queue");

    server.restart(); // no persistence: every key is gone

    for (CompletableFuture<Lease> waiter : waiters) {
      waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }
    Await.until(() -> believersAtGrant.size() == 3, "the grant callbacks");
    assertEquals(
        List.of(0L, 0L, 0L),
        believersAtGrant,
        "old holders that still believed they held when a waiter was granted (limit "
            + holderCount
            + ")");
    for (Lease holder : holders) {
      holder.lost().toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }
    for (CompletableFuture<Lease> waiter : waiters) {
      waiter.join().release();
    }
  }

  /**
   * Redis out of memory under noeviction refuses every call of the function: a new acquire fails
   * with its error, a held lease whose renewals are refused is lost at the end of its lease time
   * and says why, and once memory frees up the semaphore works again.
   */
  @Test
  void redisOutOfMemory_acquiresFailWithItsErrorAndHeldLeasesAreLost() throws Exception {
    RedisSemaphore sem = open("full", 2);
    Lease held = sem.acquire(1);
    server.command("CONFIG", "SET", "maxmemory", "1"); // over it already: every write refused
    try {
      RuntimeException refused = assertThrows(RuntimeException.class, () -> sem.tryAcquire(1));
      assertTrue(String.valueOf(refused.getMessage()).contains("OOM"), refused.toString());
      Lease.LeaseLoss loss =
          held.lost().toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
      assertTrue(
          loss.reason().contains("could not be renewed") && loss.reason().contains("OOM"),
          loss.reason());
    } finally {
      server.command("CONFIG", "SET", "maxmemory", "0");
    }
    Await.until(() -> sem.available() == 2, "the lost lease's permit to come back");
    sem.acquire(1, PATIENCE).release();
  }

  @Test
  void wakeUpsLost_waitersStillGetTheirLeaseByPolling() throws Exception {
    RedisSemaphore sem = open("pubsub", 1);
    RedisSemaphore deaf = open("pubsub", 1);
    RedisSemaphores.deafen(deaf); // every message to it is lost
    Lease held = sem.acquire(1);
    CompletableFuture<Lease> waiter = deaf.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 1, "the waiter to queue");

    server.command("CLIENT", "KILL", "TYPE", "pubsub"); // and every subscription breaks
    assertTrue(held.releaseAsync().get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
    assertTrue(
        waiter
            .get(PATIENCE.toSeconds(), TimeUnit.SECONDS)
            .releaseAsync()
            .get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
    assertEquals(1, sem.available());

    // And once Lettuce has resubscribed, wake-ups arrive again.
    Lease again = sem.acquire(1);
    CompletableFuture<Lease> next = sem.acquireLeaseAsync(1);
    again.release();
    next.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).release();
  }

  @Test
  void replayedAcquire_neverYieldsTwoLeases() throws Exception {
    RedisSemaphore sem = open("replay", 2);
    String lease = Long.toString(LEASE.toMillis());
    String[] request = {"queue", "the-request", "1", lease, "h\t1\ttest"};
    List<Object> first = rawCall(sem, "acquire", request).toCompletableFuture().get();
    List<Object> second = rawCall(sem, "acquire", request).toCompletableFuture().get();
    assertEquals("granted", ((List<?>) first.get(0)).get(1));
    assertEquals(first, second, "the replay returns the same lease");
    assertEquals(1, sem.available(), "one permit held, not two");

    rawCall(sem, "release", "the-request").toCompletableFuture().get();
    List<Object> late = rawCall(sem, "acquire", request).toCompletableFuture().get();
    assertEquals("released", ((List<?>) late.get(0)).get(1), "a replay after release is refused");
    assertEquals(2, sem.available());

    String[] cancelled = {"queue", "cancelled-request", "1", lease, "h\t1\ttest"};
    rawCall(sem, "cancel", "cancelled-request").toCompletableFuture().get();
    List<Object> afterCancel = rawCall(sem, "acquire", cancelled).toCompletableFuture().get();
    assertEquals("cancelled", ((List<?>) afterCancel.get(0)).get(1));
    assertEquals(2, sem.available());
  }

  @Test
  void lostReply_retriedUnderTheSameIdTakesOneLease() throws Exception {
    RedisSemaphore sem = open("lost-reply", 1);
    // A reply lost on the way back: Redis ran the acquire, the client never heard. The client's
    // next poll of the same request id must find the lease it already has, not take another.
    Lease held = sem.acquire(1);
    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    Await.until(() -> sem.queueLength() == 1, "the waiter to queue");
    String id = RedisSemaphores.waitingIds(sem).iterator().next();
    held.release(); // grants the waiter in Redis
    Lease granted = waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    String lease = Long.toString(LEASE.toMillis());
    List<Object> replay =
        rawCall(sem, "acquire", "queue", id, "1", lease, "h\t1\ttest").toCompletableFuture().get();
    assertEquals("granted", ((List<?>) replay.get(0)).get(1));
    assertEquals(granted.id(), ((List<?>) replay.get(0)).get(0));
    assertEquals(0, sem.available(), "still one lease");
    granted.release();
    assertEquals(1, sem.available());
  }
}
