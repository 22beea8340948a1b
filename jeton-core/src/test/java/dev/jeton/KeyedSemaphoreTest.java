package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What a {@link KeyedSemaphore} adds to the semaphore contract (run by KeyedSemaphoreContractTest).
 */
class KeyedSemaphoreTest {

  @Test
  void keys_areIndependent() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(2);
    Permit a1 = hosts.forKey("a").acquire(2);
    assertTrue(hosts.forKey("a").tryAcquire(1).isEmpty(), "a is full");
    Permit b1 = hosts.forKey("b").acquire(2); // b is not
    assertEquals(0, hosts.forKey("a").available());
    assertEquals(2, hosts.forKey("c").available(), "an unused key has its whole limit");
    a1.release();
    b1.release();
  }

  @Test
  void viewsOfOneKey_shareItsState() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(1);
    Semaphore first = hosts.forKey("a");
    Semaphore second = hosts.forKey(new String("a"));
    Permit held = first.acquire(1);
    assertTrue(second.tryAcquire(1).isEmpty());
    CompletableFuture<Permit> queued = second.acquireAsync(1);
    assertEquals(1, first.queueLength());
    held.release();
    queued.get(5, TimeUnit.SECONDS).release();
  }

  // ------------------------------------------------------------------ entries and memory

  @Test
  void entries_existWhileAKeyIsInUseAndAreRemovedWhenIdle() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(1);
    assertEquals(0, hosts.keyCount());
    Permit held = hosts.forKey("a").acquire(1);
    CompletableFuture<Permit> queued = hosts.forKey("a").acquireAsync(1);
    Permit other = hosts.forKey("b").acquire(1);
    assertEquals(2, hosts.keyCount());
    other.release();
    assertEquals(1, hosts.keyCount(), "b is idle: removed");
    held.release(); // grants the queued request: a is still in use
    assertEquals(1, hosts.keyCount());
    queued.get(5, TimeUnit.SECONDS).release();
    assertEquals(0, hosts.keyCount());
  }

  @Test
  void entries_doNotGrowWithTheNumberOfKeysEverSeen() throws Exception {
    KeyedSemaphore<Integer> tenants = KeyedSemaphore.create(3);
    for (int key = 0; key < 200_000; key++) {
      Semaphore semaphore = tenants.forKey(key);
      semaphore.acquire(1).release();
      semaphore.tryAcquire(2).orElseThrow().release();
      semaphore.acquireAsync(1).join().release();
      Permit all = semaphore.acquireAsync(3, Duration.ofSeconds(1)).join();
      assertTrue(semaphore.acquireAsync(1).cancel(false), "queued behind the 3, then withdrawn");
      all.release();
      assertTrue(semaphore.awaitIdle().isDone());
      assertTrue(tenants.keyCount() <= 1, "at most the key in use has an entry");
    }
    assertEquals(0, tenants.keyCount());
  }

  @Test
  void failedAndWithdrawnRequests_giveTheirEntryBack() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(1);
    Semaphore a = hosts.forKey("a");
    Permit held = a.acquire(1);
    CompletableFuture<Permit> cancelled = a.acquireAsync(1);
    cancelled.cancel(false);
    assertThrows(TimeoutException.class, () -> a.acquire(1, Duration.ofMillis(10)));
    CompletableFuture<Permit> timedOut = a.acquireAsync(1, Duration.ofMillis(10));
    assertThrows(ExecutionException.class, () -> timedOut.get(5, TimeUnit.SECONDS));
    assertTrue(a.tryAcquire(1).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> a.acquire(2));
    assertThrows(IllegalArgumentException.class, () -> hosts.forKey("b").acquireAsync(2));
    assertEquals(1, hosts.keyCount());
    held.release();
    assertEquals(0, hosts.keyCount(), "nothing left holding an entry");
  }

  @Test
  void awaitIdle_keepsTheEntryUntilItCompletes() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(2);
    Permit held = hosts.forKey("a").acquire(1);
    CompletableFuture<Void> idle = hosts.forKey("a").awaitIdle();
    held.release();
    idle.get(5, TimeUnit.SECONDS);
    assertEquals(0, hosts.keyCount());
    Permit again = hosts.forKey("a").acquire(1);
    CompletableFuture<Void> withdrawn = hosts.forKey("a").awaitIdle();
    withdrawn.cancel(false);
    again.release();
    assertEquals(0, hosts.keyCount());
  }

  @Test
  void setLimit_keepsTheEntryWhileTheLimitDiffersFromTheConfiguredOne() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(2);
    Semaphore a = hosts.forKey("a");
    a.setLimit(5);
    assertEquals(1, hosts.keyCount(), "idle, but its limit is not the configured one");
    assertEquals(5, hosts.forKey("a").limit());
    hosts.forKey("a").acquire(5).release();
    assertEquals(5, a.available());
    a.setLimit(2);
    assertEquals(0, hosts.keyCount(), "back to the configured limit: like new, so removed");
    assertEquals(2, a.limit());
  }

  @Test
  void limitPerKeyFunction_givesEachKeyItsOwnLimit() throws Exception {
    Map<String, Integer> plans = Map.of("free", 1, "pro", 10);
    KeyedSemaphore<String> tenants =
        KeyedSemaphore.builder().<String>limitPerKey(plans::get).build();
    assertEquals(1, tenants.forKey("free").limit());
    assertEquals(10, tenants.forKey("pro").limit());
    Permit ten = tenants.forKey("pro").acquire(10);
    assertThrows(IllegalArgumentException.class, () -> tenants.forKey("free").acquire(2));
    ten.release();
  }

  @Test
  void limitPerKeyFunction_outOfRange_failsTheRequestWithAMessage() {
    KeyedSemaphore<String> tenants = KeyedSemaphore.builder().<String>limitPerKey(k -> -3).build();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> tenants.forKey("x").acquire(1));
    assertTrue(e.getMessage().contains("'x'") && e.getMessage().contains("-3"), e.getMessage());
    assertEquals(0, tenants.keyCount());
  }

  // ------------------------------------------------------------------ closing

  @Test
  void closingAKey_failsItsQueueRefusesItAndLeavesOtherKeysAlone() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.builder().name("hosts").limitPerKey(1).build();
    Permit held = hosts.forKey("a").acquire(1);
    CompletableFuture<Permit> queued = hosts.forKey("a").acquireAsync(1);
    hosts.forKey("a").close();
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> queued.get(5, TimeUnit.SECONDS));
    assertInstanceOf(SemaphoreClosedException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains("hosts[a]"), e.getCause().getMessage());
    assertThrows(SemaphoreClosedException.class, () -> hosts.forKey("a").tryAcquire(1));
    hosts.forKey("b").acquire(1).release();
    held.release(); // still valid
    assertEquals(1, hosts.keyCount(), "a closed key keeps its entry, so it stays closed");
    assertThrows(SemaphoreClosedException.class, () -> hosts.forKey("a").acquire(1));
  }

  @Test
  void close_failsEveryQueueRefusesEveryKeyAndKeepsHeldPermits() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.builder().limitPerKey(1).globalLimit(2).build();
    Permit a = hosts.forKey("a").acquire(1);
    Permit b = hosts.forKey("b").acquire(1);
    CompletableFuture<Permit> waitingForKey = hosts.forKey("a").acquireAsync(1);
    CompletableFuture<Permit> waitingForGlobal = hosts.forKey("c").acquireAsync(1);
    assertEquals(1, hosts.forKey("c").queueLength());
    hosts.close();
    for (CompletableFuture<Permit> f : List.of(waitingForKey, waitingForGlobal)) {
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
      assertInstanceOf(SemaphoreClosedException.class, e.getCause());
    }
    assertThrows(SemaphoreClosedException.class, () -> hosts.forKey("new").acquire(1));
    assertThrows(SemaphoreClosedException.class, () -> hosts.forKey("new").tryAcquire(1));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> hosts.forKey("new").acquireAsync(1).get());
    assertInstanceOf(SemaphoreClosedException.class, e.getCause());
    assertEquals(1, hosts.forKey("c").available(), "c's key permit was given back");
    a.release();
    b.release();
    assertEquals(0, hosts.keyCount());
    assertEquals(OptionalInt.of(2), hosts.globalAvailable());
  }

  @Test
  void afterClose_noKeyKeepsAnEntry() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(2);
    hosts.forKey("changed").setLimit(5); // kept while open: its limit differs
    hosts.forKey("closed").close(); // kept while open: it stays closed
    Permit held = hosts.forKey("held").acquire(1);
    hosts.forKey("held").setLimit(3);
    assertEquals(3, hosts.keyCount());
    hosts.close();
    assertEquals(1, hosts.keyCount(), "only the key in use: the others can never be used again");
    held.release();
    assertEquals(0, hosts.keyCount(), "its last use is over");
    assertThrows(SemaphoreClosedException.class, () -> hosts.forKey("changed").acquire(1));
  }

  @Test
  void afterClose_operationsOnAKeyLeaveNoEntry() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.create(2);
    hosts.close();
    hosts.forKey("new").setLimit(7);
    hosts.forKey("new").close();
    hosts.forKey("new").awaitIdle().get(5, TimeUnit.SECONDS);
    assertEquals(0, hosts.keyCount(), "an operation after close leaves no entry behind");
    assertThrows(SemaphoreClosedException.class, () -> hosts.forKey("new").acquire(1));
  }

  @Test
  void awaitIdle_ofAnIdleKey_makesNoEntry() throws Exception {
    java.util.concurrent.atomic.AtomicInteger entriesMade =
        new java.util.concurrent.atomic.AtomicInteger();
    KeyedSemaphore<String> hosts =
        KeyedSemaphore.builder()
            .<String>limitPerKey(
                key -> {
                  entriesMade.incrementAndGet(); // asked when an entry is made
                  return 2;
                })
            .build();
    assertTrue(hosts.forKey("a").awaitIdle().isDone(), "an idle key is idle at once");
    assertEquals(0, entriesMade.get());
    hosts.close();
    assertTrue(hosts.forKey("b").awaitIdle().isDone());
    assertEquals(0, entriesMade.get());
  }

  // ------------------------------------------------------------------ the global limit

  @Test
  void globalLimit_boundsAllKeysTogether() throws Exception {
    KeyedSemaphore<String> hosts = KeyedSemaphore.builder().limitPerKey(2).globalLimit(3).build();
    Permit a1 = hosts.forKey("a").acquire(1);
    Permit a2 = hosts.forKey("a").acquire(1);
    Permit b1 = hosts.forKey("b").acquire(1);
    assertTrue(hosts.forKey("b").tryAcquire(1).isEmpty(), "b has room, the global limit has not");
    CompletableFuture<Permit> b2 = hosts.forKey("b").acquireAsync(1);
    assertFalse(b2.isDone());
    assertEquals(
        1, hosts.forKey("b").queueLength(), "waiting for the global limit counts as queued");
    assertEquals(0, hosts.forKey("b").available(), "its key permit is taken while it waits");
    assertEquals(OptionalInt.of(0), hosts.globalAvailable());
    a1.release();
    Permit granted = b2.get(5, TimeUnit.SECONDS);
    assertEquals(1, granted.permits());
    for (Permit p : List.of(a2, b1, granted)) {
      p.release();
    }
    assertEquals(OptionalInt.of(3), hosts.globalAvailable());
    assertEquals(0, hosts.keyCount());
  }

  @Test
  void globalLimit_isServedInTheOrderRequestsReachIt() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(4).globalLimit(2).build();
    Permit held = keys.forKey("x").acquire(2);
    List<String> order = new ArrayList<>();
    List<CompletableFuture<Permit>> waiting = new ArrayList<>();
    for (String key : List.of("a", "b", "a", "c")) {
      waiting.add(
          keys.forKey(key)
              .acquireAsync(2)
              .whenComplete(
                  (p, e) -> {
                    synchronized (order) {
                      order.add(key);
                    }
                    p.release();
                  }));
    }
    held.release();
    for (CompletableFuture<Permit> f : waiting) {
      f.get(5, TimeUnit.SECONDS);
    }
    assertEquals(List.of("a", "b", "a", "c"), order);
  }

  @Test
  void globalLimit_weightAboveItFailsAtOnce() {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(10).globalLimit(4).build();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> keys.forKey("a").acquire(5));
    assertTrue(
        e.getMessage().contains("global limit 4") && e.getMessage().contains("5"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> keys.forKey("a").tryAcquire(5));
    assertThrows(IllegalArgumentException.class, () -> keys.forKey("a").acquireAsync(5));
    assertEquals(0, keys.keyCount());
  }

  @Test
  void globalWait_cancelledGivesTheKeyPermitsBack() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(2).globalLimit(2).build();
    Permit held = keys.forKey("x").acquire(1);
    CompletableFuture<Permit> waiting = keys.forKey("a").acquireAsync(2);
    assertEquals(0, keys.forKey("a").available());
    assertTrue(waiting.cancel(false));
    assertEquals(2, keys.forKey("a").available());
    assertEquals(0, keys.forKey("a").queueLength());
    held.release();
    assertEquals(0, keys.keyCount());
    assertEquals(OptionalInt.of(2), keys.globalAvailable());
  }

  @Test
  void completeFromOutside_withdrawsTheRequestAtEitherStageLikeACancel() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(2).globalLimit(2).build();
    Permit stranger = Semaphore.create(1).acquire(1); // any value: the caller decided it
    Permit keyHeld = keys.forKey("a").acquire(2);
    CompletableFuture<Permit> keyWait = keys.forKey("a").acquireAsync(1);
    assertEquals(1, keys.forKey("a").queueLength());
    assertTrue(keyWait.complete(stranger));
    assertEquals(0, keys.forKey("a").queueLength(), "withdrawn from the key's queue");
    keyHeld.release();

    Permit globalHeld = keys.forKey("x").acquire(2);
    CompletableFuture<Permit> globalWait = keys.forKey("a").acquireAsync(2);
    assertEquals(0, keys.forKey("a").available(), "the key's permits are taken");
    assertTrue(globalWait.complete(stranger));
    assertEquals(2, keys.forKey("a").available(), "the key's permits given back");
    globalHeld.release();
    assertEquals(OptionalInt.of(2), keys.globalAvailable(), "the global wait was withdrawn");
    assertEquals(0, keys.keyCount());
    assertEquals(stranger, keyWait.join());
    assertEquals(stranger, globalWait.join());
  }

  @Test
  void globalWait_timeoutCoversBothWaitsAndSaysWhichOneFailed() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(2).globalLimit(1).build();
    Permit held = keys.forKey("x").acquire(1);
    TimeoutException blocking =
        assertThrows(
            TimeoutException.class, () -> keys.forKey("a").acquire(1, Duration.ofMillis(30)));
    assertTrue(blocking.getMessage().contains("global"), blocking.getMessage());
    ExecutionException async =
        assertThrows(
            ExecutionException.class,
            () -> keys.forKey("a").acquireAsync(1, Duration.ofMillis(30)).get(5, TimeUnit.SECONDS));
    assertInstanceOf(TimeoutException.class, async.getCause());
    assertEquals(2, keys.forKey("a").available());
    held.release();
    assertEquals(0, keys.keyCount());
  }

  @Test
  void globalWait_interruptedGivesTheKeyPermitsBack() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(2).globalLimit(1).build();
    Permit held = keys.forKey("x").acquire(1);
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                keys.forKey("a").acquire(1);
              } catch (Throwable t) {
                outcome.set(t);
              }
            });
    waiter.start();
    awaitTrue(() -> keys.forKey("a").queueLength() == 1);
    waiter.interrupt();
    waiter.join(5_000);
    assertInstanceOf(InterruptedException.class, outcome.get());
    assertEquals(2, keys.forKey("a").available());
    held.release();
    assertEquals(0, keys.keyCount());
  }

  @Test
  void globalWait_failsWhenItsKeyIsClosedOrLoweredBelowIt() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(3).globalLimit(3).build();
    Permit held = keys.forKey("x").acquire(3);
    CompletableFuture<Permit> two = keys.forKey("a").acquireAsync(2);
    CompletableFuture<Permit> one = keys.forKey("a").acquireAsync(1);
    assertEquals(2, keys.forKey("a").queueLength());
    keys.forKey("a").setLimit(1);
    ExecutionException lowered =
        assertThrows(ExecutionException.class, () -> two.get(5, TimeUnit.SECONDS));
    assertInstanceOf(IllegalArgumentException.class, lowered.getCause());
    assertFalse(one.isDone());
    keys.forKey("a").close();
    ExecutionException closed =
        assertThrows(ExecutionException.class, () -> one.get(5, TimeUnit.SECONDS));
    assertInstanceOf(SemaphoreClosedException.class, closed.getCause());
    assertEquals(0, keys.forKey("a").queueLength());
    held.release();
    assertEquals(OptionalInt.of(3), keys.globalAvailable());
  }

  @Test
  void setGlobalLimit_growsAdmitsAndShrinkingBelowARequestFailsIt() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(3).globalLimit(1).build();
    Permit held = keys.forKey("x").acquire(1);
    CompletableFuture<Permit> one = keys.forKey("a").acquireAsync(1);
    keys.setGlobalLimit(2);
    Permit granted = one.get(5, TimeUnit.SECONDS);
    CompletableFuture<Permit> two = keys.forKey("b").acquireAsync(2);
    keys.setGlobalLimit(1);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> two.get(5, TimeUnit.SECONDS));
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    assertEquals(3, keys.forKey("b").available(), "b's key permits were given back");
    held.release();
    granted.release();
    assertEquals(OptionalInt.of(1), keys.globalLimit());
    assertEquals(0, keys.keyCount());
    assertThrows(IllegalStateException.class, () -> KeyedSemaphore.create(1).setGlobalLimit(3));
  }

  @Test
  void globalLimit_tryAcquireTakesBothOrNeither() throws Exception {
    KeyedSemaphore<String> keys = KeyedSemaphore.builder().limitPerKey(2).globalLimit(2).build();
    Permit x = keys.forKey("x").acquire(1);
    assertTrue(keys.forKey("a").tryAcquire(2).isEmpty(), "a has 2, the global limit 1");
    assertEquals(2, keys.forKey("a").available(), "a's permits were given back");
    Optional<Permit> one = keys.forKey("a").tryAcquire(1);
    assertTrue(one.isPresent());
    one.get().release();
    one.get().release(); // idempotent
    x.release();
    assertEquals(OptionalInt.of(2), keys.globalAvailable());
    assertEquals(0, keys.keyCount());
  }

  // ------------------------------------------------------------------ builder and messages

  @Test
  void builder_rejectsBadSettingsAtOnce() {
    assertThrows(IllegalArgumentException.class, () -> KeyedSemaphore.create(-1));
    assertThrows(IllegalArgumentException.class, () -> KeyedSemaphore.builder().globalLimit(-1));
    assertThrows(IllegalArgumentException.class, () -> KeyedSemaphore.builder().name(" "));
    assertThrows(
        NullPointerException.class, () -> KeyedSemaphore.builder().completionExecutor(null));
    IllegalStateException noLimit =
        assertThrows(
            IllegalStateException.class, () -> KeyedSemaphore.builder().globalLimit(3).build());
    assertTrue(noLimit.getMessage().contains("limitPerKey"), noLimit.getMessage());
    assertThrows(NullPointerException.class, () -> KeyedSemaphore.create(1).forKey(null));
  }

  @Test
  void toString_showsKeysAndTheGlobalLimit() throws Exception {
    KeyedSemaphore<String> keys =
        KeyedSemaphore.builder().name("hosts").limitPerKey(2).globalLimit(5).build();
    Permit p = keys.forKey("a").acquire(2);
    assertEquals(
        "KeyedSemaphore[name=hosts, keys=1, global limit=5, available=3]", keys.toString());
    assertEquals("Semaphore[key=a, limit=2, available=0, queued=0]", keys.forKey("a").toString());
    assertEquals("Permit[key=a, permits=2]", p.toString());
    p.release();
    keys.close();
    assertEquals(
        "KeyedSemaphore[name=hosts, keys=0, global limit=5, available=5, closed]", keys.toString());
    assertEquals(Optional.empty(), keys.forKey("a").stats());
  }

  static void awaitTrue(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 10 s");
      }
      Thread.sleep(1);
    }
  }
}
