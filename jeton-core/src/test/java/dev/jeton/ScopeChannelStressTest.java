package dev.jeton;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Scopes and channels together (issue 15): in each round, sibling scopes (and child scopes opened
 * by their tasks) fork producers and consumers on two shared channels, blocking and asynchronous,
 * some consumers selecting from either channel, while the scopes are cancelled at random, fork
 * futures are cancelled, and a channel is closed or cancelled midway. Every value given to a send
 * is received exactly once or reported to onUndelivered once; each blocking consumer, and the final
 * drain, receives each producer's values in the order they were sent; no task outlives its scope;
 * and once the scopes are closed, no send, receive or select is left queued on either channel, so
 * no thread is left blocked.
 */
class ScopeChannelStressTest {
  private static final int ROUNDS = 400;
  private static final int SCOPES = 3;
  private static final int MAX_VALUES = 20;

  private final ExecutorService executor = ScopeTest.executorOfThisJdk();
  private final Queue<String> violations = new ConcurrentLinkedQueue<>();

  @AfterEach
  void stopExecutor() {
    executor.shutdownNow();
  }

  @Test
  void scopesOnSharedChannels_underRandomCancelAndClose_everyValueEndsOnce_inOrder()
      throws Exception {
    SplittableRandom random = new SplittableRandom(15);
    for (int round = 0; round < ROUNDS; round++) {
      new Round(round, random.split()).run();
    }
    TestThreads.assertNoViolations(violations);
  }

  /** One round: its channels, the values sent and where each ended, and its scopes. */
  private final class Round {
    final String where;
    final SplittableRandom random;
    final Queue<Integer> undelivered = new ConcurrentLinkedQueue<>();
    final List<Channel<Integer>> channels = new ArrayList<>();
    final Queue<Integer> sent = new ConcurrentLinkedQueue<>();

    /** What each blocking consumer received, in order; then the final drain, in order. */
    final List<List<Integer>> inOrder = new CopyOnWriteArrayList<>();

    /** What asynchronous receives took, whose order says nothing. */
    final Queue<Integer> unordered = new ConcurrentLinkedQueue<>();

    final AtomicInteger nextProducer = new AtomicInteger();
    final AtomicInteger liveTasks = new AtomicInteger();

    Round(int round, SplittableRandom random) {
      this.where = "round " + round;
      this.random = random;
      for (int i = 0; i < 2; i++) {
        Channel.Builder<Integer> b = Channel.<Integer>builder().onUndelivered(undelivered::add);
        int capacity = random.nextInt(4) - 1; // -1 for unlimited, 0 for rendezvous, or 1, 2
        channels.add(capacity < 0 ? b.unlimited().build() : b.capacity(capacity).build());
      }
    }

    void run() throws Exception {
      List<Scope> scopes = new ArrayList<>();
      List<AtomicInteger> alive = new ArrayList<>();
      List<CompletableFuture<?>> forks = new ArrayList<>();
      for (int s = 0; s < SCOPES; s++) {
        Scope scope = Scope.builder().executor(executor).open();
        scopes.add(scope);
        alive.add(watch(scope, "scope " + s));
      }
      for (int step = random.nextInt(4, 12); step > 0; step--) {
        int s = random.nextInt(scopes.size());
        forks.add(fork(scopes.get(s), alive.get(s), random.split(), true));
        switch (random.nextInt(12)) {
          case 0 -> scopes.get(random.nextInt(scopes.size())).cancel();
          case 1 -> forks.get(random.nextInt(forks.size())).cancel(true);
          case 2 -> channels.get(random.nextInt(2)).close();
          case 3 -> channels.get(random.nextInt(2)).cancel();
          case 4, 5 -> LockSupport.parkNanos(random.nextInt(1, 200_000));
          default -> {}
        }
      }
      LockSupport.parkNanos(random.nextInt(1, 500_000)); // let values flow, then end it all
      for (Scope scope : scopes) {
        scope.close();
      }
      int outlived = liveTasks.get();
      if (outlived != 0) {
        violations.add(where + ": " + outlived + " tasks outlived their scopes");
      }
      for (Channel<Integer> channel : channels) {
        int queued = ((FifoChannel<?>) channel).queueLength();
        if (queued != 0) {
          violations.add(
              where + ": " + queued + " waits left queued (sends, receives, selects): " + channel);
        }
        drain(channel);
      }
      check();
    }

    // ------------------------------------------------------------ scopes and their tasks

    /** Returns the count of the scope's live blocking tasks, which its hook checks is 0. */
    AtomicInteger watch(Scope scope, String name) {
      AtomicInteger alive = new AtomicInteger();
      try {
        scope.teardown(
            () -> {
              int n = alive.get();
              if (n != 0) {
                violations.add(where + ", " + name + ": a hook ran with " + n + " tasks alive");
              }
            });
      } catch (IllegalStateException ended) {
        // a child scope opened in a cancelled parent has ended already
      }
      return alive;
    }

