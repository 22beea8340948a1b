package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each interleaving of a grant, the withdrawal of the wait it grants, and the cancel of the stage
 * that waits, made to happen in turn (issue 29; ScopeGrantRaceTest races them at random). The
 * task's stage is {@code lock.request().thenAccept(letGo)}: whichever comes first, the grant
 * reaches the step that lets it go, or is given back.
 */
class ScopeGrantInterleavingTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  /** A primitive to wait for, held by someone else. */
  interface Lock {
    /** Takes it, so that a request queues; returns what lets it go (and grants that request). */
    Runnable hold();

    CompletableFuture<? extends AutoCloseable> request();

    /** Nothing held, nothing queued. */
    boolean isFree();

    int queueLength();
  }

  enum Kind {
    MUTEX {
      @Override
      Lock make(Executor completions) {
        Mutex mutex = Mutex.builder().completionExecutor(completions).build();
        return lock(
            () -> mutex.tryLock().orElseThrow()::unlock,
            mutex::lockAsync,
            () -> !mutex.isLocked() && mutex.queueLength() == 0,
            mutex::queueLength);
      }
    },
    SEMAPHORE {
      @Override
      Lock make(Executor completions) {
        Semaphore semaphore = Semaphore.builder().limit(3).completionExecutor(completions).build();
        return lock(
            () -> semaphore.tryAcquire(2).orElseThrow()::release,
            () -> semaphore.acquireAsync(2),
            () -> semaphore.available() == 3 && semaphore.queueLength() == 0,
            semaphore::queueLength);
      }
    };

    abstract Lock make(Executor completions);

    /** Completes futures on the thread that grants, as by default. */
    Lock make() {
      return make(Runnable::run);
    }
  }

  /**
   * The grant comes while the stage is being cancelled: a callback of the stage lets the holder go.
   * (The scope used to cancel the stage first: the grant then completed the wait, and the step,
   * cancelled with the stage, never let it go.)
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void grantMadeAsTheStageIsCancelled(Kind kind) throws Exception {
    Lock lock = kind.make();
    Runnable letHolderGo = lock.hold();
    try (Scope scope = Scope.open()) {
      scope.forkAsync(
          () -> {
            CompletableFuture<Void> stage =
                lock.request().thenAccept(ScopeGrantInterleavingTest::letGo);
            var unused = stage.whenComplete((v, f) -> letHolderGo.run());
            return stage;
          });
      assertFalse(lock.isFree());
      scope.cancel();
    }
    assertTrue(lock.isFree(), "nothing held or queued");
  }

  /**
   * The scope is cancelled by a callback of the wait, on the granting thread, after the grant
   * completed the wait and before the step that lets it go has run (the JDK runs a future's
   * dependents last registered first, which the order recorded checks). Withdrawing the wait and
   * then cancelling the stage would skip that step: the stage is cancelled only once the wait's
   * completion has run its callbacks.
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void scopeCancelledBetweenTheGrantAndTheStep(Kind kind) throws Exception {
    Lock lock = kind.make();
    Runnable letHolderGo = lock.hold();
    Queue<String> order = new ConcurrentLinkedQueue<>();
    try (Scope scope = Scope.open()) {
      scope.forkAsync(
          () ->
              requestThenLetGo(
                  lock,
                  order,
                  () -> {
                    order.add("cancel");
                    scope.cancel();
                  }));
      letHolderGo.run();
    }
    assertEquals(List.of("cancel", "step"), List.copyOf(order), "the step ran after the cancel");
    assertTrue(lock.isFree(), "nothing held or queued");
  }

  /**
   * As above, with the cancel on another thread while the granting thread is held inside the wait's
   * completion: the cancel returns at once (it does not wait for the completion), and the stage is
   * cancelled after the step has run.
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void scopeCancelledOnAnotherThreadWhileTheGrantIsDelivered(Kind kind) throws Exception {
    Lock lock = kind.make();
    Runnable letHolderGo = lock.hold();
    CountDownLatch inCompletion = new CountDownLatch(1);
    CountDownLatch cancelReturned = new CountDownLatch(1);
    Queue<String> steps = new ConcurrentLinkedQueue<>();
    try (Scope scope = Scope.open()) {
      scope.forkAsync(
          () ->
              requestThenLetGo(
                  lock,
                  steps,
                  () -> {
                    inCompletion.countDown();
                    TestThreads.awaitLatch(cancelReturned);
                  }));
      threads.start(letHolderGo::run);
      TestThreads.awaitLatch(inCompletion);
      scope.cancel();
      cancelReturned.countDown();
      threads.joinAll();
    }
    assertEquals(List.of("step"), List.copyOf(steps));
    assertTrue(lock.isFree(), "nothing held or queued");
  }

  /**
   * The grant is decided but its completion not yet run (a completion executor holds it) when the
   * scope is cancelled: the cancel wins the wait, whose grant is given back before the cancelled
   * wait's callbacks run, so they find the lock free.
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void grantDecidedButNotDelivered_isGivenBackBeforeTheCancelIsSeen(Kind kind) throws Exception {
    cancelAsTheGrantIsDecided(kind, false);
  }

  /**
   * As above, with the task's fork future cancelled instead of the scope: the future completes only
   * once the task's wait is withdrawn and its grant given back, so that the future's own callbacks
   * find the lock free. (The fork future used to complete first and cancel the task after: its
   * callbacks found the grant not yet given back, the lock held by no one.)
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void grantDecidedButNotDelivered_isGivenBackBeforeTheForkFutureIsCancelled(Kind kind)
      throws Exception {
    cancelAsTheGrantIsDecided(kind, true);
  }

  /**
   * Cancels the scope, or the task's fork future, while the grant of the task's wait is decided but
   * held by the completion executor; checks that the cancel's callbacks (the wait's, or the fork
   * future's) find the lock free.
   */
  private static void cancelAsTheGrantIsDecided(Kind kind, boolean theForkFuture) throws Exception {
    Queue<Runnable> completions = new ArrayDeque<>();
    Lock lock = kind.make(completions::add);
    Runnable letHolderGo = lock.hold();
    Queue<Boolean> freeWhenSeen = new ConcurrentLinkedQueue<>();
    try (Scope scope = Scope.open()) {
      CompletableFuture<Void> task =
          scope.forkAsync(
              () -> {
                CompletableFuture<? extends AutoCloseable> wait = lock.request();
                if (!theForkFuture) {
                  var unused = wait.whenComplete((g, failure) -> freeWhenSeen.add(lock.isFree()));
                }
                return wait.thenAccept(ScopeGrantInterleavingTest::letGo);
              });
      if (theForkFuture) {
        var unused = task.whenComplete((v, failure) -> freeWhenSeen.add(lock.isFree()));
      }
      letHolderGo.run();
      assertEquals(1, completions.size(), "the grant's completion, held");
      if (theForkFuture) {
        assertTrue(task.cancel(true));
      } else {
        scope.cancel();
      }
      assertEquals(
          List.of(true), List.copyOf(freeWhenSeen), "given back before the cancel was seen");
      completions.forEach(Runnable::run);
      if (theForkFuture) {
        scope.join(); // cancelled through its own future: not a failure of the scope
      }
    }
    assertTrue(lock.isFree(), "nothing held or queued");
  }

  /**
   * A fork future completed from outside in any other way ({@code orTimeout} here) cancels the task
   * as its cancel does, first: the task's wait leaves the queue before the future's callbacks run.
   * (It used to leave the task running and its wait queued.)
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void forkFutureTimedOut_withdrawsTheTaskFirst(Kind kind) throws Exception {
    Lock lock = kind.make();
    Runnable letHolderGo = lock.hold();
    Queue<Integer> queuedWhenSeen = new ConcurrentLinkedQueue<>();
    CountDownLatch seen = new CountDownLatch(1);
    try (Scope scope = Scope.open()) {
      CompletableFuture<Void> task =
          scope.forkAsync(() -> lock.request().thenAccept(ScopeGrantInterleavingTest::letGo));
      var unused =
          task.orTimeout(1, java.util.concurrent.TimeUnit.MILLISECONDS)
              .whenComplete(
                  (v, failure) -> {
                    queuedWhenSeen.add(lock.queueLength());
                    seen.countDown();
                  });
      TestThreads.awaitLatch(seen);
      assertEquals(List.of(0), List.copyOf(queuedWhenSeen), "the wait was withdrawn first");
      letHolderGo.run();
      assertTrue(task.isCompletedExceptionally());
      scope.join();
    }
    assertTrue(lock.isFree(), "nothing held or queued");
  }

  /**
   * The fork future cancelled again by a callback that its own cancel runs (the wait it withdraws
   * fails the stage's step, on the cancelling thread): that inner cancel answers at once, false,
   * since the future is not cancelled yet, rather than wait for the outer cancel, which is waiting
   * for it. The outer one then completes the future cancelled.
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void forkFutureCancelledFromInsideItsOwnCancel_doesNotWaitForItself(Kind kind) throws Exception {
    Lock lock = kind.make();
    Runnable letHolderGo = lock.hold();
    CompletableFuture<CompletableFuture<Void>> self = new CompletableFuture<>();
    Queue<Boolean> innerAnswers = new ConcurrentLinkedQueue<>();
    Queue<Boolean> outerAnswers = new ConcurrentLinkedQueue<>();
    Scope scope = Scope.open(); // closed only if the cancel returned: else close would hang
    CompletableFuture<Void> task =
        scope.forkAsync(
            () ->
                lock.request()
                    .handle(
                        (grant, failure) -> {
                          innerAnswers.add(self.join().cancel(true));
                          return null;
                        }));
    self.complete(task);
    threads.start(() -> outerAnswers.add(task.cancel(true))); // hangs if it waits for itself
    threads.joinAll();
    scope.close();
    assertEquals(List.of(false), List.copyOf(innerAnswers), "not cancelled yet, inside");
    assertEquals(List.of(true), List.copyOf(outerAnswers));
    assertTrue(task.isCancelled());
    letHolderGo.run();
    assertTrue(lock.isFree(), "nothing held or queued");
  }

  /**
   * The task's stage: requests {@code lock}, then lets the grant go in a step that it records in
   * {@code steps}. {@code inTheCompletion} runs in the request's completion before that step: it is
   * registered after the step, and the JDK runs a future's dependents last registered first (the
   * tests check the order they record).
   */
  private static CompletableFuture<Void> requestThenLetGo(
      Lock lock, Queue<String> steps, Runnable inTheCompletion) {
    CompletableFuture<? extends AutoCloseable> wait = lock.request();
    CompletableFuture<Void> stage =
        wait.thenAccept(
            grant -> {
              steps.add("step");
              letGo(grant);
            });
    var unused = wait.whenComplete((grant, failure) -> inTheCompletion.run());
    return stage;
  }

  private static void letGo(AutoCloseable grant) {
    try {
      grant.close();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static Lock lock(
      java.util.function.Supplier<Runnable> hold,
      java.util.function.Supplier<CompletableFuture<? extends AutoCloseable>> request,
      java.util.function.BooleanSupplier isFree,
      java.util.function.IntSupplier queueLength) {
    return new Lock() {
      @Override
      public Runnable hold() {
        return hold.get();
      }

      @Override
      public CompletableFuture<? extends AutoCloseable> request() {
        return request.get();
      }

      @Override
      public boolean isFree() {
        return isFree.getAsBoolean();
      }

      @Override
      public int queueLength() {
        return queueLength.getAsInt();
      }
    };
  }
}
