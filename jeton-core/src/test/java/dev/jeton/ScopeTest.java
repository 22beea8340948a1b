package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Scope: fork and join, the first failure, cancellation, teardown, nesting, and deadlines. */
class ScopeTest {
  private final ExecutorService executor = executorOfThisJdk();

  /**
   * Virtual threads on JDK 21 and later (the suite runs again on the newest JDK), a cached pool of
   * platform threads before: every test runs on one or the other, none is skipped.
   */
  static ExecutorService executorOfThisJdk() {
    if (Runtime.version().feature() >= 21) {
      try {
        return FifoSemaphoreStressTest.newVirtualThreadPerTaskExecutor();
      } catch (ReflectiveOperationException e) {
        throw new AssertionError("JDK 21+ has virtual threads", e);
      }
    }
    return Executors.newCachedThreadPool();
  }

  @AfterEach
  void stopExecutor() {
    executor.shutdownNow();
  }

  /** What {@code f} failed with, as it was given (not wrapped); waits for it, with a guard. */
  static Throwable failure(CompletableFuture<?> f) throws Exception {
    Throwable failure =
        f.handle((value, thrown) -> thrown).get(TestThreads.GUARD_SECONDS, TimeUnit.SECONDS);
    if (failure == null) {
      throw new AssertionError("completed normally: " + f);
    }
    return failure;
  }

  /**
   * A blocking task that counts down {@code started}, then ignores its interrupts until {@code
   * release} opens, then sets {@code ended}.
   */
  private static BlockingTask<Void, RuntimeException> ignoringInterrupts(
      CountDownLatch started, CountDownLatch release, AtomicBoolean ended) {
    return () -> {
      started.countDown();
      while (true) {
        try {
          release.await();
          break;
        } catch (InterruptedException ignored) {
          // this task ignores cancellation until released
        }
      }
      ended.set(true);
      return null;
    };
  }

  private Scope open() {
    return Scope.builder().executor(executor).open();
  }

  /** A blocking task that waits until interrupted, counting down {@code started} first. */
  private static BlockingTask<String, InterruptedException> untilInterrupted(
      CountDownLatch started) {
    return () -> {
      started.countDown();
      new CountDownLatch(1).await();
      return "never";
    };
  }

  @Test
  void join_waitsForEveryTask_andEveryForkFutureIsDone() throws Exception {
    try (Scope scope = open()) {
      CompletableFuture<Integer> a = scope.fork(() -> 1);
      CompletableFuture<Integer> b = scope.forkAsync(() -> CompletableFuture.supplyAsync(() -> 2));
      scope.join();
      assertTrue(a.isDone() && b.isDone());
      assertEquals(3, a.join() + b.join());
      assertFalse(scope.isCancelled());
      assertEquals(List.of(), scope.failures());
    }
  }

  @Test
  void join_waitsForTasksForkedByTasks() throws Exception {
    try (Scope scope = open()) {
      CompletableFuture<CompletableFuture<String>> outer =
          scope.fork(() -> Scope.current().orElseThrow().fork(() -> "inner"));
      scope.join();
      assertEquals("inner", outer.join().join());
    }
  }

