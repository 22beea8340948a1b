package dev.jeton;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Random trees of scopes with random tasks (quick, failing, sleeping, waiting on a semaphore
 * blocking or asynchronously, opening child scopes, ignoring their interrupt for a while), under
 * random cancellation (of the root, of a fork, by a deadline): no task outlives its scope, the
 * teardown hooks of every scope run exactly once, in reverse order, after its tasks and its
 * children, and no wait is left queued nor permit held.
 */
class ScopeStressTest {
  private static final int ROUNDS = 1000;
  private static final int MAX_DEPTH = 3;

  private final ExecutorService executor = ScopeTest.executorOfThisJdk();
  private final Semaphore semaphore = Semaphore.create(2);
  private final Queue<String> violations = new ConcurrentLinkedQueue<>();
  private final AtomicInteger liveTasks = new AtomicInteger();

  @AfterEach
  void stopExecutor() {
    executor.shutdownNow();
  }

  @Test
  void randomTreesUnderRandomCancellation_noTaskOutlivesItsScope_hooksRunOnceInReverse()
      throws Exception {
    SplittableRandom random = new SplittableRandom(15);
    for (int round = 0; round < ROUNDS; round++) {
      SplittableRandom r = random.split();
      Scope.Builder builder = Scope.builder().executor(executor);
      if (r.nextInt(4) == 0) {
        builder.supervisor();
      }
      if (r.nextInt(4) == 0) {
        builder.deadline(Duration.ofMillis(r.nextInt(1, 5)));
      }
      Node root = new Node(round);
      List<CompletableFuture<Object>> forks = new CopyOnWriteArrayList<>();
      try (Scope scope = builder.open()) {
        root.register(scope);
        for (int i = r.nextInt(1, 5); i > 0; i--) {
          forks.add(scope.fork(body(root, r.split(), 1)));
        }
        switch (r.nextInt(4)) {
          case 0 -> scope.cancel();
          case 1 -> forks.get(r.nextInt(forks.size())).cancel(true);
          case 2 -> LockSupport.parkNanos(r.nextInt(1, 500_000));
          default -> {} // close at once
        }
        try {
          scope.join();
        } catch (Exception expected) { // failures and cancellations are the point here
        }
      }
      if (liveTasks.get() != 0) {
        violations.add("round " + round + ": " + liveTasks.get() + " tasks outlived the root");
      }
      root.checkEnded("round " + round);
      TestThreads.awaitTrue(
          () -> semaphore.available() == 2 && semaphore.queueLength() == 0,
          "the semaphore free and unqueued after round " + round + ": " + semaphore);
    }
    TestThreads.assertNoViolations(violations);
  }

  /**
   * Forks racing with the cancel (the JDK's StructuredTaskScope once missed threads that were
   * starting, JDK-8311867, and its join hung): each task either never runs or is interrupted, and
   * join never waits for one that was missed.
   */
  @Test
  void forksRacingWithCancel_eitherNeverRunOrAreInterrupted() throws Exception {
    for (int round = 0; round < 300; round++) {
      Scope scope = Scope.builder().executor(executor).open();
      Thread forker =
          new Thread(
              () -> {
                for (int i = 0; i < 20; i++) {
                  scope.fork(
                      () -> {
                        liveTasks.incrementAndGet();
                        try {
                          new CountDownLatch(1).await(); // until interrupted
                          return null;
                        } finally {
                          liveTasks.decrementAndGet();
                        }
                      });
                }
              });
      forker.start();
      LockSupport.parkNanos(round * 1_000L);
      scope.cancel();
      forker.join();
      try {
        scope.join();
        violations.add("round " + round + ": join did not say the scope was cancelled");
      } catch (CancellationException expected) {
        // every task was reached
      }
      if (liveTasks.get() != 0) {
        violations.add("round " + round + ": " + liveTasks.get() + " tasks outlived the scope");
      }
      scope.close();
    }
    TestThreads.assertNoViolations(violations);
  }

