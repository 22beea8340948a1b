package dev.jeton;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A grant racing with the cancel of the scope whose task waits for it (issue 29): the task's stage
 * queues a Jeton wait and lets its grant go in a dependent step, as in {@code scope.forkAsync(() ->
 * mutex.lockAsync().thenAccept(Guard::unlock))}, while another thread unlocks (sends, arrives) and
 * the scope is cancelled. Whatever the interleaving, the grant reaches that step or is given back:
 * nothing is left held, queued, or lost. Before the fix the scope cancelled the stage before it
 * withdrew the wait, so a grant in between completed the wait while its dependent step, cancelled,
 * never ran: the mutex stayed locked with no holder.
 */
class ScopeGrantRaceTest {
  private static final int ROUNDS = 4_000;

  /** One primitive of a round: held by someone else, waited for by the task. */
  interface Race {
    /** Makes the task's wait queue; returns what grants it: an unlock, a send, an arrival. */
    Runnable hold();

    /** The task's stage: queues a wait and lets its grant go in a dependent step. */
    CompletionStage<?> waitThenLetGo();

    /** Once the round is over: null if nothing is held, queued or lost, else what is. */
    @Nullable String leftover();

    /**
     * Null if the task's wait is no longer queued, else what is: checked as the task's fork future
     * completes from outside, whether or not the grant came. Null also where queueing is not the
     * task's alone to undo (a barrier, whose other party may queue meanwhile).
     */
    @Nullable String queued();
  }

  /** Every primitive a scope's task can wait on. */
  static List<Arguments> races() {
    return List.of(
        race("mutex", GrantRaces::mutex),
        race("semaphore", GrantRaces::semaphore),
        race("read-write lock, a read after a write", () -> GrantRaces.readWriteLock(true)),
        race("read-write lock, a write after a read", () -> GrantRaces.readWriteLock(false)),
        race("keyed semaphore, waiting for its key", () -> GrantRaces.keyedSemaphore(true)),
        race(
            "keyed semaphore, waiting for the global limit",
            () -> GrantRaces.keyedSemaphore(false)),
        race("channel receive", () -> GrantRaces.channelReceive(false)),
        race("channel receive in a select", () -> GrantRaces.channelReceive(true)),
        race("channel send", GrantRaces::channelSend),
        race("barrier", GrantRaces::barrier));
  }