  @Test
  void firstFailure_cancelsTheOthers_andJoinThrowsIt() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    IllegalStateException boom = new IllegalStateException("boom");
    try (Scope scope = open()) {
      CompletableFuture<String> slow = scope.fork(untilInterrupted(started));
      TestThreads.awaitLatch(started);
      scope.fork(
          () -> {
            throw boom;
          });
      ExecutionException thrown = assertThrows(ExecutionException.class, scope::join);
      assertSame(boom, thrown.getCause());
      assertInstanceOf(CancellationException.class, failure(slow));
      assertTrue(scope.isCancelled());
      assertEquals(List.of(boom), scope.failures());
    }
  }

  @Test
  void supervisor_letsTheOthersGoOn_andCollectsTheFailures() throws Exception {
    RuntimeException first = new RuntimeException("first");
    RuntimeException second = new RuntimeException("second");
    CountDownLatch firstFailed = new CountDownLatch(1);
    try (Scope scope = Scope.builder().supervisor().executor(executor).open()) {
      scope.fork(
          () -> {
            firstFailed.countDown();
            throw first;
          });
      TestThreads.awaitLatch(firstFailed);
      CompletableFuture<String> fine =
          scope.fork(
              () -> {
                TestThreads.awaitTrue(() -> scope.failures().size() == 1, "the first failure");
                return "fine";
              });
      scope.join();
      scope.forkAsync(() -> CompletableFuture.failedFuture(second));
      scope.join();
      assertEquals("fine", fine.join());
      assertEquals(List.of(first, second), scope.failures());
      assertFalse(scope.isCancelled());
    }
  }

  @Test
  void cancel_interruptsTasks_thenRunsTeardownsInReverseOrder_once() throws Exception {
    List<String> log = new CopyOnWriteArrayList<>();
    CountDownLatch started = new CountDownLatch(2);
    Scope scope = open();
    scope.teardown(() -> log.add("first registered"));
    for (int i = 0; i < 2; i++) {
      scope.fork(
          () -> {
            try {
              started.countDown();
              new CountDownLatch(1).await();
            } finally {
              log.add("task ended");
            }
            return null;
          });
    }
    scope.teardown(() -> log.add("second registered"));
    TestThreads.awaitLatch(started);
    assertTrue(scope.cancel());
    assertFalse(scope.cancel(), "cancelled once");
    CancellationException thrown = assertThrows(CancellationException.class, scope::join);
    assertEquals("the scope was cancelled", thrown.getMessage());
    assertEquals(List.of("task ended", "task ended", "second registered", "first registered"), log);
    scope.close();
    scope.close();
    assertEquals(4, log.size(), "the hooks ran once");
  }

  @Test
  void close_withTasksRunning_cancelsThem_andWaits() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CompletableFuture<String> task;
    try (Scope scope = open()) {
      task = scope.fork(untilInterrupted(started));
      TestThreads.awaitLatch(started);
    }
    assertTrue(task.isDone(), "ended before close returned");
    assertInstanceOf(CancellationException.class, failure(task));
  }

  @Test
  void close_afterJoin_runsTheHooks() throws Exception {
    AtomicBoolean tornDown = new AtomicBoolean();
    Scope scope = open();
    scope.teardown(() -> tornDown.set(true));
    scope.fork(() -> "done");
    scope.join();
    assertFalse(tornDown.get(), "the scope is still open after join");
    scope.close();
    assertTrue(tornDown.get());
    scope.join(); // an ended scope with nothing cancelled joins quietly
  }

  @Test
  void forkAfterCancel_isRefused_andItsTaskNeverRuns() throws Exception {
    Scope scope = open();
    scope.cancel();
    AtomicBoolean ran = new AtomicBoolean();
    CompletableFuture<Boolean> blocking = scope.fork(() -> ran.getAndSet(true));
    CompletableFuture<Boolean> async =
        scope.forkAsync(() -> CompletableFuture.completedFuture(ran.getAndSet(true)));
    CancellationException refused =
        assertInstanceOf(CancellationException.class, failure(blocking));
    assertEquals("the scope is cancelled: the forked task was not run", refused.getMessage());
    assertInstanceOf(CancellationException.class, failure(async));
    assertFalse(ran.get());
    scope.close();
  }

  /**
   * The race behind ScopeStressTest's failure (a hook ran while a task of its scope ran, and the
   * task outlived its root): a refused fork's future is done with a {@link CancellationException},
   * so {@code CompletableFuture.cancel} on it returns true, and the fork future then cancelled the
   * refused task, which ended it into the scope: the scope counted a task it had never taken as
   * ended, one less than were running, and ended with one still running.
   */
  @Test
  void cancellingARefusedFork_doesNotEndTheScopeBeforeItsRunningTask() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean ended = new AtomicBoolean();
    AtomicBoolean hookRan = new AtomicBoolean();
    AtomicBoolean endedBeforeHook = new AtomicBoolean();
    Scope scope = open();
    scope.teardown(
        () -> {
          endedBeforeHook.set(ended.get());
          hookRan.set(true);
        });
    scope.fork(ignoringInterrupts(started, release, ended));
    TestThreads.awaitLatch(started);
    scope.cancel(); // the task keeps running: the scope is cancelled, not ended
    CompletableFuture<String> refused = scope.fork(() -> "never run");
    assertInstanceOf(CancellationException.class, failure(refused));
    refused.cancel(true);
    assertFalse(hookRan.get(), "the scope ended while its task ran");
    release.countDown();
    scope.close();
    assertTrue(hookRan.get());
    assertTrue(endedBeforeHook.get(), "the hook ran after the task ended");
  }

  @Test
  void forkOrTeardownAfterClose_throws() {
    Scope scope = open();
    scope.close();
    IllegalStateException thrown =
        assertThrows(IllegalStateException.class, () -> scope.fork(() -> "late"));
    assertEquals("the scope is closed: cannot fork now", thrown.getMessage());
    assertThrows(IllegalStateException.class, () -> scope.forkAsync(CompletableFuture::new));
    assertThrows(IllegalStateException.class, () -> scope.teardown(() -> {}));
  }

  @Test
  void deadline_cancelsTheScope_andJoinSaysSo() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    try (Scope scope = Scope.builder().deadline(Duration.ofMillis(20)).executor(executor).open()) {
      CompletableFuture<String> task = scope.fork(untilInterrupted(started));
      CancellationException thrown = assertThrows(CancellationException.class, scope::join);
      assertEquals("the scope's deadline of 20ms passed", thrown.getMessage());
      assertInstanceOf(TimeoutException.class, thrown.getCause());
      assertInstanceOf(CancellationException.class, failure(task));
    }
  }

  @Test
  void builder_refusesBadInput() {
    IllegalArgumentException negative =
        assertThrows(
            IllegalArgumentException.class, () -> Scope.builder().deadline(Duration.ofSeconds(-1)));
    assertEquals("timeout must not be negative, was PT-1S", negative.getMessage());
    assertThrows(NullPointerException.class, () -> Scope.builder().executor(null));
    try (Scope scope = open()) {
      assertThrows(NullPointerException.class, () -> scope.fork(null));
      assertThrows(NullPointerException.class, () -> scope.teardown(null));
    }
  }

  @Test
  void teardownExceptions_areSuppressedOntoTheFailure() throws Exception {
    RuntimeException boom = new RuntimeException("boom");
    RuntimeException hookFailed = new RuntimeException("hook");
    AtomicBoolean otherHookRan = new AtomicBoolean();
    try (Scope scope = open()) {
      scope.teardown(() -> otherHookRan.set(true));
      scope.teardown(
          () -> {
            throw hookFailed;
          });
      scope.fork(
          () -> {
            throw boom;
          });
      ExecutionException thrown = assertThrows(ExecutionException.class, scope::join);
      assertSame(boom, thrown.getCause());
      assertEquals(List.of(hookFailed), List.of(boom.getSuppressed()));
      assertTrue(otherHookRan.get(), "a failing hook does not stop the others");
    } // close does not throw them again
  }

  @Test
  void teardownExceptions_withoutAFailure_areThrownByClose() {
    RuntimeException first = new RuntimeException("first");
    RuntimeException second = new RuntimeException("second");
    Scope scope = open();
    scope.teardown(
        () -> {
          throw second;
        });
    scope.teardown(
        () -> {
          throw first; // runs first: reverse order
        });
    RuntimeException thrown = assertThrows(RuntimeException.class, scope::close);
    assertSame(first, thrown);
    assertEquals(List.of(second), List.of(first.getSuppressed()));
    scope.close(); // reported once
  }

  @Test
  void join_interrupted_throws_andLeavesTheScopeAsItWas() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    try (Scope scope = open()) {
      CompletableFuture<String> task = scope.fork(untilInterrupted(started));
      TestThreads.awaitLatch(started);
      Thread.currentThread().interrupt();
      assertThrows(InterruptedException.class, scope::join);
      assertFalse(scope.isCancelled());
      assertFalse(task.isDone());
    }
  }

  @Test
  void close_waitsForATaskThatIgnoresItsInterrupt_andKeepsItsOwnInterrupt() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean ended = new AtomicBoolean();
    Scope scope = open();
    scope.fork(ignoringInterrupts(started, release, ended));
    TestThreads.awaitLatch(started);
    Thread releaser =
        new Thread(
            () -> {
              TestThreads.awaitTrue(scope::isCancelled, "close cancelled the scope");
              release.countDown();
            });
    releaser.start();
    Thread.currentThread().interrupt();
    scope.close();
    assertTrue(Thread.interrupted(), "close kept the caller's interrupt");
    assertTrue(ended.get(), "close returned only after the task ended");
    releaser.join();
  }

  @Test
  void joinOrClose_fromATaskOfTheScope_isRefused() throws Exception {
    try (Scope scope = open()) {
      CompletableFuture<Object> join =
          scope.fork(() -> assertThrows(IllegalStateException.class, scope::join));
      CompletableFuture<Object> close =
          scope.fork(() -> assertThrows(IllegalStateException.class, scope::close));
      scope.join();
      assertEquals(
          "a task of the scope cannot join it: it would wait for itself",
          ((Throwable) join.join()).getMessage());
      assertInstanceOf(IllegalStateException.class, close.join());
    }
  }

  @Test
  void current_isTheTasksScope_insideATaskOnly() throws Exception {
    assertEquals(Optional.empty(), Scope.current());
    try (Scope scope = open()) {
      CompletableFuture<Optional<Scope>> blocking = scope.fork(Scope::current);
      CompletableFuture<Optional<Scope>> async =
          scope.forkAsync(() -> CompletableFuture.completedFuture(Scope.current()));
      scope.join();
      assertSame(scope, blocking.join().orElseThrow());
      assertSame(scope, async.join().orElseThrow());
      assertEquals(Optional.empty(), Scope.current(), "the opener is not inside its scope");
    }
  }

  @Test
  void forkAsync_cancel_cancelsTheStage() throws Exception {
    CompletableFuture<String> stage = new CompletableFuture<>();
    Scope scope = open();
    CompletableFuture<String> task = scope.forkAsync(() -> stage);
    scope.cancel();
    scope.close();
    assertTrue(stage.isCancelled());
    assertTrue(task.isCompletedExceptionally());
  }

  @Test
  void forkAsync_supplierThrows_failsTheTask() throws Exception {
    RuntimeException boom = new RuntimeException("boom");
    try (Scope scope = Scope.builder().supervisor().open()) {
      CompletableFuture<String> task =
          scope.forkAsync(
              () -> {
                throw boom;
              });
      assertSame(boom, failure(task));
      assertEquals(List.of(boom), scope.failures());
    }
  }

  @Test
  void anExecutorThatRefuses_failsTheTask() throws Exception {
    Executor refusing =
        task -> {
          throw new RejectedExecutionException("full");
        };
    try (Scope scope = Scope.builder().supervisor().executor(refusing).open()) {
      CompletableFuture<String> task = scope.fork(() -> "never");
      assertInstanceOf(RejectedExecutionException.class, failure(task));
    }
  }

  @Test
  void defaultExecutor_runsBlockingTasks() throws Exception {
    try (Scope scope = Scope.open()) {
      CompletableFuture<String> name = scope.fork(() -> Thread.currentThread().getName());
      scope.join();
      assertTrue(name.join().startsWith("jeton-scope-"), name.join());
    }
  }

  // ---------------------------------------------------------------- nesting

  @Test
  void cancellingTheParent_cancelsTheChildsTasks_andTheParentEndsAfterTheChild() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    List<String> log = new CopyOnWriteArrayList<>();
    Scope parent = open();
    parent.teardown(() -> log.add("parent torn down"));
    AtomicReference<CompletableFuture<String>> grandchild = new AtomicReference<>();
    parent.fork(
        () -> {
          try (Scope child = Scope.builder().executor(executor).open()) {
            child.teardown(() -> log.add("child torn down"));
            grandchild.set(child.fork(untilInterrupted(started)));
            child.join();
          }
          return null;
        });
    TestThreads.awaitLatch(started);
    parent.cancel();
    assertThrows(CancellationException.class, parent::join);
    assertInstanceOf(CancellationException.class, failure(grandchild.get()));
    assertEquals(List.of("child torn down", "parent torn down"), log);
  }

  @Test
  void aChildScopeLeftOpen_keepsTheParentRunning_untilTheParentsCloseCancelsIt() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<CompletableFuture<String>> leaked = new AtomicReference<>();
    Scope parent = open();
    parent.fork(
        () -> {
          Scope child = Scope.builder().executor(executor).open(); // never closed
          leaked.set(child.fork(untilInterrupted(started)));
          return null;
        });
    TestThreads.awaitLatch(started);
    TestThreads.awaitTrue(
        () -> parent.toString().equals("Scope[open, 1 running]"),
        "the opener ended and the child still counts: " + parent);
    parent.close();
    assertInstanceOf(CancellationException.class, failure(leaked.get()));
  }

  @Test
  void cancellingAForkFuture_cancelsThatTask_andItsChildScopes_only() throws Exception {
    CountDownLatch started = new CountDownLatch(2);
    AtomicReference<CompletableFuture<String>> inChild = new AtomicReference<>();
    try (Scope scope = open()) {
      CompletableFuture<String> sibling = scope.fork(untilInterrupted(started));
      CompletableFuture<Object> opener =
          scope.fork(
              () -> {
                try (Scope child = Scope.builder().executor(executor).open()) {
                  inChild.set(child.fork(untilInterrupted(started)));
                  child.join();
                }
                return null;
              });
      TestThreads.awaitLatch(started);
      assertTrue(opener.cancel(true));
      // The child's task may count down before fork has returned its future to the opener.
      TestThreads.awaitTrue(
          () -> inChild.get() != null && inChild.get().isDone(), "the child's task ended");
      assertInstanceOf(CancellationException.class, failure(inChild.get()));
      assertFalse(sibling.isDone(), "the sibling runs on");
      assertFalse(scope.isCancelled(), "a cancelled task is not a failure");
    }
  }
}
