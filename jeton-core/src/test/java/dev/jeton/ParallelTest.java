package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ParallelTest {
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPool() throws InterruptedException {
    pool.shutdownNow();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
  }

  /** An iterator over 0..count-1 (or for ever) that counts the items pulled. */
  static final class Counting implements Iterator<Integer> {
    final int count;
    final AtomicInteger pulled = new AtomicInteger();

    Counting(int count) {
      this.count = count;
    }

    @Override
    public boolean hasNext() {
      return count < 0 || pulled.get() < count;
    }

    @Override
    public Integer next() {
      return pulled.getAndIncrement();
    }
  }

  /** Futures the test completes by hand, one per item started. */
  static final class Manual {
    final List<CompletableFuture<Integer>> started = new ArrayList<>();
    final AtomicInteger maxInFlight = new AtomicInteger();

    synchronized CompletableFuture<Integer> start(int item) {
      CompletableFuture<Integer> f = new CompletableFuture<>();
      started.add(f);
      int notDone = (int) started.stream().filter(s -> !s.isDone()).count();
      maxInFlight.accumulateAndGet(notDone, Math::max);
      return f;
    }

    synchronized CompletableFuture<Integer> get(int i) {
      return started.get(i);
    }

    synchronized int count() {
      return started.size();
    }
  }

  @Test
  void mapAsync_keepsInputOrderAndAtMostLimitInFlight() throws Exception {
    Manual work = new Manual();
    Counting source = new Counting(6);
    CompletableFuture<List<Integer>> run = Parallel.limit(2).mapAsync(source, work::start);
    assertEquals(2, work.count(), "two started");
    assertEquals(2, source.pulled.get(), "pulled lazily: no more than can start");
    work.get(1).complete(10); // the second finishes first
    assertEquals(3, work.count());
    work.get(2).complete(20);
    work.get(0).complete(0);
    work.get(3).complete(30);
    work.get(5 - 1).complete(40);
    work.get(5).complete(50);
    assertEquals(List.of(0, 10, 20, 30, 40, 50), run.get(5, TimeUnit.SECONDS));
    assertEquals(2, work.maxInFlight.get());
  }

  @Test
  void emptySource_completesAtOnceWithNoResults() throws Exception {
    assertEquals(
        List.of(),
        Parallel.limit(3).mapAsync(List.<Integer>of(), CompletableFuture::completedFuture).get());
    Parallel.limit(3).forEachAsync(List.of(), x -> CompletableFuture.completedFuture(x)).get();
  }

  @Test
  void failFast_stopsPullingCancelsInFlightAndAttachesLaterFailures() throws Exception {
    Manual work = new Manual();
    Counting source = new Counting(-1); // endless
    CompletableFuture<List<Integer>> run = Parallel.limit(3).mapAsync(source, work::start);
    assertEquals(3, work.count());
    IllegalStateException first = new IllegalStateException("first");
    work.get(1).completeExceptionally(first);
    assertTrue(work.get(0).isCancelled(), "in flight: cancelled");
    assertTrue(work.get(2).isCancelled());
    assertEquals(3, work.count(), "nothing more started");
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> run.get(5, TimeUnit.SECONDS));
    assertSame(first, e.getCause());
    assertEquals(3, source.pulled.get(), "three pulled, no more");
  }

  @Test
  void failFast_waitsForBlockingItemsToLeaveBeforeFailing() throws Exception {
    CountDownLatch running = new CountDownLatch(2);
    AtomicBoolean slowLeft = new AtomicBoolean();
    CompletableFuture<List<Integer>> run =
        Parallel.limit(2)
            .map(
                List.of(0, 1),
                pool,
                item -> {
                  running.countDown();
                  if (item == 1) {
                    await(running);
                    throw new IllegalArgumentException("boom");
                  }
                  try {
                    Thread.sleep(60_000); // interrupted by the failure
                  } catch (InterruptedException e) {
                    sleepQuietly(200); // and takes its time to leave
                    slowLeft.set(true);
                  }
                  return item;
                });
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> run.get(10, TimeUnit.SECONDS));
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    assertTrue(slowLeft.get(), "the run failed only after the interrupted item had left");
  }

  @Test
  void laterFailures_areSuppressedOnTheFirst() throws Exception {
    Manual work = new Manual();
    CompletableFuture<List<Integer>> run =
        Parallel.limit(3).collectingAllErrors().mapAsync(List.of(0, 1, 2, 3), work::start);
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b");
    work.get(2).completeExceptionally(a);
    work.get(0).complete(0);
    assertEquals(4, work.count(), "collecting all errors: the rest still runs");
    work.get(1).completeExceptionally(b);
    assertFalse(run.isDone());
    work.get(3).complete(3);
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> run.get(5, TimeUnit.SECONDS));
    assertSame(a, e.getCause());
    assertEquals(List.of(b), Arrays.asList(a.getSuppressed()));
  }

  @Test
  void aFailureOfTheLastItemIsReportedWithAHighLimit() {
    CompletableFuture<List<Integer>> run =
        Parallel.limit(100)
            .mapAsync(
                List.of(1, 2, 3, 4, 5),
                item ->
                    item == 5
                        ? CompletableFuture.failedFuture(new IllegalStateException("item 5"))
                        : CompletableFuture.completedFuture(item));
    ExecutionException e = assertThrows(ExecutionException.class, run::get);
    assertEquals("item 5", e.getCause().getMessage());
  }

  @Test
  void cancellingTheRun_cancelsInFlightAndStartsNoMore() throws Exception {
    Manual work = new Manual();
    Counting source = new Counting(-1);
    CompletableFuture<List<Integer>> run = Parallel.limit(2).mapAsync(source, work::start);
    assertTrue(run.cancel(false));
    assertTrue(work.get(0).isCancelled());
    assertTrue(work.get(1).isCancelled());
    assertEquals(2, work.count());
    assertEquals(2, source.pulled.get());
    assertThrows(CancellationException.class, run::join);
  }

  @Test
  void aFunctionThatThrowsOrReturnsNull_failsTheRun() {
    ExecutionException thrown =
        assertThrows(
            ExecutionException.class,
            () ->
                Parallel.limit(2)
                    .<Integer, Integer>mapAsync(
                        List.of(1),
                        item -> {
                          throw new IllegalStateException("thrown");
                        })
                    .get());
    assertEquals("thrown", thrown.getCause().getMessage());
    ExecutionException nulled =
        assertThrows(
            ExecutionException.class,
            () -> Parallel.limit(2).<Integer, Integer>mapAsync(List.of(1), item -> null).get());
    assertInstanceOf(NullPointerException.class, nulled.getCause());
  }

  @Test
  void aSourceThatThrows_failsTheRun() {
    Iterator<Integer> broken =
        new Iterator<>() {
          int n;

          @Override
          public boolean hasNext() {
            if (n == 2) {
              throw new IllegalStateException("source broke");
            }
            return true;
          }

          @Override
          public Integer next() {
            return n++;
          }
        };
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () -> Parallel.limit(4).mapAsync(broken, CompletableFuture::completedFuture).get());
    assertEquals("source broke", e.getCause().getMessage());
  }

  @Test
  void weighted_keepsTheSumOfWeightsInFlightWithinTheLimit() throws Exception {
    // The classic case: a 10-permit limit, a 4 and a 6 running; three of weight 1 wait, and all
    // three start as soon as either finishes.
    Manual work = new Manual();
    List<Integer> weights = List.of(4, 6, 1, 1, 1);
    CompletableFuture<List<Integer>> run =
        Parallel.limit(10)
            .<Integer>weighted(weights::get)
            .mapAsync(List.of(0, 1, 2, 3, 4), work::start);
    assertEquals(2, work.count(), "4 + 6 fill the limit");
    work.get(0).complete(0); // the 4 finishes
    assertEquals(5, work.count(), "all three weight-1 items start");
    for (int i = 1; i < 5; i++) {
      work.get(i).complete(i);
    }
    assertEquals(List.of(0, 1, 2, 3, 4), run.get(5, TimeUnit.SECONDS));
  }

  @Test
  void weighted_anItemAboveTheLimitFailsTheRun() {
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () ->
                Parallel.limit(3)
                    .<Integer>weighted(item -> item)
                    .mapAsync(List.of(1, 4), CompletableFuture::completedFuture)
                    .get());
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains("limit 3, was 4"), e.getCause().getMessage());
  }

  @Test
  void blockingMap_runsOnTheExecutorInOrderWithinTheLimit() throws Exception {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger max = new AtomicInteger();
    List<Integer> out =
        Parallel.limit(3)
            .map(
                IntStream.range(0, 50).boxed(),
                pool,
                item -> {
                  max.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                  sleepQuietly(2);
                  inFlight.decrementAndGet();
                  return item * 2;
                })
            .get(30, TimeUnit.SECONDS);
    assertEquals(IntStream.range(0, 50).map(i -> i * 2).boxed().toList(), out);
    assertTrue(max.get() <= 3, "at most 3 at once, saw " + max.get());
  }

  @Test
  void forEach_runsEveryItemAndClosesTheStream() throws Exception {
    AtomicInteger sum = new AtomicInteger();
    AtomicBoolean closed = new AtomicBoolean();
    Parallel.limit(4)
        .forEach(Stream.of(1, 2, 3, 4, 5).onClose(() -> closed.set(true)), pool, sum::addAndGet)
        .get(10, TimeUnit.SECONDS);
    assertEquals(15, sum.get());
    assertTrue(closed.get());
    Parallel.limit(2)
        .forEachAsync(
            List.of(1, 2, 3), item -> CompletableFuture.runAsync(() -> sum.addAndGet(item), pool))
        .get(10, TimeUnit.SECONDS);
    assertEquals(21, sum.get());
  }

  @Test
  void badInput_isRefusedClearly() {
    IllegalArgumentException zero =
        assertThrows(IllegalArgumentException.class, () -> Parallel.limit(0));
    assertTrue(zero.getMessage().contains("at least 1"));
    Parallel p = Parallel.limit(2);
    assertThrows(
        NullPointerException.class,
        () -> p.mapAsync((List<Integer>) null, CompletableFuture::completedFuture));
    assertThrows(NullPointerException.class, () -> p.<Integer, Integer>mapAsync(List.of(1), null));
    assertThrows(NullPointerException.class, () -> p.map(List.of(1), null, x -> x));
    assertThrows(NullPointerException.class, () -> p.weighted(null));
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
