package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Permit;
import dev.jeton.internal.ThisProcess;
import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** What the Redis semaphore adds to the contract, against a real redis-server. */
class RedisSemaphoreIntegrationTest extends RedisServerPerTest {
  private RedisSemaphore.Builder builder(String name) {
    return RedisSemaphore.builder(name).uri(server.uri());
  }

  private RedisSemaphore open(RedisSemaphore.Builder builder) {
    RedisSemaphore semaphore = builder.open();
    toClose.add(semaphore);
    return semaphore;
  }

  /** Calls of the semaphore's function (or of any script, should one be used instead). */
  private long evalCalls() {
    long calls = 0;
    for (String line : server.command("INFO", "commandstats").split("\n")) {
      if (line.startsWith("cmdstat_fcall:")
          || line.startsWith("cmdstat_evalsha:")
          || line.startsWith("cmdstat_eval:")) {
        calls += Long.parseLong(line.replaceAll("^[a-z_]+:calls=(\\d+),.*", "$1").trim());
      }
    }
    return calls;
  }

  @Test
  void uncontendedAcquireAndReleaseAreOneRoundTripEach() throws Exception {
    RedisSemaphore sem = open(builder("trips").limit(2));
    // The function is loaded from here on; wait for the release, which is sent, not awaited.
    assertTrue(sem.acquire(1).releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    long before = evalCalls();
    Lease lease = sem.acquire(1);
    assertEquals(before + 1, evalCalls(), "one function call to acquire");
    assertTrue(lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    assertEquals(before + 2, evalCalls(), "one function call to release");
  }

  @Test
  void shrinkingThenGrowingTheLimit_handsOutEachSlotOnceAndBelowTheLimit() throws Exception {
    RedisSemaphore sem = open(builder("slots").limit(3));
    Lease a = sem.acquire(1);
    Lease b = sem.acquire(1);
    Lease c = sem.acquire(1); // slots 0, 1, 2
    sem.setLimit(1); // 2 and 1 are retired when given back; 0 is still held
    assertTrue(c.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    assertTrue(b.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    assertTrue(sem.tryAcquire(1).isEmpty(), "a still holds the only permit");
    sem.setLimit(3); // 1 and 2 come back; 0 stays a's
    Lease d = sem.acquire(1);
    Lease e = sem.acquire(1);
    assertTrue(sem.tryAcquire(1).isEmpty(), "three held");
    java.util.Set<Integer> slots = new java.util.TreeSet<>();
    for (Lease lease : List.of(a, d, e)) {
      assertEquals(1, lease.fencingTokens().size());
      slots.add(lease.fencingTokens().get(0).slot());
    }
    assertEquals(java.util.Set.of(0, 1, 2), slots, "each slot once, all below the limit");
    long before = c.fencingTokens().get(0).token();
    for (Lease lease : List.of(d, e)) {
      assertTrue(lease.fencingTokens().get(0).token() > before, "tokens only grow");
    }
    for (Lease lease : List.of(a, d, e)) {
      assertTrue(lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    }
    assertEquals(3, sem.available());
  }

  @Test
  void open_checksTheLimitAndTheName() {
    open(builder("lim").limit(3));
    IllegalArgumentException other =
        assertThrows(IllegalArgumentException.class, () -> builder("lim").limit(4).open());
    assertTrue(other.getMessage().contains("exists with limit 3, not 4"), other.getMessage());
    assertEquals(3, open(builder("lim").limitIfNew(9)).limit(), "limitIfNew keeps the stored one");
    assertEquals(3, open(builder("lim")).limit(), "no limit: opens the existing one");
    IllegalArgumentException missing =
        assertThrows(IllegalArgumentException.class, () -> builder("nobody").open());
    assertTrue(
        missing.getMessage().contains("there is no semaphore 'nobody'"), missing.getMessage());
    for (String bad :
        List.of("", "a b", "a{b}", "a:b", "..", ".", ".hidden", "x".repeat(201), "é")) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> RedisSemaphore.builder(bad));
      assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> builder("x").limit(-1));
    assertThrows(IllegalArgumentException.class, () -> builder("x").limit(1 << 30));
    assertThrows(
        IllegalArgumentException.class,
        () -> RedisSemaphoreOptions.defaults().withKeyPrefix("a}b"));
    IllegalArgumentException noUri =
        assertThrows(IllegalArgumentException.class, () -> RedisSemaphore.builder("x").open());
    assertTrue(noUri.getMessage().contains("uri"), noUri.getMessage());
    IllegalArgumentException badUri =
        assertThrows(
            IllegalArgumentException.class,
            () -> RedisSemaphore.builder("x").uri("http://nowhere").limit(1).open());
    assertTrue(badUri.getMessage().contains("http://nowhere"), badUri.getMessage());
  }

  @Test
  void options_checkTheirSettingsTogether() {
    RedisSemaphoreOptions d = RedisSemaphoreOptions.defaults();
    assertEquals(Duration.ofSeconds(30), d.leaseTime());
    assertEquals(Duration.ofSeconds(10), d.withLeaseTime(Duration.ofSeconds(30)).renewInterval());
    assertThrows(IllegalArgumentException.class, () -> d.withRenewInterval(Duration.ofSeconds(30)));
    assertThrows(IllegalArgumentException.class, () -> d.withWaiterExpiry(Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class, () -> d.withLeaseTime(Duration.ZERO));
    assertThrows(
        IllegalArgumentException.class, () -> d.withReplicaAcks(-1, Duration.ofSeconds(1)));
    assertEquals(Duration.ofSeconds(5), d.withPollInterval(Duration.ofMillis(500)).waiterExpiry());
  }

  @Test
  void options_withLeaseTimeKeepsARenewIntervalSetExplicitly() {
    RedisSemaphoreOptions d = RedisSemaphoreOptions.defaults();
    assertEquals(
        Duration.ofSeconds(20),
        d.withLeaseTime(Duration.ofSeconds(60)).renewInterval(),
        "the default follows the lease time");
    assertEquals(
        Duration.ofSeconds(5),
        d.withRenewInterval(Duration.ofSeconds(5))
            .withLeaseTime(Duration.ofSeconds(60))
            .renewInterval(),
        "an interval set explicitly is kept");
    IllegalArgumentException tooLong =
        assertThrows(
            IllegalArgumentException.class,
            () -> d.withRenewInterval(Duration.ofSeconds(5)).withLeaseTime(Duration.ofSeconds(3)));
    assertTrue(tooLong.getMessage().contains("renewInterval (PT5S)"), tooLong.getMessage());
    assertEquals(
        Duration.ofSeconds(3),
        d.withWaiterExpiry(Duration.ofSeconds(3))
            .withPollInterval(Duration.ofMillis(500))
            .waiterExpiry(),
        "a waiter expiry set explicitly is kept too");
  }

  @Test
  void status_showsWhoHoldsAndWhoWaitsInOrder() throws Exception {
    RedisSemaphore sem = open(builder("who").limit(3).owner("the test"));
    Lease held = sem.acquire(2);
    CompletableFuture<Lease> first = sem.acquireLeaseAsync(2);
    CompletableFuture<Lease> second = sem.acquireLeaseAsync(1);
    RedisSemaphore.Status status = sem.status();
    assertEquals(3, status.limit());
    assertEquals(2, status.held());
    LeaseInfo holder = status.holders().get(0);
    assertEquals(held.id(), holder.id());
    assertEquals(2, holder.permits());
    assertEquals(ThisProcess.pid(), holder.pid());
    assertEquals(ThisProcess.hostName(), holder.host());
    assertEquals(System.getProperty("user.name"), holder.user());
    assertEquals("the test", holder.owner());
    assertEquals(held.fencingTokens(), holder.fencingTokens());
    assertNotNull(holder.expiresAt());
    assertEquals(List.of(2, 1), status.waiters().stream().map(LeaseInfo::permits).toList());
    assertNull(status.waiters().get(0).expiresAt());
    held.release();
    first.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).release();
    second.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).release();
    assertEquals(
        List.of("who"), RedisSemaphore.list(server.uri(), RedisSemaphoreOptions.defaults()));
  }

  @Test
  void leases_areRenewedWhileHeldAndTokensGrowPerSlot() throws Exception {
    Duration leaseTime = Duration.ofMillis(1500);
    RedisSemaphoreOptions quick = RedisSemaphoreOptions.defaults().withLeaseTime(leaseTime);
    RedisSemaphore sem = open(builder("renew").limit(2).options(quick));
    Lease lease = sem.acquire(2);
    java.time.Instant first = lease.expiresAt();
    // Held for more than three lease times: renewed (by Redis's clock) past them.
    Await.until(
        () -> lease.expiresAt().isAfter(first.plus(leaseTime.multipliedBy(3))) || !lease.isHeld(),
        "renewals past three lease times");
    assertTrue(lease.isHeld());
    assertFalse(lease.lost().toCompletableFuture().isDone());
    assertEquals(0, sem.available(), "Redis still has it");
    List<FencingToken> before = lease.fencingTokens();
    assertTrue(
        lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS),
        "released while held");
    assertFalse(
        lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS),
        "a second release says no");
    Lease again = sem.acquire(2);
    for (int i = 0; i < 2; i++) {
      assertEquals(before.get(i).slot(), again.fencingTokens().get(i).slot());
      assertTrue(again.fencingTokens().get(i).token() > before.get(i).token());
    }
    again.release();
  }

