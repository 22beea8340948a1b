package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads admitting requests, blocking and async, in every mode, with real timeouts, random
 * cancellations, each of the three ways to close a ticket, and a close while they run: never more
 * tickets at work than the limit (counted by the "handlers"), every request decided exactly once or
 * withdrawn, and at the end nothing in flight or queued and every permit back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard only
class AdmissionControlStressTest {
  private static final int LIMIT = 4;
  private static final int THREADS = 8;
  private static final int PER_THREAD = 1500;

  /** A request: its priority and its key. */
  record Req(int priority, int key) {}

  @Test
  void fifo() throws Exception {
    run(shared -> builder().semaphore(shared).queue(6, Duration.ofMillis(2)));
  }

  @Test
  void lifo() throws Exception {
    run(shared -> builder().semaphore(shared).queue(6, Duration.ofMillis(2)).lifo());
  }

  @Test
  void priorities() throws Exception {
    run(
        shared ->
            builder()
                .semaphore(shared)
                .queue(6, Duration.ofMillis(2))
                .priority(Req::priority, Duration.ofMillis(1)));
  }

  @Test
  void bestEffort() throws Exception {
    run(shared -> builder().semaphore(shared));
  }

  /** Queued over a semaphore not of Jeton's core: asked on the control's threads (issue 29). */
  @Test
  void fifoOverASemaphoreThatMayBlock() throws Exception {
    run(shared -> builder().semaphore(shared).queue(6, Duration.ofMillis(20)), true);
  }

  @Test
  void bestEffortOverASemaphoreThatMayBlock() throws Exception {
    run(shared -> builder().semaphore(shared), true);
  }

  @Test
  void partitionsWithAGlobalLimit() throws Exception {
    run(shared -> builder().partitionBy(Req::key, 2).limit(LIMIT).queue(3, Duration.ofMillis(2)));
  }

  private static AdmissionControl.Builder<Req> builder() {
    return AdmissionControl.builder();
  }

  private void run(Function<Semaphore, AdmissionControl.Builder<Req>> mode) throws Exception {
    run(mode, false);
  }

  /**
   * Runs the mode, over a semaphore that may block if {@code mayBlock}; a mode that does not use
   * the shared semaphore is partitioned.
   */
  private void run(Function<Semaphore, AdmissionControl.Builder<Req>> mode, boolean mayBlock)
      throws Exception {
    int limit = LIMIT;
    Semaphore shared = mayBlock ? new FailingSemaphore(limit) : Semaphore.create(limit);
    AdmissionControl<Req> control = mode.apply(shared).build();
    boolean partitioned = control.toString().contains("KeyedSemaphore");
    AtomicInteger atWork = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    LongAdder admitted = new LongAdder();
    LongAdder rejected = new LongAdder();
    LongAdder withdrawn = new LongAdder();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      SplittableRandom random = new SplittableRandom(t);
      Thread thread =
          new Thread(
              () -> {
                for (int i = 0; i < PER_THREAD; i++) {
                  Req req = new Req(random.nextInt(3), random.nextInt(3));
                  Decision d;
                  try {
                    if (random.nextBoolean()) {
                      d = control.admit(req);
                    } else {
                      CompletableFuture<Decision> f = control.admitAsync(req);
                      if (random.nextInt(8) == 0 && f.cancel(false)) {
                        withdrawn.increment();
                        continue;
                      }
                      d = f.join();
                    }
                  } catch (InterruptedException e) {
                    violations.add("interrupted");
                    return;
                  }
                  if (d instanceof Rejection r) {
                    rejected.increment();
                    if (r.retryAfterSeconds() < 1 || r.retryAfterSeconds() > 30) {
                      violations.add("Retry-After " + r.retryAfterSeconds());
                    }
                    continue;
                  }
                  Ticket ticket = (Ticket) d;
                  admitted.increment();
                  int now = atWork.incrementAndGet();
                  most.accumulateAndGet(now, Math::max);
                  if (now > limit) {
                    violations.add(now + " at work, above " + limit);
                  }
                  Thread.yield();
                  atWork.decrementAndGet();
                  switch (random.nextInt(3)) {
                    case 0 -> ticket.close();
                    case 1 -> ticket.dropped();
                    default -> ticket.abandon();
                  }
                  if (random.nextInt(4) == 0) {
                    ticket.close(); // again: does nothing
                  }
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (int i = 0; i < threads.size(); i++) {
      threads.get(i).join();
      if (i == THREADS / 2) {
        control.close(); // in the middle: the rest are rejected CLOSED, the open tickets finish
      }
    }
    assertTrue(violations.isEmpty(), () -> String.join("\n", violations));
    assertEquals(THREADS * PER_THREAD, admitted.sum() + rejected.sum() + withdrawn.sum());
    assertEquals(0, control.inFlight(), control::toString);
    assertEquals(0, control.queued(), control::toString);
    AdmissionStats stats = control.stats();
    assertEquals(admitted.sum(), stats.admitted());
    assertEquals(rejected.sum(), stats.rejectedTotal());
    if (!partitioned) {
      // A call answered after its request was decided gives its permit back on its own thread.
      awaitPermitsBack(shared, limit);
      assertEquals(limit, shared.available(), "permits back");
      assertEquals(0, shared.queueLength(), "the pump's request withdrawn");
    }
    assertTrue(most.get() >= 1);
  }

  private static void awaitPermitsBack(Semaphore semaphore, int limit) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // a hang guard only
    while (semaphore.available() != limit && System.nanoTime() - deadline < 0) {
      Thread.sleep(1);
    }
  }
}
