package dev.jeton;

import static dev.jeton.TestThreads.done;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A request that gives up leaves its queue before its future completes (issue 29): read in the
 * future's own callback, the queue no longer counts it, whether it timed out, was cancelled or was
 * failed from outside, on every primitive whose requests queue. Before, the withdrawal came after
 * the callbacks: a timed-out lock request was still counted (199 of 200 read in the callback).
 */
class GivenUpCallbacksTest {
  /** A request queued on a busy primitive, and how many requests that primitive counts. */
  record Queued(CompletableFuture<?> future, IntSupplier queued) {}

  /** How a request gives up. */
  enum GiveUp {
    OWN_TIMEOUT,
    CANCEL,
    FAILED_FROM_OUTSIDE,
    OR_TIMEOUT
  }

  private static final Duration SHORT = Duration.ofMillis(1);

  /** Each primitive, made busy, queueing one request: with its own timeout, or none. */
  static List<Arguments> primitives() {
    return List.of(
        primitive(
            "semaphore",
            timeout -> {
              Semaphore s = Semaphore.create(1);
              var held = s.tryAcquire(1).orElseThrow();
              return new Queued(
                  timeout == null ? s.acquireAsync(1) : s.acquireAsync(1, timeout), s::queueLength);
            }),
        primitive(
            "mutex",
            timeout -> {
              Mutex m = Mutex.create();
              var held = m.tryLock().orElseThrow();
              return new Queued(
                  timeout == null ? m.lockAsync() : m.lockAsync(timeout), m::queueLength);
            }),
        primitive(
            "read lock",
            timeout -> {
              ReadWriteLock rw = ReadWriteLock.create();
              var held = rw.tryWrite().orElseThrow();
              return new Queued(
                  timeout == null ? rw.readAsync() : rw.readAsync(timeout), rw::queueLength);
            }),
        primitive(
            "write lock",
            timeout -> {
              ReadWriteLock rw = ReadWriteLock.create();
              var held = rw.tryRead().orElseThrow();
              return new Queued(
                  timeout == null ? rw.writeAsync() : rw.writeAsync(timeout), rw::queueLength);
            }),
        primitive(
            "keyed semaphore, waiting for its key",
            timeout -> {
              Semaphore key = KeyedSemaphore.create(1).forKey("k");
              var held = key.tryAcquire(1).orElseThrow();
              return new Queued(
                  timeout == null ? key.acquireAsync(1) : key.acquireAsync(1, timeout),
                  key::queueLength);
            }),
        primitive(
            "keyed semaphore, waiting for the global limit",
            timeout -> {
              KeyedSemaphore<String> keyed =
                  KeyedSemaphore.builder().limitPerKey(1).globalLimit(1).build();
              var held = keyed.forKey("other").tryAcquire(1).orElseThrow();
              Semaphore key = keyed.forKey("k");
              return new Queued(
                  timeout == null ? key.acquireAsync(1) : key.acquireAsync(1, timeout),
                  key::queueLength);
            }),
        primitive(
            "channel receive",
            timeout -> {
              FifoChannel<String> c = (FifoChannel<String>) Channel.<String>rendezvous();
              return new Queued(
                  timeout == null ? c.receiveAsync() : c.receiveAsync(timeout), c::queueLength);
            }),
        primitive(
            "channel send",
            timeout -> {
              FifoChannel<String> c = (FifoChannel<String>) Channel.<String>rendezvous();
              return new Queued(
                  timeout == null ? c.sendAsync("v") : c.sendAsync("v", timeout), c::queueLength);
            }),
        primitive(
            "select",
            timeout -> {
              FifoChannel<String> a = (FifoChannel<String>) Channel.<String>rendezvous();
              FifoChannel<String> b = (FifoChannel<String>) Channel.<String>rendezvous();
              CompletableFuture<String> select =
                  timeout == null
                      ? Select.selectAsync(a.onReceive(v -> v), b.onReceive(v -> v))
                      : Select.selectAsync(
                          a.onReceive(v -> v),
                          b.onReceive(v -> v),
                          Select.onTimeout(timeout, () -> "idle"));
              // A waiting select stands in both queues, and leaves both.
              return new Queued(select, () -> Math.max(a.queueLength(), b.queueLength()));
            }),
        primitive(
            "barrier",
            timeout -> {
              Barrier barrier = Barrier.create(2);
              return new Queued(
                  timeout == null ? barrier.awaitAsync() : barrier.awaitAsync(timeout),
                  barrier::arrived);
            }),
        primitive(
            "priority scheduler",
            timeout -> {
              PriorityScheduler scheduler = PriorityScheduler.builder().limit(1).build();
              scheduler.submitAsync(Priority.NORMAL, CompletableFuture::new); // runs for ever
              CompletableFuture<Object> task =
                  scheduler.submitAsync(
                      Priority.NORMAL, () -> CompletableFuture.completedFuture(1));
              return new Queued(orTimeout(task, timeout), scheduler::queued);
            }),
        primitive(
            "semaphore callAsync",
            timeout -> {
              Semaphore s = Semaphore.create(1);
              var held = s.tryAcquire(1).orElseThrow();
              return new Queued(
                  orTimeout(s.callAsync(1, () -> CompletableFuture.completedFuture(1)), timeout),
                  s::queueLength);
            }),
        primitive(
            "mutex callAsync",
            timeout -> {
              Mutex m = Mutex.create();
              var held = m.tryLock().orElseThrow();
              return new Queued(
                  orTimeout(m.callAsync(() -> CompletableFuture.completedFuture(1)), timeout),
                  m::queueLength);
            }),
        primitive(
            "scope fork",
            timeout -> {
              Mutex m = Mutex.create();
              var held = m.tryLock().orElseThrow();
              Scope scope = Scope.open(); // its task ends with the give-up: nothing left to close
              return new Queued(
                  orTimeout(
                      scope.forkAsync(() -> m.lockAsync().thenAccept(Guard::unlock)), timeout),
                  m::queueLength);
            }));
  }