  private static Arguments race(String name, Supplier<Race> races) {
    return Arguments.of(name, races);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("races")
  void aGrantRacingWithTheCancel_isNeverLost(String name, Supplier<Race> races) throws Exception {
    raceGrantsWithCancels(races);
  }

  /**
   * {@link #ROUNDS} rounds of one race: a fresh primitive, held; a scope whose one task waits for
   * it; the grant on the racer's thread, racing with the cancel (of the scope, or of the task's
   * fork future), each after a random pause, so that the grant lands anywhere in the cancel.
   */
  private void raceGrantsWithCancels(Supplier<Race> races) throws Exception {
    raceGrantsWith(
        races,
        29,
        round -> {
          if (round.random.nextBoolean()) {
            round.scope.cancel();
          } else {
            round.task.cancel(true);
          }
        });
  }

  /**
   * The fork future completed from outside (cancelled, completed, failed) as the grant comes: when
   * it completes, the task's wait has left its queue, and once the round is over nothing is held,
   * queued or lost. Before the fix the fork future completed first and the task was cancelled
   * after, so the future's own callbacks found the wait still queued (and one that waited for the
   * grant to be made could find the lock held by a grant given up and not yet given back); a
   * completion other than cancel did not cancel the task at all.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("races")
  void theForkFutureCompletedFromOutside_completesOnlyOnceTheWaitIsWithdrawn(
      String name, Supplier<Race> races) throws Exception {
    raceGrantsWith(
        races,
        30,
        round -> {
          var unused =
              round.task.whenComplete(
                  (value, failure) -> {
                    String queued = round.race.queued();
                    if (queued != null) {
                      round.violations.add(
                          "round " + round.number + ", as the fork future completed: " + queued);
                    }
                  });
          switch (round.random.nextInt(3)) {
            case 0 -> round.task.cancel(true);
            case 1 -> round.task.complete(null);
            default -> round.task.completeExceptionally(new TimeoutException());
          }
        });
  }

  /** One round of a race, as its give-up step sees it. */
  private record Round(
      int number,
      Race race,
      Scope scope,
      CompletableFuture<?> task,
      SplittableRandom random,
      Queue<String> violations) {}

  /**
   * {@link #ROUNDS} rounds of one race, each given up by {@code giveUp} (which cancels the scope,
   * or completes the task's fork future from outside) after a random pause while the racer's thread
   * grants after another, so that the grant lands anywhere in the give-up; then the scope is closed
   * and nothing may be held, queued or lost.
   */
  private void raceGrantsWith(Supplier<Race> races, long seed, Consumer<Round> giveUp)
      throws Exception {
    SplittableRandom random = new SplittableRandom(seed);
    Queue<String> violations = new ConcurrentLinkedQueue<>();
    try (Racer racer = new Racer()) {
      for (int round = 0; round < ROUNDS; round++) {
        Race race = races.get();
        Runnable grant = race.hold();
        Scope scope = Scope.open();
        CompletableFuture<?> task = scope.forkAsync(race::waitThenLetGo);
        racer.start(grant, random.nextInt(PAUSE));
        pause(random.nextInt(PAUSE));
        giveUp.accept(new Round(round, race, scope, task, random, violations));
        racer.awaitDone();
        scope.close();
        String left = race.leftover();
        if (left != null) {
          violations.add("round " + round + ": " + left);
        }
      }
    }
    TestThreads.assertNoViolations(violations);
  }

  /** The longest pause before the grant or the cancel, in spins: about as long as either. */
  private static final int PAUSE = 400;

  private static void pause(int spins) {
    for (int i = spins; i > 0; i--) {
      Thread.onSpinWait();
    }
  }

  /**
   * A thread that runs each round's grant as soon as the test thread starts the round: it spins
   * between rounds rather than parks, so that the grant and the cancel start together rather than a
   * wake-up apart.
   */
  private static final class Racer implements AutoCloseable {
    private final Thread thread;
    private volatile @Nullable Runnable next;
    private volatile int pause;
    private volatile boolean stopped;
    private volatile @Nullable Throwable failure;

    Racer() {
      thread = new Thread(this::loop, "granter");
      thread.setDaemon(true);
      thread.start();
    }

    void start(Runnable grant, int spins) {
      pause = spins;
      next = grant;
    }

    void awaitDone() {
      TestThreads.awaitTrue(() -> next == null || failure != null, "the grant to be made");
      Throwable f = failure;
      if (f != null) {
        throw new AssertionError("the grant threw", f);
      }
    }

    private void loop() {
      while (!stopped) {
        Runnable grant = next;
        if (grant == null) {
          Thread.onSpinWait();
          continue;
        }
        pause(pause);
        try {
          grant.run();
        } catch (Throwable t) {
          failure = t;
        }
        next = null;
      }
    }

    @Override
    public void close() throws InterruptedException {
      stopped = true;
      thread.join();
    }
  }

  /** The races, one per primitive a scope's task can wait on. */
  static final class GrantRaces {
    private GrantRaces() {}

    static Race mutex() {
      Mutex mutex = Mutex.create();
      return race(
          () -> mutex.tryLock().orElseThrow()::unlock,
          () -> mutex.lockAsync().thenAccept(Guard::unlock),
          () -> mutex.isLocked() || mutex.queueLength() != 0 ? "stranded: " + mutex : null,
          () -> queued(mutex.queueLength(), mutex));
    }

    static Race semaphore() {
      Semaphore semaphore = Semaphore.create(3);
      return race(
          () -> semaphore.tryAcquire(2).orElseThrow()::release,
          () -> semaphore.acquireAsync(2).thenAccept(Permit::release),
          () ->
              semaphore.available() != 3 || semaphore.queueLength() != 0
                  ? "stranded: " + semaphore
                  : null,
          () -> queued(semaphore.queueLength(), semaphore));
    }

    static Race readWriteLock(boolean writeHeld) {
      ReadWriteLock lock = ReadWriteLock.create();
      return race(
          () -> (writeHeld ? lock.tryWrite() : lock.tryRead()).orElseThrow()::unlock,
          () -> (writeHeld ? lock.readAsync() : lock.writeAsync()).thenAccept(Guard::unlock),
          () -> {
            Guard free = lock.tryWrite().orElse(null);
            if (free == null) {
              return "stranded: " + lock;
            }
            free.unlock();
            return lock.queueLength() != 0 ? "queued: " + lock : null;
          },
          () -> queued(lock.queueLength(), lock));
    }

    /**
     * A key of limit 1 under a global limit of 1: the task waits for its key held by another
     * request of the same key, or, holding its key's permit, for the global permit held by another
     * key.
     */
    static Race keyedSemaphore(boolean sameKey) {
      KeyedSemaphore<String> keyed = KeyedSemaphore.builder().limitPerKey(1).globalLimit(1).build();
      Semaphore mine = keyed.forKey("mine");
      return race(
          () -> keyed.forKey(sameKey ? "mine" : "other").tryAcquire(1).orElseThrow()::release,
          () -> mine.acquireAsync(1).thenAccept(Permit::release),
          () -> keyed.keyCount() != 0 || mine.queueLength() != 0 ? "stranded: " + keyed : null,
          () -> queued(mine.queueLength(), mine));
    }

    /**
     * An empty rendezvous channel: the task receives (alone or in a select) and records the value;
     * the grant sends if a receiver waits. Every value sent must be recorded.
     */
    static Race channelReceive(boolean inASelect) {
      FifoChannel<String> channel = (FifoChannel<String>) Channel.<String>rendezvous();
      Queue<String> sent = new ConcurrentLinkedQueue<>();
      Queue<String> received = new ConcurrentLinkedQueue<>();
      return race(
          () ->
              () -> {
                if (channel.trySend("v")) {
                  sent.add("v");
                }
              },
          () ->
              (inASelect ? Select.selectAsync(channel.onReceive(v -> v)) : channel.receiveAsync())
                  .thenAccept(received::add),
          () ->
              List.copyOf(sent).equals(List.copyOf(received)) && channel.queueLength() == 0
                  ? null
                  : "sent " + sent + ", received " + received + ", " + channel,
          () -> queued(channel.queueLength(), channel));
    }

    /**
     * A rendezvous channel: the task sends and records that it did; the grant receives if a sender
     * waits. A value received must be recorded as sent, and one not received must have gone to
     * onUndelivered.
     */
    static Race channelSend() {
      Queue<String> undelivered = new ConcurrentLinkedQueue<>();
      FifoChannel<String> channel =
          (FifoChannel<String>) Channel.<String>builder().onUndelivered(undelivered::add).build();
      Queue<String> received = new ConcurrentLinkedQueue<>();
      Queue<String> sent = new ConcurrentLinkedQueue<>();
      return race(
          () -> () -> channel.tryReceive().ifPresent(received::add),
          () -> channel.sendAsync("v").thenRun(() -> sent.add("v")),
          () -> {
            List<String> accounted = new ArrayList<>(received);
            accounted.addAll(undelivered);
            return accounted.equals(List.of("v"))
                    && List.copyOf(sent).equals(List.copyOf(received))
                    && channel.queueLength() == 0
                ? null
                : "received " + received + ", sent " + sent + ", undelivered " + undelivered;
          },
          () -> queued(channel.queueLength(), channel));
    }

    /**
     * A barrier of two: the task arrives and records the generation it passed; the grant is the
     * other party's arrival. If the other passed, the task must have recorded the same pass.
     */
    static Race barrier() {
      Barrier barrier = Barrier.create(2);
      Queue<Long> passed = new ConcurrentLinkedQueue<>();
      List<CompletableFuture<Barrier.Arrival>> other = new ArrayList<>();
      return race(
          () -> () -> other.add(barrier.awaitAsync()),
          () -> barrier.awaitAsync().thenAccept(arrival -> passed.add(arrival.generation())),
          () -> {
            CompletableFuture<Barrier.Arrival> o = other.get(0); // the granter has finished
            boolean otherPassed = o.isDone() && !o.isCompletedExceptionally();
            o.cancel(false); // alone in its generation if the task's arrival was taken back
            return List.copyOf(passed).equals(otherPassed ? List.of(0L) : List.of())
                    && barrier.arrived() == 0
                ? null
                : "the other passed: " + otherPassed + ", the task passed " + passed;
          },
          () -> null); // the other party's arrival may queue meanwhile
    }

    private static @Nullable String queued(int queueLength, Object primitive) {
      return queueLength == 0 ? null : queueLength + " still queued: " + primitive;
    }

    private static Race race(
        Supplier<Runnable> hold,
        Supplier<CompletionStage<?>> waitThenLetGo,
        Supplier<@Nullable String> leftover,
        Supplier<@Nullable String> queued) {
      return new Race() {
        @Override
        public Runnable hold() {
          return hold.get();
        }

        @Override
        public CompletionStage<?> waitThenLetGo() {
          return waitThenLetGo.get();
        }

        @Override
        public @Nullable String leftover() {
          return leftover.get();
        }

        @Override
        public @Nullable String queued() {
          return queued.get();
        }
      };
    }
  }
}
