package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.jeton.Permit;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deadline of a timed wait leaves the timer's queue as soon as the wait is decided. Regression:
 * the host's timer kept cancelled deadlines queued until they would have fired, so every request
 * timed out after an hour and decided at once left a task behind for an hour.
 */
@Timeout(120) // a hang guard: every wait below is for an event
class HostTimerTest {
  @TempDir Path directory;

  @Test
  void timedWait_givenUp_leavesNoDeadlineQueued() throws Exception {
    HostSemaphore sem = HostSemaphore.builder("given-up").directory(directory).limit(1).open();
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> head = sem.acquireAsync(1); // the waiter ahead, polling
    int before = queued();
    CompletableFuture<Object> timed = new CompletableFuture<>();
    Thread waiter = new Thread(() -> timed.complete(acquireForAnHour(sem)));
    waiter.start();
    awaitQueued(before + 1); // it waits on the place ahead, its deadline an hour off
    waiter.interrupt();
    assertInstanceOf(InterruptedException.class, timed.get(60, TimeUnit.SECONDS));
    assertEquals(before, queued(), "the deadline of a wait given up stayed queued");
    held.release();
    head.get(60, TimeUnit.SECONDS).release();
  }

  @Test
  void timedWait_granted_leavesNoDeadlineQueued() throws Exception {
    HostSemaphore sem = HostSemaphore.builder("granted").directory(directory).limit(1).open();
    Permit held = sem.acquire(1);
    CompletableFuture<Permit> head = sem.acquireAsync(1);
    int before = queued();
    CompletableFuture<Object> timed = new CompletableFuture<>();
    new Thread(() -> timed.complete(acquireForAnHour(sem))).start();
    awaitQueued(before + 1);
    held.release();
    head.get(60, TimeUnit.SECONDS).release();
    ((Permit) timed.get(60, TimeUnit.SECONDS)).release();
    assertEquals(before, queued(), "the deadline of a wait granted stayed queued");
  }

  /** The permit, or what was thrown. */
  private static Object acquireForAnHour(HostSemaphore sem) {
    try {
      return sem.acquire(1, Duration.ofHours(1));
    } catch (Exception e) {
      return e;
    }
  }

  private static int queued() {
    return HostRequest.TIMER.queued();
  }

  private static void awaitQueued(int count) throws InterruptedException {
    while (queued() != count) {
      Thread.sleep(1);
    }
  }
}