  /** A future with no timeout of its own, given one by {@code orTimeout} unless null. */
  private static <T> CompletableFuture<T> orTimeout(
      CompletableFuture<T> future, @Nullable Duration timeout) {
    return timeout == null ? future : future.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Every primitive, every way to give up. */
  static Stream<Arguments> primitivesAndWaysToGiveUp() {
    return primitives().stream()
        .flatMap(
            p -> Stream.of(GiveUp.values()).map(how -> Arguments.of(p.get()[0], p.get()[1], how)));
  }

  @ParameterizedTest(name = "{0}, {2}")
  @MethodSource("primitivesAndWaysToGiveUp")
  void theCallbackFindsTheRequestGone(String name, QueueOne primitive, GiveUp how)
      throws Exception {
    assertGoneInTheCallback(primitive, how);
  }

  /**
   * Queues one request, makes it give up, and reads the queue in the future's own callback. With
   * its own timeout, the callback must be registered before the timeout fires, which a loaded
   * machine may delay: the timeout grows until it was.
   */
  private static void assertGoneInTheCallback(QueueOne primitive, GiveUp how) throws Exception {
    Duration timeout = Duration.ofMillis(10);
    Queued q;
    CompletableFuture<Integer> seen;
    do {
      timeout = timeout.multipliedBy(2);
      q = primitive.queue(how == GiveUp.OWN_TIMEOUT ? timeout : null);
      IntSupplier queued = q.queued();
      seen = new CompletableFuture<>();
      CompletableFuture<Integer> seenHere = seen;
      var unused =
          q.future().whenComplete((value, failure) -> seenHere.complete(queued.getAsInt()));
    } while (q.future().isDone()); // only a timeout can have done it yet
    if (how != GiveUp.OWN_TIMEOUT) { // a timeout may fire any moment now
      assertEquals(1, q.queued().getAsInt(), "queued at first");
    }
    switch (how) {
      case CANCEL -> assertTrue(q.future().cancel(false));
      case FAILED_FROM_OUTSIDE ->
          assertTrue(q.future().completeExceptionally(new IllegalStateException("given up")));
      case OR_TIMEOUT -> q.future().orTimeout(SHORT.toNanos(), TimeUnit.NANOSECONDS);
      case OWN_TIMEOUT -> {}
    }
    assertEquals(0, done(seen), "counted in its own callback");
  }

  /** A fresh busy primitive that queues one request, with its own timeout unless null. */
  @FunctionalInterface
  interface QueueOne {
    Queued queue(@Nullable Duration timeout);
  }

  private static Arguments primitive(String name, QueueOne queueOne) {
    return Arguments.of(name, queueOne);
  }

  /**
   * The statistics agree with the queue in the callback, and a withdrawal at the head grants the
   * request behind before the callback runs: it sees that request gone from the queue too, its
   * permit taken.
   */
  @Test
  void statisticsAndTheGrantsTheWithdrawalMade_areSeenByTheCallback() throws Exception {
    Semaphore s = Semaphore.builder().limit(2).statistics(true).build();
    var held = s.tryAcquire(1).orElseThrow();
    CompletableFuture<Permit> head = s.acquireAsync(2, SHORT);
    CompletableFuture<Permit> behind = s.acquireAsync(1);
    CompletableFuture<List<Object>> seen = new CompletableFuture<>();
    var unused =
        head.whenComplete(
            (permit, failure) -> {
              SemaphoreStats stats = s.stats().orElseThrow();
              seen.complete(
                  List.of(s.queueLength(), s.available(), stats.queueLength(), stats.timedOut()));
            });
    assertEquals(List.of(0, 0, 0, 1L), done(seen), "queue, available, stats queue, timed out");
    done(behind).release();
  }
}
