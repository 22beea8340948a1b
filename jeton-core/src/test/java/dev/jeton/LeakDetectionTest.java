package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.contract.LeakLog;
import dev.jeton.internal.LeakTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Grants dropped without being released are reported once they are collected: one of each kind
 * (permit, mutex lock, read lock, write lock, a read lock from a downgrade), at each level, with
 * the report's content; a grant released is never reported; a leaked grant's permits stay taken, or
 * come back where the builder asks. Reports are read through {@code System.Logger}, as an
 * application's logging framework gets them ({@link LeakLog}).
 */
class LeakDetectionTest {
  private final List<LeakLog.Logged> reports = new CopyOnWriteArrayList<>();
  private Runnable stopListening = () -> {};

  /**
   * Listens to the reports of this class's primitives, all named {@code lt-...}: leak detection is
   * on by default, so a grant another test class dropped may be reported meanwhile in this JVM.
   */
  @BeforeEach
  void listen() {
    stopListening = LeakLog.listen(LeakTracker.LOGGER, "'lt-", reports::add);
  }

  @AfterEach
  void stopListening() {
    stopListening.run();
  }

  /**
   * A way to take a grant of a primitive and name it as reports do; {@code permits} is what the
   * report counts (a lock's report counts none).
   */
  record Kind(String kind, String primitive, int permits, Function<LeakDetection, Object> take) {
    @Override
    public String toString() {
      return kind + " of " + primitive;
    }
  }

  static Stream<Arguments> kinds() {
    return Stream.of(
        Arguments.of(
            new Kind(
                "permit",
                "semaphore 'lt-leaky'",
                2,
                level -> {
                  Semaphore s =
                      Semaphore.builder().name("lt-leaky").limit(3).leakDetection(level).build();
                  return s.tryAcquire(2).orElseThrow();
                })),
        Arguments.of(
            new Kind(
                "permit for key k",
                "keyed semaphore 'lt-leaky'",
                2,
                level ->
                    KeyedSemaphore.builder()
                        .name("lt-leaky")
                        .limitPerKey(3)
                        .leakDetection(level)
                        .build()
                        .forKey("k")
                        .tryAcquire(2)
                        .orElseThrow())),
        Arguments.of(
            new Kind(
                "lock",
                "mutex 'lt-leaky'",
                0,
                level ->
                    Mutex.builder()
                        .name("lt-leaky")
                        .leakDetection(level)
                        .build()
                        .tryLock()
                        .orElseThrow())),
        Arguments.of(
            new Kind(
                "read lock",
                "read-write lock 'lt-leaky'",
                0,
                level -> rwLock(level).tryRead().orElseThrow())),
        Arguments.of(
            new Kind(
                "write lock",
                "read-write lock 'lt-leaky'",
                0,
                level -> rwLock(level).tryWrite().orElseThrow())),
        Arguments.of(
            new Kind(
                "read lock",
                "read-write lock 'lt-leaky' (downgraded)",
                0,
                level -> rwLock(level).tryWrite().orElseThrow().downgrade())));
  }