  @Test
  void functionFlushed_isReloadedTransparently() throws Exception {
    RedisSemaphore sem = open(builder("flush").limit(1));
    assertTrue(
        sem.acquire(1)
            .releaseAsync()
            .get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS)); // nothing in flight
    assertEquals("OK", server.command("FUNCTION", "FLUSH"));
    assertEquals("", server.command("FUNCTION", "LIST"), "no library left");
    Lease lease = sem.acquire(1, Await.HANG_GUARD);
    assertEquals(0, sem.available());
    lease.release();
    assertEquals(1, sem.available());
  }

  @Test
  void redisUnreachable_acquireFailsWithinItsTimeoutWithTheCause() throws Exception {
    // Recreated after the restart, it grants nothing for one lease time: keep that short.
    RedisSemaphore sem =
        open(
            builder("down")
                .limit(1)
                .options(RedisSemaphoreOptions.defaults().withLeaseTime(Duration.ofSeconds(2))));
    server.kill();
    TimeoutException e =
        assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ofMillis(500)));
    Throwable cause = e.getCause();
    assertNotNull(cause, "the timeout says why");
    while (cause.getCause() != null && !(cause instanceof RedisException)) {
      cause = cause.getCause();
    }
    assertInstanceOf(RedisException.class, cause, "the cause is Redis's: " + e.getCause());
    assertThrows(RedisException.class, () -> sem.tryAcquire(1));
    assertThrows(
        RedisException.class,
        () -> RedisSemaphore.builder("down").uri(server.uri()).limit(1).open(),
        "opening fails at once with the connection error");
    server.restart();
    Lease lease = sem.acquire(1, Await.HANG_GUARD); // and it recovers
    lease.release();
  }

  @Test
  void sentinelUri_findsThePrimaryThroughSentinel() throws Exception {
    try (RedisServer sentinel = RedisServer.startSentinel(server, "primary")) {
      String uri = "redis-sentinel://127.0.0.1:" + sentinel.port() + "#primary";
      RedisSemaphore a = open(RedisSemaphore.builder("watched").uri(uri).limit(1));
      RedisSemaphore b = open(builder("watched")); // straight to the primary: the same keys
      Lease lease = a.acquire(1);
      assertTrue(b.tryAcquire(1).isEmpty());
      CompletableFuture<Lease> next = b.acquireLeaseAsync(1);
      lease.release();
      next.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).release();
    }
  }

  @Test
  void setLimit_isSharedThroughRedis() throws Exception {
    RedisSemaphore a = open(builder("shared").limit(1));
    RedisSemaphore b = open(builder("shared"));
    Lease held = a.acquire(1);
    CompletableFuture<Lease> waiting = b.acquireLeaseAsync(1);
    a.setLimit(2);
    waiting.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).release();
    assertEquals(2, b.limit());
    assertTrue(b.tryAcquire(2).isEmpty(), "one permit is still held through a");
    // release() returns once the release is sent; another handle (another connection) may ask
    // before it arrives, so wait for Redis to confirm it.
    assertTrue(held.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
    b.tryAcquire(2).orElseThrow().release();
  }

  @Test
  void sharedClient_isLeftOpenWhenTheHandleCloses() throws Exception {
    RedisClient client = RedisClient.create(server.uri());
    try {
      String before = server.command("CLIENT", "LIST");
      RedisSemaphore one = RedisSemaphore.builder("c").client(client).limit(1).open();
      one.acquire(1).releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
      String channel = RedisSemaphores.wakeChannel(one);
      assertEquals(channel + "\n1", server.command("PUBSUB", "NUMSUB", channel));
      one.close();
      // The handle's own two connections close (and its subscription ends); the client stays.
      Await.until(
          () ->
              server.command("PUBSUB", "NUMSUB", channel).endsWith("\n0")
                  && server.command("CLIENT", "LIST").split("\n").length
                      == before.split("\n").length,
          "the closed handle's connections to go");
      RedisSemaphore two = RedisSemaphore.builder("c").client(client).open();
      assertEquals(1, two.available());
      two.close();
    } finally {
      client.shutdown();
    }
  }

  @Test
  void replicaAcks_waitForReplicasAndGiveBackGrantsTheyMiss() throws Exception {
    try (RedisServer replica = RedisServer.start()) {
      replica.command("REPLICAOF", "127.0.0.1", Integer.toString(server.port()));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!server.command("INFO", "replication").contains("connected_slaves:1")
          || !replica.command("INFO", "replication").contains("master_link_status:up")) {
        assertTrue(System.nanoTime() < deadline, "the replica to connect");
        Thread.sleep(20);
      }
      RedisSemaphore one =
          open(
              builder("acked")
                  .limit(1)
                  .options(
                      RedisSemaphoreOptions.defaults().withReplicaAcks(1, Duration.ofSeconds(2))));
      Lease lease = one.acquire(1, Await.HANG_GUARD);
      // the counters, used first
      assertTrue(
          replica.command("HGET", "{jeton:acked}:state", "c").startsWith("1|"),
          "the replica has the lease once it is granted");
      lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);

      RedisSemaphore two =
          open(
              builder("acked")
                  .options(
                      RedisSemaphoreOptions.defaults().withReplicaAcks(2, Duration.ofMillis(100))));
      TimeoutException e =
          assertThrows(TimeoutException.class, () -> two.acquire(1, Duration.ofSeconds(5)));
      assertTrue(
          String.valueOf(e.getCause()).contains("reached 1 replicas, not 2"),
          String.valueOf(e.getCause()));
      Await.until(() -> two.available() == 1, "grants that missed replicas to be given back");
    }
  }

  @Test
  void replicaAcks_twoSettlesOfOneGrant_failureFirst_theCallerHoldsWhatRedisHolds()
      throws Exception {
    twoSettlesOfOneGrant("failure-first", false);
  }

  @Test
  void replicaAcks_twoSettlesOfOneGrant_successFirst_theCallerHoldsWhatRedisHolds()
      throws Exception {
    twoSettlesOfOneGrant("success-first", true);
  }

  /**
   * One grant settled twice (a wake-up, and a poll's reply crossing it), with the replica waits
   * answered by the test: the first as {@code successFirst} says, any later one the other way.
   * Whatever the order, the caller must get a lease that Redis holds, and nothing else may stay
   * held or queued.
   */
  private void twoSettlesOfOneGrant(String name, boolean successFirst) throws Exception {
    RedisSemaphore other = open(builder(name).limit(1));
    BlockingQueue<CompletableFuture<Long>> waits = new LinkedBlockingQueue<>();
    AtomicBoolean acknowledgeAll = new AtomicBoolean();
    RedisSemaphore sem =
        RedisSemaphores.openAnsweringReplicaWaits(
            builder(name)
                .options(
                    RedisSemaphoreOptions.defaults().withReplicaAcks(1, Duration.ofSeconds(2))),
            () -> {
              if (acknowledgeAll.get()) {
                return CompletableFuture.completedFuture(1L);
              }
              CompletableFuture<Long> wait = new CompletableFuture<>();
              waits.add(wait);
              return wait;
            });
    toClose.add(sem);
    Lease held = other.acquire(1);
    CompletableFuture<Lease> waiter = sem.acquireLeaseAsync(1);
    Await.until(() -> other.queueLength() == 1, "the waiter to queue");
    held.release(); // grants the waiter in Redis and wakes it up
    CompletableFuture<Long> first = waits.poll(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    assertNotNull(first, "the grant's replica wait");

    // The same grant again, as a poll's reply crossing the wake-up brings it.
    LeaseInfo grant = other.status().holders().get(0);
    RedisSemaphores.wakeUp(
        sem,
        System.currentTimeMillis()
            + " "
            + grant.id()
            + "|granted|"
            + grant.expiresAt().toEpochMilli()
            + "|"
            + FencingToken.format(grant.fencingTokens()));
    List<CompletableFuture<Long>> later = new ArrayList<>();
    waits.drainTo(later);
    acknowledgeAll.set(true);
    first.complete(successFirst ? 1L : 0L);
    later.forEach(wait -> wait.complete(successFirst ? 0L : 1L));
    waits.forEach(wait -> wait.complete(1L));

    Lease lease = waiter.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    Await.until(
        () -> {
          RedisSemaphore.Status status = other.status();
          return status.waiters().isEmpty()
              && status.holders().stream().map(LeaseInfo::id).toList().equals(List.of(lease.id()));
        },
        "Redis to hold the caller's lease " + lease.id() + " and nothing else");
    assertTrue(
        lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS), "Redis held it");
  }

  @Test
  void acquireAsync_neverWaitsForRedis() throws Exception {
    RedisSemaphore stale = open(builder("async").limit(1));
    open(builder("async")).setLimit(3); // this handle still knows the limit as 1
    server.pause();
    CompletableFuture<Permit> pending;
    try {
      // Checked against the limit last seen, without asking the stopped server.
      assertThrows(IllegalArgumentException.class, () -> stale.acquireAsync(2));
      pending = stale.acquireAsync(1);
      assertFalse(pending.isDone(), "Redis cannot have answered");
    } finally {
      server.resume();
    }
    pending.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS).release();
  }

  /**
   * Regression test: close() returned while the handle's own client was still stopping, and a JVM
   * that exits while one of its threads is in native code (an I/O thread in its selector) waits 300
   * ms first: a third of `jeton run --redis` commands took that much longer.
   */
  @Test
  void close_withNoLeaseHeld_returnsWhenTheHandlesOwnThreadsHaveStopped() throws Exception {
    for (int round = 0; round < 20; round++) { // the threads were stopping, and often done
      java.util.Set<Long> before = new java.util.HashSet<>();
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        before.add(t.getId());
      }
      RedisSemaphore sem = builder("threads").limit(1).open();
      sem.acquire(1).release();
      List<Thread> started = new ArrayList<>();
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (!before.contains(t.getId()) && t.getName().startsWith("lettuce-")) {
          started.add(t);
        }
      }
      assertFalse(started.isEmpty(), "the handle's client started threads");
      sem.close();
      for (Thread t : started) {
        assertFalse(
            t.isAlive(),
            "round "
                + round
                + ": "
                + t.getName()
                + " runs after close(): "
                + java.util.Arrays.toString(t.getStackTrace()));
      }
    }
  }

  @Test
  void close_onAnIoThreadOfACallersClient_doesNotBlockIt() throws Exception {
    // One I/O thread, named as no Lettuce default is: the reply close() would wait for could
    // only be read by the thread that waits.
    ClientResources resources =
        DefaultClientResources.builder()
            .ioThreadPoolSize(1)
            .threadFactoryProvider(pool -> task -> new Thread(task, "custom-" + pool))
            .build();
    RedisClient client = RedisClient.create(resources, server.uri());
    try {
      RedisSemaphore holder = open(builder("io-close").limit(1));
      RedisSemaphore sem =
          builder("io-close").client(client).completionExecutor(Runnable::run).open();
      Lease held = holder.acquire(1);
      CompletableFuture<Lease> first = sem.acquireLeaseAsync(1);
      CompletableFuture<Lease> second = sem.acquireLeaseAsync(1); // withdrawn by close()
      Await.until(() -> holder.queueLength() == 2, "both to queue");
      CompletableFuture<Thread> closer = new CompletableFuture<>();
      AtomicBoolean closeReturned = new AtomicBoolean();
      first.thenAccept(
          lease -> {
            closer.complete(Thread.currentThread());
            sem.close(); // on the I/O thread that settled the grant
            closeReturned.set(true);
            lease.release();
          });
      held.release();
      Thread io = closer.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
      assertTrue(io.getName().startsWith("custom-"), io.getName());
      Await.until(() -> closeReturned.get() || waitsInClose(io), "close() to return or to wait");
      assertTrue(closeReturned.get(), "close() waited on the I/O thread");
      assertThrows(
          Exception.class, () -> second.get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
      Await.until(() -> holder.available() == 1, "the lease to be released");
    } finally {
      client.shutdown();
      resources.shutdown();
    }
  }

  private static boolean waitsInClose(Thread thread) {
    Thread.State state = thread.getState();
    if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
      return false;
    }
    for (StackTraceElement frame : thread.getStackTrace()) {
      if (frame.getClassName().equals(RedisSemaphore.class.getName())
          && frame.getMethodName().equals("close")) {
        return true;
      }
    }
    return false;
  }
}
