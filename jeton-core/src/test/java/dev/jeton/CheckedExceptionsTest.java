package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Blocking tasks may throw checked exceptions, and the caller gets them as they were thrown, with
 * their own type: {@link Semaphore#call}, {@link Parallel#map}, {@link Parallel#forEach}, {@link
 * Parallel#mapAll}. Several tests are mostly about compiling: each {@code throws} clause below is
 * the exact set the code needs, so a catch-all would not compile.
 */
class CheckedExceptionsTest {
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPool() throws InterruptedException {
    pool.shutdownNow();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
  }

  /** A blocking function that throws a checked exception, as {@code Files::readString} does. */
  static String read(int item) throws IOException {
    if (item == 3) {
      throw new IOException("cannot read " + item);
    }
    return "text " + item;
  }

  @Test
  void semaphoreCall_throwsWhatTheTaskThrew_andGivesThePermitBack() throws InterruptedException {
    Semaphore s = Semaphore.create(2);
    IOException thrown = assertThrows(IOException.class, () -> s.call(1, () -> read(3)));
    assertEquals("cannot read 3", thrown.getMessage());
    assertEquals(2, s.available());
  }

  @Test
  void semaphoreCall_declaresOnlyWhatTheTaskThrows() throws IOException, InterruptedException {
    Semaphore s = Semaphore.create(1);
    assertEquals("text 1", s.call(1, () -> read(1))); // IOException, nothing broader
    assertEquals(2, s.call(1, () -> 1 + 1)); // no checked exception but InterruptedException
  }

  @Test
  void map_failsTheRunWithTheCheckedExceptionItself() {
    CompletableFuture<List<String>> run =
        Parallel.limit(2).map(List.of(1, 2, 3, 4), pool, CheckedExceptionsTest::read);
    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> run.get(30, TimeUnit.SECONDS));
    assertEquals(IOException.class, failed.getCause().getClass());
    assertEquals("cannot read 3", failed.getCause().getMessage());
  }

  @Test
  void forEach_failsTheRunWithTheCheckedExceptionItself() {
    CompletableFuture<Void> run = Parallel.limit(2).forEach(List.of(3), pool, item -> read(item));
    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> run.get(30, TimeUnit.SECONDS));
    assertEquals(IOException.class, failed.getCause().getClass());
  }

  @Test
  void mapAll_returnsTheResultsInInputOrder() throws IOException, InterruptedException {
    List<Integer> items = IntStream.range(0, 20).filter(i -> i != 3).boxed().toList();
    List<String> texts = Parallel.limit(4).mapAll(items, CheckedExceptionsTest::read);
    assertEquals(items.stream().map(i -> "text " + i).toList(), texts);
    assertEquals(List.of(2, 4), Parallel.limit(1).mapAll(List.of(1, 2), pool, i -> i * 2));
  }

  @Test
  void mapAll_throwsTheFirstFailureAsItIs() {
    IOException thrown =
        assertThrows(
            IOException.class,
            () -> Parallel.limit(4).mapAll(List.of(1, 2, 3), CheckedExceptionsTest::read));
    assertEquals("cannot read 3", thrown.getMessage());
    UncheckedIOException unchecked = new UncheckedIOException(new IOException("x"));
    assertSame(
        unchecked,
        assertThrows(
            UncheckedIOException.class,
            () ->
                Parallel.limit(4)
                    .mapAll(
                        List.of(1),
                        item -> {
                          throw unchecked;
                        })));
  }

  @Test
  void mapAll_interruptedWhileWaiting_cancelsTheRunAndThrows() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger itemsInterrupted = new AtomicInteger();
    AtomicReference<Throwable> callerGot = new AtomicReference<>();
    Thread caller =
        new Thread(
            () -> {
              try {
                Parallel.limit(1)
                    .mapAll(
                        List.of(1, 2),
                        pool,
                        item -> {
                          started.countDown();
                          try {
                            new CountDownLatch(1).await(); // until interrupted
                          } catch (InterruptedException e) {
                            itemsInterrupted.incrementAndGet();
                            throw e;
                          }
                          return item;
                        });
              } catch (Throwable t) {
                callerGot.set(t);
              }
            });
    caller.start();
    assertTrue(started.await(30, TimeUnit.SECONDS), "hang guard");
    caller.interrupt();
    caller.join(TimeUnit.SECONDS.toMillis(30)); // hang guard
    assertEquals(InterruptedException.class, callerGot.get().getClass());
    pool.shutdown();
    assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS), "hang guard: the item was interrupted");
    assertEquals(1, itemsInterrupted.get());
  }
}