  private static ReadWriteLock rwLock(LeakDetection level) {
    return ReadWriteLock.builder().name("lt-leaky").leakDetection(level).build();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  void aDroppedGrant_isReportedOnceItIsCollected_paranoid(Kind kind) {
    dropOne(kind, LeakDetection.PARANOID);

    LeakLog.Logged report = awaitReports(1).get(0);
    String primitive = kind.primitive().replace(" (downgraded)", "");
    String text =
        LeakLog.assertKeptReport(
            report, "Jeton: a " + kind.kind() + " of " + primitive + " was never released: ");
    if (kind.permits() > 0) {
      assertTrue(text.contains(": " + kind.permits() + " permits held for about "), text);
    } else {
      assertTrue(text.contains("was never released: held for about "), text);
    }
    assertTrue(text.contains("Where it was acquired is not known"), text);
    assertNull(report.thrown(), "paranoid records a stack for one grant in 1,024 only");
  }

  /**
   * At sampled, set or by default (no level on the builder, no system property), the 1,024th grant
   * is the one watched, with the stack of its acquisition.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void sampled_watchesOneGrantIn1024_withTheStackOfItsAcquisition(boolean setOnTheBuilder) {
    assertNull(System.getProperty(LeakTracker.PROPERTY), "the default is without the property");
    Semaphore.Builder builder = Semaphore.builder().name("lt-sampled").limit(1);
    Semaphore semaphore =
        (setOnTheBuilder ? builder.leakDetection(LeakDetection.SAMPLED) : builder).build();
    for (int i = 1; i < LeakTracker.SAMPLING_INTERVAL; i++) {
      semaphore.tryAcquire(1).orElseThrow().release();
    }
    takeAndDrop(semaphore); // the 1,024th

    LeakLog.Logged report = awaitReports(1).get(0);
    assertTrue(
        report.message().matches(".*: 1 permit held for \\d+\\.\\d{3} s until .*"),
        report.message());
    assertTrue(report.message().endsWith("It was acquired here:"), report.message());
    Throwable acquiredAt = report.thrown();
    assertNotNull(acquiredAt);
    assertTrue(
        Stream.of(acquiredAt.getStackTrace())
            .anyMatch(frame -> frame.getMethodName().equals("takeAndDrop")),
        "the stack names the call that acquired it");
  }

  /**
   * Released grants are never reported, however many and from however many threads, with the
   * collector running meanwhile; a grant dropped afterwards is the one report.
   */
  @Test
  void releasedGrants_areNeverReported() throws Exception {
    Semaphore semaphore =
        Semaphore.builder().name("lt-busy").limit(8).leakDetection(LeakDetection.PARANOID).build();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread worker =
          new Thread(
              () -> {
                for (int i = 0; i < 200_000; i++) {
                  try (Permit permit = semaphore.tryAcquire(1).orElseThrow()) {
                    assertEquals(1, permit.permits());
                  }
                  if (i % 20_000 == 0) {
                    System.gc();
                  }
                }
              });
      worker.start();
      workers.add(worker);
    }
    for (Thread worker : workers) {
      worker.join(TimeUnit.SECONDS.toMillis(TestThreads.GUARD_SECONDS));
      assertFalse(worker.isAlive(), "a worker hung");
    }
    List<LeakLog.Logged> found = dropAControlAndAwaitItsReport();
    assertTrue(found.get(0).message().contains("semaphore 'lt-control'"), found.get(0).message());
    assertEquals(1, reports.size(), "only the dropped grant: " + reports);
    assertEquals(8, semaphore.available());
  }

  /** At off, nothing is reported: a paranoid one dropped beside it is, and is the only report. */
  @Test
  void off_reportsNothing() {
    Semaphore off =
        Semaphore.builder().name("lt-off").limit(1).leakDetection(LeakDetection.OFF).build();
    Semaphore control =
        Semaphore.builder()
            .name("lt-control")
            .limit(1)
            .leakDetection(LeakDetection.PARANOID)
            .build();
    takeAndDrop(off);
    takeAndDrop(control);

    awaitReports(1);
    collect(); // one more collection, for a report of the other to have come if it ever would
    assertEquals(1, reports.size(), "only the paranoid one: " + reports);
    assertTrue(reports.get(0).message().contains("'lt-control'"));
  }