  /** One scope of the tree: its live tasks, its children, and the order its hooks ran in. */
  private final class Node {
    final AtomicInteger live = new AtomicInteger();
    final List<Node> children = new CopyOnWriteArrayList<>();
    final List<Integer> hooksRun = new CopyOnWriteArrayList<>();
    volatile int hooks;

    /** Names the scope in a violation: its round and its depth. */
    final String where;

    /** The root of round {@code round}. */
    Node(int round) {
      this.where = "round " + round + ", root";
    }

    /** A child scope opened by a task of {@code parent}. */
    Node(Node parent) {
      this.where = parent.where + "'s child";
      parent.children.add(this);
    }

    /**
     * Up to three hooks (the scope may end between two, cancelled by its parent or its deadline);
     * the first registered, which runs last, checks the scope is empty.
     */
    void register(Scope scope) {
      try {
        registerThree(scope);
      } catch (IllegalStateException ended) {
        // ended already: the hooks counted are the ones accepted
      }
    }

    private void registerThree(Scope scope) {
      scope.teardown(
          () -> {
            int alive = live.get();
            if (alive != 0) {
              violations.add(where + ": a hook ran with " + alive + " tasks of its scope alive");
            }
            for (Node child : children) {
              if (child.hooksRun.size() != child.hooks) {
                violations.add(where + ": a parent's hook ran before its child had ended");
              }
            }
            hooksRun.add(0);
          });
      hooks = 1;
      scope.teardown(() -> hooksRun.add(1));
      hooks = 2;
      scope.teardown(() -> hooksRun.add(2));
      hooks = 3;
    }

    void checkEnded(String where) {
      List<Integer> expected = List.of(2, 1, 0).subList(3 - hooks, 3);
      if (!hooksRun.equals(expected)) {
        violations.add(where + ": hooks ran " + hooksRun + ", expected " + expected);
      }
      for (Node child : children) {
        child.checkEnded(where);
      }
    }
  }

  private BlockingTask<Object, Exception> body(Node node, SplittableRandom r, int depth) {
    int kind = r.nextInt(depth < MAX_DEPTH ? 8 : 7);
    long pause = r.nextInt(1, 300_000);
    return () -> {
      liveTasks.incrementAndGet();
      node.live.incrementAndGet();
      try {
        return run(kind, pause, node, r, depth);
      } finally {
        node.live.decrementAndGet();
        liveTasks.decrementAndGet();
      }
    };
  }

  private Object run(int kind, long pause, Node node, SplittableRandom r, int depth)
      throws Exception {
    switch (kind) {
      case 0:
        return "quick";
      case 1:
        throw new IllegalStateException("failed on purpose");
      case 2:
        TimeUnit.NANOSECONDS.sleep(pause);
        return "slept";
      case 3:
        try (Permit p = semaphore.acquire(1)) {
          TimeUnit.NANOSECONDS.sleep(pause);
        }
        return "held";
      case 4:
        CompletableFuture<Permit> waiting = semaphore.acquireAsync(1);
        try {
          waiting.get().release();
        } catch (InterruptedException e) {
          // The scope withdraws the wait; if the grant came first, it is ours to give back.
          var unused = waiting.thenAccept(Permit::release);
          throw e;
        }
        return "held async";
      case 5:
        long end = System.nanoTime() + pause;
        while (System.nanoTime() - end < 0) {
          Thread.onSpinWait(); // ignores its interrupt: the scope waits for it
        }
        return "ignored";
      case 6:
        var unused = semaphore.acquireAsync(1).thenAccept(Permit::release);
        return "left a wait queued"; // withdrawn if the scope is cancelled, else released
      default:
        Node childNode = new Node(node);
        try (Scope child = Scope.builder().executor(executor).open()) {
          childNode.register(child);
          List<CompletableFuture<Object>> forks = new ArrayList<>();
          for (int i = r.nextInt(1, 4); i > 0; i--) {
            forks.add(child.fork(body(childNode, r.split(), depth + 1)));
          }
          child.join();
          return forks.size();
        }
    }
  }
}
