package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Permit;
import dev.jeton.contract.HoldLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Threads of this JVM and other processes contend for one machine-wide semaphore with random
 * weights and every kind of request; the merged logs must never show more than the limit held, and
 * at the end every permit is back and no one is queued. Bounded by round counts.
 */
class HostSemaphoreStressTest {
  @TempDir Path directory;

  private Process child(Class<?> main, String... args) throws Exception {
    return dev.jeton.contract.Processes.java(main, args);
  }

  @Test
  void threadsAndProcesses_mixingEveryKindOfRequest_neverExceedTheLimit() throws Exception {
    int limit = 3;
    HostSemaphore semaphore =
        HostSemaphore.builder("stress").directory(directory).limit(limit).open();
    Path log = directory.resolve("holds.log");
    int rounds = 150;
    List<Process> processes = new ArrayList<>();
    for (int p = 0; p < 2; p++) {
      processes.add(
          child(
              Churn.class,
              directory.toString(),
              "stress",
              Integer.toString(rounds),
              "" + (100 + p),
              log.toString()));
    }
    Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      long seed = t;
      HostSemaphore handle =
          t % 2 == 0 ? semaphore : HostSemaphore.builder("stress").directory(directory).open();
      Thread thread =
          new Thread(
              () -> {
                try {
                  Churn.run(handle, rounds, seed, log);
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join(TimeUnit.MINUTES.toMillis(3));
    }
    for (Process process : processes) {
      assertTrue(process.waitFor(3, TimeUnit.MINUTES), "the child finished");
      String output = new String(process.getInputStream().readAllBytes());
      assertEquals(0, process.exitValue(), output);
    }
    assertEquals(List.of(), List.copyOf(failures));
    int peak = HoldLog.peakWeight(log);
    assertTrue(peak > 0 && peak <= limit, "peak " + peak + " under limit " + limit);
    assertEquals(limit, semaphore.available(), "every permit back");
    assertEquals(0, semaphore.queueLength(), "no one queued");
    assertEquals(List.of(), semaphore.status().holders());
  }

  @Test
  void processesQueuedAtDistinctTimes_areServedInArrivalOrder() throws Exception {
    HostSemaphore semaphore = HostSemaphore.builder("fifo").directory(directory).limit(1).open();
    Path log = directory.resolve("order.log");
    Permit held = semaphore.acquire(1);
    List<Process> processes = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      processes.add(
          child(
              AcquireInTurn.class,
              directory.toString(),
              "fifo",
              Integer.toString(i),
              log.toString()));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (semaphore.queueLength() < i + 1) { // child i has its place before child i+1 starts
        assertTrue(System.nanoTime() < deadline, "child " + i + " never queued");
        Thread.sleep(10);
      }
    }
    held.release();
    for (Process process : processes) {
      assertTrue(process.waitFor(1, TimeUnit.MINUTES));
      assertEquals(0, process.exitValue(), new String(process.getInputStream().readAllBytes()));
    }
    assertEquals(List.of("0", "1", "2", "3"), Files.readAllLines(log));
  }
}