  /**
   * A logging back end that throws loses the report, not the give-back, and not the reporter: the
   * next leak is reported.
   */
  @Test
  void aLoggerThatThrows_losesTheReport_notTheGiveBack_norTheReporter() {
    java.util.logging.Logger jul = java.util.logging.Logger.getLogger(LeakTracker.LOGGER);
    java.util.logging.Handler throwing =
        new java.util.logging.Handler() {
          @Override
          public void publish(java.util.logging.LogRecord record) {
            if (record.getMessage().contains("'lt-thrown-at'")) {
              throw new IllegalStateException("a back end that fails");
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    jul.addHandler(throwing);
    try {
      Semaphore semaphore =
          Semaphore.builder()
              .name("lt-thrown-at")
              .limit(1)
              .leakDetection(LeakDetection.PARANOID)
              .releaseLeaked(true)
              .build();
      takeAndDrop(semaphore);
      TestThreads.awaitTrue(
          () -> {
            collect();
            return semaphore.available() == 1;
          },
          "the permit given back though the logger threw");
    } finally {
      jul.removeHandler(throwing);
    }
    reports.clear(); // the report this class's listener got before the throwing handler threw
    Semaphore next =
        Semaphore.builder().name("lt-next").limit(1).leakDetection(LeakDetection.PARANOID).build();
    takeAndDrop(next);
    assertTrue(awaitReports(1).get(0).message().contains("'lt-next'"), "the reporter goes on");
  }

  /**
   * Regression: a grant that reached no one (its waiter interrupted at the same step) is given back
   * by the engine, by count, not through the grant; the grant's record stayed, so when the grant
   * was collected it was reported as leaked and, under releaseLeaked, its permit given back a
   * second time, one more than the limit.
   */
  @Test
  void aGrantTheEngineGivesBack_isNeverReported_norGivenBackTwice() throws Exception {
    java.util.concurrent.atomic.AtomicReference<Permit> held =
        new java.util.concurrent.atomic.AtomicReference<>();
    FifoSemaphore semaphore =
        new FifoSemaphore(
            "lt-engine",
            1,
            Fairness.strictFifo(),
            null,
            null,
            new RecordedTimers(),
            () -> {
              Permit p = held.getAndSet(null);
              if (p != null) {
                p.release(); // grants the waiter, a watched permit...
                Thread.currentThread().interrupt(); // ...that reaches no one: given back
              }
            },
            FifoSemaphore.SEMAPHORE,
            LeakTracker.of(LeakDetection.PARANOID, true, "semaphore 'lt-engine'"));
    held.set(semaphore.acquire(1));
    org.junit.jupiter.api.Assertions.assertThrows(
        InterruptedException.class, () -> semaphore.acquire(1));
    assertEquals(1, semaphore.available(), "the grant was given back");

    List<LeakLog.Logged> found = dropAControlAndAwaitItsReport();
    collect();
    assertTrue(
        found.stream().noneMatch(r -> r.message().contains("'lt-engine'")),
        "the given-back grant is no leak: " + found);
    assertEquals(1, semaphore.available(), "given back once, not again");
  }

  /**
   * Regression: a mutex hands its lock to a waiter by making its guard at the unlock; if the waiter
   * gives up at that moment (interrupted), the engine unlocks by the grant's number, not through
   * the guard, and the watched guard's record stayed: a false report once collected (seen in a
   * stress run under load). Interrupts race handoffs here until many have been given back that way.
   */
  @Test
  void aMutexGuardTheEngineGivesBack_isNeverReported() throws Exception {
    Mutex mutex =
        Mutex.builder()
            .name("lt-handoff")
            .fairness(Fairness.strictFifo())
            .leakDetection(LeakDetection.PARANOID)
            .build();
    List<Thread> threads = new ArrayList<>();
    java.util.concurrent.atomic.AtomicBoolean done =
        new java.util.concurrent.atomic.AtomicBoolean();
    for (int t = 0; t < 4; t++) {
      Thread thread =
          new Thread(
              () -> {
                for (int i = 0; i < 20_000; i++) {
                  try {
                    mutex.lock().unlock();
                  } catch (InterruptedException e) {
                    // given up, maybe as the lock was handed to it
                  }
                }
              });
      threads.add(thread);
      thread.start();
    }
    Thread interrupter =
        new Thread(
            () -> {
              java.util.SplittableRandom random = new java.util.SplittableRandom(1);
              while (!done.get()) {
                threads.get(random.nextInt(threads.size())).interrupt();
                Thread.onSpinWait();
              }
            });
    interrupter.start();
    for (Thread thread : threads) {
      thread.join(TimeUnit.SECONDS.toMillis(TestThreads.GUARD_SECONDS)); // a hang guard
      assertFalse(thread.isAlive(), "a worker hung");
    }
    done.set(true);
    interrupter.join();
    assertFalse(mutex.isLocked(), "every lock given back");
    List<LeakLog.Logged> found = dropAControlAndAwaitItsReport();
    collect();
    assertEquals(
        0,
        found.stream().filter(r -> r.message().contains("'lt-handoff'")).count(),
        "guards the engine gave back reported as leaks");
  }

  /** By default a leaked permit stays taken: the work it guarded may still be running. */
  @Test
  void aLeakedPermit_staysTakenByDefault() {
    Semaphore semaphore =
        Semaphore.builder().name("lt-kept").limit(1).leakDetection(LeakDetection.PARANOID).build();
    takeAndDrop(semaphore);

    awaitReports(1);
    assertEquals(0, semaphore.available());
  }

  /** With releaseLeaked(true), a leaked grant's permits come back once it is reported. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("givenBack")
  void releaseLeaked_givesThePermitsBack(
      String what, Object primitive, Runnable dropOne, Check free) {
    dropOne.run();

    awaitReports(1);
    TestThreads.awaitTrue(() -> free.isFree(), what + " free again");
    assertTrue(reports.get(0).message().contains("Its permits are given back now."));
  }

  interface Check {
    boolean isFree();
  }

  static Stream<Arguments> givenBack() {
    Semaphore semaphore =
        Semaphore.builder()
            .name("lt-given-back")
            .limit(1)
            .leakDetection(LeakDetection.PARANOID)
            .releaseLeaked(true)
            .build();
    Mutex mutex =
        Mutex.builder()
            .name("lt-given-back")
            .leakDetection(LeakDetection.PARANOID)
            .releaseLeaked(true)
            .build();
    ReadWriteLock lock =
        ReadWriteLock.builder()
            .name("lt-given-back")
            .leakDetection(LeakDetection.PARANOID)
            .releaseLeaked(true)
            .build();
    KeyedSemaphore<String> keyed =
        KeyedSemaphore.builder()
            .name("lt-given-back")
            .limitPerKey(1)
            .globalLimit(1)
            .leakDetection(LeakDetection.PARANOID)
            .releaseLeaked(true)
            .build();
    return Stream.of(
        Arguments.of(
            "keyed semaphore",
            keyed,
            (Runnable) () -> takeAndDrop(keyed.forKey("k")),
            (Check)
                () -> keyed.forKey("k").available() == 1 && keyed.forKey("other").available() == 1),
        Arguments.of(
            "semaphore",
            semaphore,
            (Runnable) () -> takeAndDrop(semaphore),
            (Check) () -> semaphore.available() == 1),
        Arguments.of(
            "mutex", mutex, (Runnable) () -> dropLock(mutex), (Check) () -> !mutex.isLocked()),
        Arguments.of(
            "write lock",
            lock,
            (Runnable) () -> dropWrite(lock),
            (Check) () -> !lock.isWriteLocked()));
  }

  @Test
  void theSystemProperty_namesALevelInAnyCase_andABadOneIsRefusedWithTheChoices() {
    assertEquals(LeakDetection.PARANOID, LeakTracker.levelOf("Paranoid"));
    assertEquals(LeakDetection.OFF, LeakTracker.levelOf(" off "));
    assertEquals(LeakDetection.SAMPLED, LeakTracker.levelOf(null), "the default");
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> LeakTracker.levelOf("always"));
    assertEquals(
        "jeton.leakDetection is 'always': it takes off, sampled or paranoid", e.getMessage());
  }

  /** A builder that sets no level takes the system property's, read when it builds. */
  @Test
  void aBuilderWithoutALevel_takesTheSystemPropertys() {
    Semaphore semaphore;
    System.setProperty(LeakTracker.PROPERTY, "PARANOID");
    try {
      semaphore = Semaphore.builder().name("lt-by-property").limit(1).build();
    } finally {
      System.clearProperty(LeakTracker.PROPERTY);
    }
    takeAndDrop(semaphore); // the first grant: watched only at paranoid

    assertTrue(awaitReports(1).get(0).message().contains("'lt-by-property'"));
  }

  /** A property that names no level fails the build, saying which it takes. */
  @Test
  void aSystemPropertyThatNamesNoLevel_failsTheBuild() {
    System.setProperty(LeakTracker.PROPERTY, "sometimes");
    try {
      IllegalArgumentException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              IllegalArgumentException.class, () -> Mutex.builder().build());
      assertEquals(
          "jeton.leakDetection is 'sometimes': it takes off, sampled or paranoid", e.getMessage());
      // a level set on the builder does not read it
      assertNotNull(Mutex.builder().leakDetection(LeakDetection.OFF).build());
    } finally {
      System.clearProperty(LeakTracker.PROPERTY);
    }
  }

  // ---------------------------------------------------------------- helpers

  /** Takes a grant of a fresh primitive at {@code level} and drops it, in a frame of its own. */
  private static void dropOne(Kind kind, LeakDetection level) {
    assertNotNull(kind.take().apply(level));
  }

  private static void takeAndDrop(Semaphore semaphore) {
    assertEquals(1, semaphore.tryAcquire(1).orElseThrow().permits());
  }

  private static void dropLock(Mutex mutex) {
    assertNotNull(mutex.tryLock().orElseThrow());
  }

  private static void dropWrite(ReadWriteLock lock) {
    assertNotNull(lock.tryWrite().orElseThrow());
  }

  /**
   * Drops a permit of a fresh paranoid semaphore 'lt-control' and waits for its report: reports of
   * grants collected before it have come by then, so a test can check that some never came.
   */
  private List<LeakLog.Logged> dropAControlAndAwaitItsReport() {
    Semaphore control =
        Semaphore.builder()
            .name("lt-control")
            .limit(1)
            .leakDetection(LeakDetection.PARANOID)
            .build();
    takeAndDrop(control);
    return awaitReports(1);
  }

  /** Runs the collector until {@code count} reports came; fails after the hang guard. */
  private List<LeakLog.Logged> awaitReports(int count) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TestThreads.GUARD_SECONDS);
    while (reports.size() < count) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "no report of " + count + " leaked grant(s) within the hang guard: " + reports);
      }
      collect();
    }
    return reports;
  }

  private static void collect() {
    System.gc();
    try {
      Thread.sleep(20); // the reporter's turn
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
