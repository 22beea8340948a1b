package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The threads one test starts, and the waits the lock and barrier tests share: registered as a
 * {@code @RegisterExtension} field, it interrupts and joins the test's threads after each test and
 * fails the test if one of them threw.
 *
 * <p>Its static part is what the mutex, read-write lock and barrier tests would otherwise each
 * write again: waiting for conditions and futures, the stress runs on platform threads (with an
 * interrupter) and on virtual threads, the race of a cancel with a grant, and the Lincheck settings
 * and per-thread guards of the lock model checks.
 *
 * <p>Every wait here is bounded by {@link #GUARD_SECONDS}, a hang guard and never a timing
 * assertion, so that a test fails (naming what it awaited) rather than hangs.
 */
public final class TestThreads implements AfterEachCallback {
  /** A hang guard, never a timing assertion: long enough for a loaded 2-core machine. */
  static final long GUARD_SECONDS = 120;

  private final List<Thread> threads = new CopyOnWriteArrayList<>();
  private final List<Throwable> failures = new CopyOnWriteArrayList<>();

  /** Something a test thread runs; may throw anything. */
  public interface Body {
    void run() throws Exception;
  }

  /** What each of a number of test threads runs, given its number; may throw anything. */
  interface NumberedBody {
    void run(int number) throws Exception;
  }

  /**
   * Starts a daemon thread that runs {@code body}; an interrupt ends it quietly, anything else it
   * throws fails the test.
   */
  public Thread start(Body body) {
    Thread t =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (Throwable e) {
                failures.add(e);
              }
            });
    t.setDaemon(true);
    threads.add(t);
    t.start();
    return t;
  }

  /**
   * Waits for every thread started so far to end, then throws what they threw; fails naming a
   * thread that is still running after the hang guard.
   */
  public void joinAll() throws InterruptedException {
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(GUARD_SECONDS));
      if (t.isAlive()) {
        failures.add(new AssertionError(t.getName() + " still runs after the hang guard"));
      }
    }
    threads.clear();
    if (!failures.isEmpty()) {
      AssertionError e = new AssertionError("a test thread failed");
      failures.forEach(e::addSuppressed);
      failures.clear();
      throw e;
    }
  }

  /**
   * Runs {@code body} on {@code count} threads at once, numbered from 0, and waits for them all;
   * throws what they threw.
   */
  void runAll(int count, NumberedBody body) throws InterruptedException {
    for (int n = 0; n < count; n++) {
      int number = n;
      start(() -> body.run(number));
    }
    joinAll();
  }

  @Override
  public void afterEach(ExtensionContext context) throws InterruptedException {
    threads.forEach(Thread::interrupt);
    joinAll();
  }

  // ---------------------------------------------------------------- waiting

  /** Waits until {@code condition} holds; fails, naming what it awaited, after the hang guard. */
  public static void awaitTrue(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GUARD_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what);
      }
      LockSupport.parkNanos(50_000); // leaves the core to the threads awaited
    }
  }

  /**
   * Waits for {@code latch} to open; unchecked, so that a barrier's action can call it, and an
   * interrupt becomes an {@code IllegalStateException}.
   */
  static void awaitLatch(CountDownLatch latch) {
    try {
      if (!latch.await(GUARD_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("latch never opened");
      }
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The value of {@code f}, waiting for it up to the hang guard. */
  static <T> T done(Future<T> f) throws Exception {
    return f.get(GUARD_SECONDS, TimeUnit.SECONDS);
  }

  /** What {@code f} failed with; fails the test if it completes normally. */
  static Throwable failureOf(Future<?> f) {
    return assertThrows(ExecutionException.class, () -> done(f)).getCause();
  }

  /** Waits for every future to complete; a cancelled one is complete too. */
  static void awaitAll(Collection<? extends CompletableFuture<?>> futures) throws Exception {
    for (CompletableFuture<?> f : futures) {
      try {
        done(f);
      } catch (CancellationException ignored) {
        // cancelled requests are complete too
      }
    }
  }

  /** Fails listing the first ten of {@code violations}, if there are any. */
  static void assertNoViolations(Collection<String> violations) {
    assertEquals(
        List.of(),
        violations.stream().limit(10).collect(Collectors.toList()),
        violations.size() + " violations, the first ten shown");
  }

  // ---------------------------------------------------------------- lock tests

  /** A thread started on a call that the test expects to throw, and what it threw. */
  record Blocked(Thread thread, CompletableFuture<Throwable> thrown) {}

  /**
   * Starts a thread that makes {@code call}, which the test expects to throw (once interrupted, or
   * timed out); {@code thrown} completes with the exception, or fails if the call returned.
   */
  Blocked startBlocked(Body call) {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread thread =
        start(
            () -> {
              try {
                call.run();
                thrown.completeExceptionally(new AssertionError("the blocked call returned"));
              } catch (Exception e) {
                thrown.complete(e);
              }
            });
    return new Blocked(thread, thrown);
  }

  /** How a lock runs an asynchronous task under it, such as {@code Mutex::callAsync}. */
  interface AsyncCall {
    CompletableFuture<String> call(Supplier<CompletionStage<String>> task);
  }

  /**
   * Asks {@code callAsync}, on a lock held by someone else, to run a task; cancels the request at
   * once and checks that the future is cancelled. The flag returned says whether the task ran.
   */
  static AtomicBoolean cancelledBeforeTheGrant(AsyncCall callAsync) {
    AtomicBoolean ran = new AtomicBoolean();
    CompletableFuture<String> result =
        callAsync.call(
            () -> {
              ran.set(true);
              return CompletableFuture.completedFuture("x");
            });
    assertTrue(result.cancel(false));
    assertThrows(CancellationException.class, result::join);
    return ran;
  }

  /** One round of a cancel racing with a grant: the held lock, the request, the one behind it. */
  record CancelRace(
      Guard held,
      CompletableFuture<? extends Guard> racing,
      CompletableFuture<? extends Guard> next) {}

  /** Sets up round {@code round} of a race; may block while it takes the lock. */
  interface RaceSetUp {
    CancelRace round(int round) throws Exception;
  }

  /** Checks round {@code round} once the request behind holds the lock, and unlocks it. */
  interface RaceCheck {
    void check(Guard next, int round) throws Exception;
  }

  /**
   * Races, {@code rounds} times, a cancel of a queued request with the unlock (on another thread)
   * that grants that very request: a request granted first is ours to unlock, so whichever wins,
   * the request behind it must get the lock, which {@code check} then looks at. Fails unless some
   * cancels won.
   */
  static void raceCancelsWithGrants(int rounds, RaceSetUp setUp, RaceCheck check) throws Exception {
    ExecutorService unlocker = Executors.newSingleThreadExecutor();
    int cancelsWon = 0;
    try {
      for (int round = 0; round < rounds; round++) {
        CancelRace race = setUp.round(round);
        Future<?> unlocked = unlocker.submit(race.held()::unlock);
        if (race.racing().cancel(false)) {
          cancelsWon++;
        } else {
          done(race.racing()).unlock(); // granted first: ours
        }
        done(unlocked);
        check.check(done(race.next()), round);
      }
    } finally {
      unlocker.shutdownNow();
    }
    assertTrue(cancelsWon > 0, "some cancels won");
  }

  /** A lock held, and a request queued behind its holder. */
  record HeldAndQueued(Guard held, CompletableFuture<? extends Guard> queued) {}

  /** Builds a lock with the given completion executor, takes it, and queues a request. */
  interface QueueOnExecutor {
    HeldAndQueued queueBehindAHolder(Executor completions) throws Exception;
  }

  /**
   * The name of the thread that completes a queued request when its holder unlocks, on a lock that
   * {@code lock} builds with a completion executor whose one thread is named {@code name}.
   */
  static String completingThread(String name, QueueOnExecutor lock) throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, name));
    try {
      HeldAndQueued locked = lock.queueBehindAHolder(executor);
      AtomicReference<String> completedOn = new AtomicReference<>();
      CompletableFuture<Void> seen =
          locked
              .queued()
              .thenAccept(
                  g -> {
                    completedOn.set(Thread.currentThread().getName());
                    g.unlock();
                  });
      locked.held().unlock();
      done(seen);
      return completedOn.get();
    } finally {
      executor.shutdownNow();
    }
  }

  /** A virtual-thread-per-task executor; skips the test below JDK 21. */
  static ExecutorService virtualThreadPerTaskExecutor() throws ReflectiveOperationException {
    Assumptions.assumeTrue(
        Runtime.version().feature() >= 21,
        "virtual threads need JDK 21+; .ci/run runs this suite again on the newest JDK installed");
    return FifoSemaphoreStressTest.newVirtualThreadPerTaskExecutor();
  }

  // ---------------------------------------------------------------- Lincheck

  /** How many parallel threads the lock Lincheck tests run. */
  static final int LINCHECK_THREADS = 3;

  /**
   * Model-checks {@code test} against the sequential {@code model}, three operations a thread:
   * 4,000 interleavings, about 15 s on an idle 2-core machine.
   */
  static void checkLinearizable(Class<?> test, Class<?> model) {
    checkLinearizable(test, model, 400);
  }

  /**
   * As {@link #checkLinearizable(Class, Class)}, with {@code interleavings} per scenario: fewer for
   * operations whose every step Lincheck traces slowly (a select over two channels).
   */
  static void checkLinearizable(Class<?> test, Class<?> model, int interleavings) {
    lockModelChecking(3, interleavings).sequentialSpecification(model).check(test);
  }

  /**
   * Model-checks {@code test} against sequential runs of itself, three operations a thread, with
   * {@code interleavings} per scenario.
   */
  static void checkLinearizable(Class<?> test, int interleavings) {
    lockModelChecking(3, interleavings).check(test);
  }

  /** Model-checks {@code test}, whose {@code @Validate} method says the lock settled. */
  static void checkSettles(Class<?> test) {
    checkSettles(test, 400);
  }

  /** As {@link #checkSettles(Class)}, with {@code interleavings} per scenario. */
  static void checkSettles(Class<?> test, int interleavings) {
    lockModelChecking(2, interleavings).check(test);
  }

  /**
   * Scenarios per model check: each explores {@code interleavings} of one random scenario. Five,
   * not ten, since issue 33: the model checks took a third of CI's 25 minutes, and the number of
   * interleavings per scenario, which finds the deep races, is kept.
   */
  private static final int SCENARIOS = 5;

  private static ModelCheckingOptions lockModelChecking(int actorsPerThread, int interleavings) {
    return new ModelCheckingOptions()
        .iterations(SCENARIOS)
        .invocationsPerIteration(interleavings)
        .threads(LINCHECK_THREADS)
        .actorsPerThread(actorsPerThread);
  }

  /**
   * The guards each thread of a Lincheck scenario holds, latest first. Lincheck's {@code
   * ThreadIdGen} numbers the parallel threads from 1 and gives 0 to the init part and {@code
   * LINCHECK_THREADS + 1} to the post part.
   */
  static final class Held {
    private final ArrayDeque<Guard>[] held = slots();

    /** One empty deque per Lincheck thread number. */
    @SuppressWarnings("unchecked")
    static <T> ArrayDeque<T>[] slots() {
      ArrayDeque<T>[] slots = new ArrayDeque[LINCHECK_THREADS + 2];
      for (int i = 0; i < slots.length; i++) {
        slots[i] = new ArrayDeque<>();
      }
      return slots;
    }

    /** Keeps {@code guard} if there is one; says whether there was. */
    boolean keep(int thread, Optional<Guard> guard) {
      guard.ifPresent(held[thread]::push);
      return guard.isPresent();
    }

    @Nullable Guard peek(int thread) {
      return held[thread].peek();
    }

    @Nullable Guard take(int thread) {
      return held[thread].poll();
    }
  }
}
