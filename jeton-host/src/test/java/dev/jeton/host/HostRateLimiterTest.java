package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The machine-wide rate limiter in one JVM: the stored rate, the bound, the order, giving up, and
 * hostile files. Waits are for events; deadlines only guard against hangs.
 */
@Timeout(120)
class HostRateLimiterTest {
  @TempDir Path directory;

  private HostRateLimiter.Builder limiter(String name) {
    return HostRateLimiter.builder(name).directory(directory);
  }

  private static final Duration HOUR = Duration.ofHours(1);

  @Test
  void burstPassesAtOnce_thenTryAcquireFailsAndSaysHowLong() throws Exception {
    HostRateLimiter rate = limiter("a").rate(3, HOUR).open();
    assertEquals(3, rate.burst());
    assertTrue(rate.tryAcquire(2));
    assertTrue(rate.tryAcquire());
    assertFalse(rate.tryAcquire());
    Duration wait = rate.timeToAdmit(1);
    assertTrue(wait.compareTo(Duration.ofMinutes(19)) > 0, "about 20 minutes: " + wait);
    assertEquals(0, rate.queueLength());
  }

  @Test
  void storedRateAndBurst_areSharedAndAnotherOneIsRefused() throws Exception {
    limiter("r").rate(10, Duration.ofMinutes(1)).burst(4).open();
    HostRateLimiter existing = limiter("r").open(); // without a rate: the stored one
    assertEquals(10, existing.permits());
    assertEquals(Duration.ofMinutes(1), existing.period());
    assertEquals(4, existing.burst());
    String rate =
        assertThrows(
                IllegalArgumentException.class,
                () -> limiter("r").rate(5, Duration.ofMinutes(1)).open())
            .getMessage();
    assertTrue(rate.contains("exists with 10 per 1m, not 5 per 1m"), rate);
    String burst =
        assertThrows(
                IllegalArgumentException.class,
                () -> limiter("r").rate(10, Duration.ofMinutes(1)).burst(2).open())
            .getMessage();
    assertTrue(burst.contains("burst 4, not 2"), burst);
    String missing =
        assertThrows(IllegalArgumentException.class, () -> limiter("none").open()).getMessage();
    assertTrue(missing.contains("there is no rate limiter 'none'"), missing);
  }

  @Test
  void setRate_fromAnotherHandle_appliesToEveryHandle() throws Exception {
    HostRateLimiter one = limiter("s").rate(1, HOUR).burst(1).open();
    HostRateLimiter two = limiter("s").open();
    assertTrue(one.tryAcquire());
    two.setRate(1, Duration.ofHours(2)); // slower: what is owed drains at the new rate
    assertEquals(Duration.ofHours(2), one.period());
    assertTrue(one.timeToAdmit(1).compareTo(Duration.ofMinutes(119)) > 0);
    two.setRate(1, Duration.ofMillis(1)); // faster: what is owed drains at the new rate
    assertTrue(one.timeToAdmit(1).compareTo(Duration.ofMillis(1)) <= 0);
    assertThrows(IllegalArgumentException.class, () -> one.setRate(0, HOUR));
    assertEquals(Duration.ofMillis(1), one.period(), "a bad rate changes nothing");
  }

  @Test
  void fasterRate_neverGivesANewcomerASlotBeforeTheOnesAlreadyGiven() throws Exception {
    HostRateLimiter rate = limiter("f").rate(1, HOUR).burst(1).open();
    assertTrue(rate.tryAcquire());
    RateRequest waiting = new RateRequest(rate, 1);
    assertEquals(
        RateRequest.Outcome.WAITING,
        waiting.reserve(false, Long.MAX_VALUE, Long.MAX_VALUE, () -> false));
    rate.setRate(1000, Duration.ofSeconds(1));
    RateRequest newcomer = new RateRequest(rate, 1);
    assertEquals(
        RateRequest.Outcome.WAITING,
        newcomer.reserve(false, Long.MAX_VALUE, Long.MAX_VALUE, () -> false));
    assertTrue(newcomer.slot() - waiting.slot() >= 0, "never before the ones already waiting");
    newcomer.withdraw();
    waiting.withdraw();
  }