    /** Forks a random task: a producer or a consumer, blocking or asynchronous, or a child. */
    CompletableFuture<?> fork(
        Scope scope, AtomicInteger alive, SplittableRandom r, boolean mayNest) {
      Channel<Integer> channel = channels.get(r.nextInt(2));
      switch (r.nextInt(mayNest ? 5 : 4)) {
        case 0:
          int producer = nextProducer.getAndIncrement();
          int values = r.nextInt(1, MAX_VALUES + 1);
          return scope.fork(blocking(alive, () -> produce(channel, producer, values, r)));
        case 1:
          boolean either = r.nextInt(3) == 0;
          return scope.fork(blocking(alive, () -> either ? consumeEither() : consume(channel, r)));
        case 2:
          int single = nextProducer.getAndIncrement() * 1_000_000;
          return scope.forkAsync(
              () -> {
                sent.add(single); // the channel's from the moment sendAsync is called
                return channel.sendAsync(single);
              });
        case 3:
          boolean dependent = r.nextBoolean();
          return scope.forkAsync(
              () -> {
                CompletableFuture<Integer> receive =
                    r.nextBoolean() ? channel.receiveAsync() : Select.selectAsync(eitherClauses());
                var unused = receive.thenAccept(unordered::add);
                // A dependent stage: the scope's cancel reaches the receive only as a wait of
                // the task (ScopeTask.trackWait), not through the stage.
                return dependent ? receive.thenApply(v -> v) : receive;
              });
        default:
          return scope.fork(blocking(alive, () -> nest(r)));
      }
    }

    /** A task that opens a child scope, forks into it, and joins it. */
    private Object nest(SplittableRandom r) throws Exception {
      try (Scope child = Scope.builder().executor(executor).open()) {
        AtomicInteger alive = watch(child, "a child scope");
        for (int i = r.nextInt(1, 4); i > 0; i--) {
          fork(child, alive, r.split(), false);
        }
        child.join();
        return "joined";
      }
    }

    /** Counts the body as alive in its scope and in the round while it runs. */
    private BlockingTask<Object, Exception> blocking(AtomicInteger alive, BlockingTask<?, ?> body) {
      return () -> {
        alive.incrementAndGet();
        liveTasks.incrementAndGet();
        try {
          return body.call();
        } finally {
          liveTasks.decrementAndGet();
          alive.decrementAndGet();
        }
      };
    }

    // ------------------------------------------------------------ producers and consumers

    private Object produce(Channel<Integer> channel, int producer, int values, SplittableRandom r)
        throws InterruptedException {
      for (int seq = 0; seq < values; seq++) {
        int v = producer * 1_000_000 + seq;
        sent.add(v);
        try {
          if (r.nextInt(4) == 0) {
            channel.send(v, Duration.ofNanos(r.nextInt(1, 100_000)));
          } else {
            channel.send(v);
          }
        } catch (TimeoutException gaveUp) {
          // the value went to onUndelivered; the next one follows it
        } catch (ChannelClosedException closed) {
          return "closed";
        }
      } // an InterruptedException (the scope's cancel) ends it: that value went to onUndelivered
      return "sent";
    }

    private Object consume(Channel<Integer> channel, SplittableRandom r)
        throws InterruptedException {
      List<Integer> got = new ArrayList<>();
      inOrder.add(got);
      try {
        for (; ; ) {
          if (r.nextInt(4) == 0) {
            try {
              got.add(channel.receive(Duration.ofNanos(r.nextInt(1, 100_000))));
            } catch (TimeoutException none) {
              // try again
            }
          } else {
            Optional<Integer> v = channel.receiveOrClosed();
            if (v.isEmpty()) {
              return "drained";
            }
            got.add(v.get());
          }
        }
      } catch (ChannelClosedException cancelled) {
        return "cancelled";
      } // an InterruptedException (the scope's cancel): it took nothing
    }

    /** Receives from either channel, by a select, until one of them is closed and drained. */
    private Object consumeEither() throws InterruptedException {
      List<Integer> got = new ArrayList<>();
      inOrder.add(got);
      try {
        for (; ; ) {
          got.add(Select.select(eitherClauses()));
        }
      } catch (ChannelClosedException closed) {
        return "closed";
      } // an InterruptedException (the scope's cancel): it took nothing
    }

    @SuppressWarnings("unchecked")
    private SelectClause<Integer>[] eitherClauses() {
      return new SelectClause[] {
        channels.get(0).onReceive(v -> v), channels.get(1).onReceive(v -> v)
      };
    }

    // ------------------------------------------------------------ the end of the round

    /** Receives what the channel still holds (in order), or cancels it (to onUndelivered). */
    private void drain(Channel<Integer> channel) {
      if (random.nextBoolean()) {
        channel.cancel();
        return;
      }
      channel.close();
      List<Integer> got = new ArrayList<>();
      for (Optional<Integer> v = channel.tryReceive(); v.isPresent(); v = channel.tryReceive()) {
        got.add(v.get());
      }
      inOrder.add(got);
    }

    private void check() {
      Map<Integer, Integer> ends = new HashMap<>();
      for (List<Integer> got : inOrder) {
        Map<Integer, Integer> last = new HashMap<>();
        for (int v : got) {
          ends.merge(v, 1, Integer::sum);
          Integer before = last.put(v / 1_000_000, v % 1_000_000);
          if (before != null && before >= v % 1_000_000) {
            violations.add(
                where
                    + ": producer "
                    + v / 1_000_000
                    + "'s "
                    + v % 1_000_000
                    + " received after its "
                    + before);
          }
        }
      }
      unordered.forEach(v -> ends.merge(v, 1, Integer::sum));
      undelivered.forEach(v -> ends.merge(v, 1, Integer::sum));
      for (int v : sent) {
        int n = ends.getOrDefault(v, 0);
        if (n != 1) {
          violations.add(where + ": " + v + " ended " + n + " times (received or undelivered)");
        }
      }
      if (ends.size() != sent.size()) {
        violations.add(where + ": " + (ends.size() - sent.size()) + " values never sent ended");
      }
    }
  }
}