  @Test
  void passes_neverExceedBurstPlusRateTimesTheWindow_andComeInTheOrderOfTheQueue()
      throws Exception {
    int burst = 3;
    long permits = 40; // a second
    HostRateLimiter one = limiter("b").rate(permits, Duration.ofSeconds(1)).burst(burst).open();
    HostRateLimiter two = limiter("b").open();
    ConcurrentLinkedQueue<Long> passes = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      HostRateLimiter handle = t % 2 == 0 ? one : two;
      Thread thread =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 8; i++) {
                    handle.acquire();
                    passes.add(System.nanoTime());
                  }
                } catch (InterruptedException e) {
                  throw new AssertionError(e);
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertBound(new ArrayList<>(passes), burst, permits, TimeUnit.SECONDS.toNanos(1));
  }

  /**
   * Every window between two passes holds at most burst + rate * (t + lateness): the slots obey the
   * exact bound, and a pass comes at most one emission interval (20 ms at least) after its slot.
   */
  static void assertBound(List<Long> passes, int burst, long permits, long periodNanos) {
    passes.sort(null);
    // and 100 ms for the thread to run again after passing and read the clock (a loaded machine)
    double lateness =
        Math.max(
                RateRequest.MIN_LATENESS_NANOS,
                Math.min(RateRequest.MAX_LATENESS_NANOS, periodNanos / permits))
            + 100e6;
    for (int i = 0; i < passes.size(); i++) {
      for (int j = i; j < passes.size(); j++) {
        double t = passes.get(j) - passes.get(i);
        double allowed = burst + permits * (t + lateness) / periodNanos;
        int count = j - i + 1;
        assertTrue(count <= allowed, count + " passes in " + t / 1e6 + " ms, at most " + allowed);
      }
    }
  }

  @Test
  void waiters_passInTheOrderTheyCame() throws Exception {
    HostRateLimiter rate = limiter("fifo").rate(10, Duration.ofSeconds(1)).burst(1).open();
    assertTrue(rate.tryAcquire());
    ConcurrentLinkedQueue<Integer> order = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      int me = i;
      Thread thread =
          new Thread(
              () -> {
                try {
                  rate.acquire();
                  order.add(me);
                } catch (InterruptedException e) {
                  throw new AssertionError(e);
                }
              });
      thread.start();
      threads.add(thread);
      // The next comes once this one has its place or has passed (read in that order, so that a
      // request passing meanwhile is counted once or not yet, never twice).
      while (order.size() + rate.queueLength() < i + 1) {
        Thread.sleep(1);
      }
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertEquals(List.of(0, 1, 2, 3, 4), List.copyOf(order));
  }

  static void awaitQueued(HostRateLimiter rate, int length) throws InterruptedException {
    while (rate.queueLength() < length) {
      Thread.sleep(1);
    }
  }

  @Test
  void slotAfterTheTimeout_failsAtOnceAndTakesNothing() throws Exception {
    HostRateLimiter rate = limiter("t").rate(1, HOUR).burst(1).open();
    assertTrue(rate.tryAcquire());
    Duration before = rate.timeToAdmit(1);
    TimeoutException e =
        assertThrows(TimeoutException.class, () -> rate.acquire(1, Duration.ofMillis(10)));
    assertTrue(e.getMessage().contains("no slot of rate limiter 't' within 10ms"), e.getMessage());
    assertTrue(rate.timeToAdmit(1).compareTo(before) <= 0, "nothing was taken");
    assertEquals(0, rate.queueLength());
  }

  @Test
  void interruptedLastWaiter_givesItsSlotBack() throws Exception {
    HostRateLimiter rate = limiter("i").rate(1, HOUR).burst(1).open();
    assertTrue(rate.tryAcquire());
    Duration before = rate.timeToAdmit(1);
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                rate.acquire();
                outcome.complete(new AssertionError("passed"));
              } catch (Throwable e) {
                outcome.complete(e);
              }
            });
    waiter.start();
    awaitQueued(rate, 1);
    assertTrue(rate.timeToAdmit(1).compareTo(before.plusMinutes(30)) > 0, "its slot is taken");
    waiter.interrupt();
    assertTrue(outcome.get(30, TimeUnit.SECONDS) instanceof InterruptedException);
    assertEquals(0, rate.queueLength());
    assertTrue(rate.timeToAdmit(1).compareTo(before) <= 0, "the slot was given back");
  }

  @Test
  void asyncRequests_passAndCancellingWithdraws() throws Exception {
    HostRateLimiter rate = limiter("async").rate(50, Duration.ofSeconds(1)).burst(1).open();
    CompletableFuture<Void> first = rate.acquireAsync(1);
    CompletableFuture<Void> second = rate.acquireAsync(1);
    first.get(30, TimeUnit.SECONDS);
    second.get(30, TimeUnit.SECONDS);

    rate.setRate(1, HOUR);
    CompletableFuture<Void> waiting = rate.acquireAsync(1);
    awaitQueued(rate, 1);
    Duration taken = rate.timeToAdmit(1);
    waiting.cancel(false);
    // the withdrawal runs on the limiter's driver thread, after cancel returns: wait for it
    long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // only against a hang
    while (rate.queueLength() != 0 || rate.timeToAdmit(1).compareTo(taken.minusMinutes(30)) >= 0) {
      assertTrue(System.nanoTime() - guard < 0, "the slot (an hour) was never given back");
      Thread.sleep(1);
    }
    CompletableFuture<Void> late = rate.acquireAsync(1, Duration.ofMillis(5));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> late.get(30, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof TimeoutException, String.valueOf(e.getCause()));
    assertThrows(CancellationException.class, waiting::join);
  }

  @Test
  void badWeights_failAtOnceNamingTheBurst() throws Exception {
    HostRateLimiter rate = limiter("w").rate(5, HOUR).burst(2).open();
    String message =
        assertThrows(IllegalArgumentException.class, () -> rate.tryAcquire(3)).getMessage();
    assertTrue(message.contains("burst 2"), message);
    assertThrows(IllegalArgumentException.class, () -> rate.acquireAsync(0));
    assertThrows(IllegalArgumentException.class, () -> limiter("x").rate(0, HOUR));
    assertThrows(IllegalArgumentException.class, () -> limiter("x").rate(1, Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> limiter("x").burst(0));
  }

  @Test
  void wakingLaterThanItsSlotAllows_givesTheSlotUpAndQueuesAgain() throws Exception {
    HostRateLimiter rate = limiter("late").rate(100, Duration.ofSeconds(1)).burst(1).open();
    assertTrue(rate.tryAcquire());
    RateRequest request = new RateRequest(rate, 1);
    assertEquals(
        RateRequest.Outcome.WAITING,
        request.reserve(false, Long.MAX_VALUE, Long.MAX_VALUE, () -> false));
    // a stopped process: it wakes long after its slot (10 ms ahead, 20 ms of lateness allowed)
    while (System.nanoTime() - request.slot() <= 10 * RateRequest.MIN_LATENESS_NANOS) {
      Thread.sleep(10);
    }
    assertFalse(request.pass(), "too late for its slot");
    assertEquals(0, rate.queueLength());
    assertTrue(rate.tryAcquire(), "it was the last slot: given back, and free by now");
  }

  // ---------------------------------------------------------------- hostile files

  @Test
  void symbolicLinkPlantedAsTheState_isNeverFollowed() throws Exception {
    Path victim = Files.writeString(directory.resolve("victim"), "precious");
    Files.createDirectories(directory.resolve("p/rate"));
    Files.createSymbolicLink(directory.resolve("p/rate/state"), victim);
    Exception e = assertThrows(Exception.class, () -> limiter("p").rate(1, HOUR).open());
    assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
    assertEquals("precious", Files.readString(victim, StandardCharsets.UTF_8));
  }

  @Test
  void symbolicLinkPlantedAsTheRateDirectory_isRefused() throws Exception {
    Path elsewhere = Files.createDirectory(directory.resolve("elsewhere"));
    Files.createDirectories(directory.resolve("q"));
    Files.createSymbolicLink(directory.resolve("q/rate"), elsewhere);
    Exception e = assertThrows(Exception.class, () -> limiter("q").rate(1, HOUR).open());
    assertTrue(e.getMessage().contains("not a directory"), e.getMessage());
    try (var entries = Files.list(elsewhere)) {
      assertEquals(0, entries.count(), "nothing was made through the link");
    }
  }

  @Test
  void directoryOthersMayWrite_isRefused() throws Exception {
    Path open = Files.createDirectory(directory.resolve("open"));
    Files.setAttribute(open, "unix:mode", 0777);
    String message =
        assertThrows(
                IllegalArgumentException.class,
                () -> HostRateLimiter.builder("a").directory(open).rate(1, HOUR).open())
            .getMessage();
    assertTrue(message.contains("lets other users in"), message);
  }

  @Test
  void damagedState_isReportedWithTheFix() throws Exception {
    limiter("d").rate(1, HOUR).open();
    Files.writeString(directory.resolve("d/rate/state"), "garbage");
    Exception e = assertThrows(Exception.class, () -> limiter("d").open());
    assertTrue(e.getMessage().contains("is damaged"), e.getMessage());
    assertTrue(e.getMessage().contains("remove it"), e.getMessage());
  }

  @Test
  void stateOfAnotherBoot_isAFullBucket() throws Exception {
    HostRateLimiter rate = limiter("boot").rate(2, HOUR).open();
    assertTrue(rate.tryAcquire(2));
    Path state = directory.resolve("boot/rate/state");
    Files.writeString(
        state, Files.readString(state).replace("boot=" + RateState.BOOT, "boot=another"));
    assertTrue(rate.tryAcquire(2), "the clock of another boot means nothing now");
  }

  @Test
  void list_namesTheRateLimitersBesideSemaphores() throws Exception {
    limiter("one").rate(1, HOUR).open();
    HostSemaphore.builder("sem").directory(directory).limit(1).open();
    limiter("sem").rate(1, HOUR).open();
    assertEquals(List.of("one", "sem"), HostRateLimiter.list(directory));
    assertEquals(List.of("sem"), HostSemaphore.list(directory));
  }
}
