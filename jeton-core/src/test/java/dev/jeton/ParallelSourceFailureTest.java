package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Iterator;
import java.util.List;
import java.util.Spliterators;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A source whose {@code next()} throws fails the run, whatever kind of source it is, whichever item
 * breaks, weighted or not, with an async or a blocking function: the run's future fails with the
 * source's exception (it neither hangs nor throws out of the call), and a stream is closed. The
 * {@code get} timeouts are hang guards only.
 */
class ParallelSourceFailureTest {
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPool() throws InterruptedException {
    pool.shutdownNow();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
  }

  /** Items 0, 1, 2, ... for ever; {@code next()} throws on item {@code breaksAt}. */
  static final class BreaksOnNext implements Iterator<Integer> {
    final int breaksAt;
    int n;

    BreaksOnNext(int breaksAt) {
      this.breaksAt = breaksAt;
    }

    @Override
    public boolean hasNext() {
      return true;
    }

    @Override
    public Integer next() {
      if (n == breaksAt) {
        throw new IllegalStateException("next() broke on item " + n);
      }
      return n++;
    }
  }

  enum Source {
    ITERABLE,
    ITERATOR,
    STREAM
  }

  @ParameterizedTest(name = "{0}, breaks at item {1}, weighted {2}, blocking {3}")
  @CsvSource({
    "ITERABLE, 0, false, false", "ITERABLE, 2, false, false",
    "ITERATOR, 0, false, false", "ITERATOR, 2, false, false",
    "STREAM, 0, false, false", "STREAM, 2, false, false",
    "ITERABLE, 0, true, false", "ITERABLE, 2, true, false",
    "ITERATOR, 2, true, false", "STREAM, 2, true, false",
    "ITERABLE, 0, false, true", "ITERABLE, 2, false, true",
    "ITERATOR, 2, false, true", "STREAM, 2, false, true",
    "ITERABLE, 2, true, true", "STREAM, 2, true, true",
  })
  void aSourceWhoseNextThrowsFailsTheRun(
      Source kind, int breaksAt, boolean weighted, boolean blocking) throws Exception {
    Parallel parallel = Parallel.limit(1); // so each later item is pulled by a settling item
    if (weighted) {
      parallel = parallel.<Integer>weighted(item -> 1);
    }
    AtomicBoolean closed = new AtomicBoolean();
    BreaksOnNext source = new BreaksOnNext(breaksAt);
    CompletableFuture<List<Integer>> run;
    switch (kind) {
      case ITERABLE:
        Iterable<Integer> iterable = () -> source;
        run =
            blocking
                ? parallel.map(iterable, pool, x -> x)
                : parallel.mapAsync(iterable, this::later);
        break;
      case ITERATOR:
        run =
            blocking ? parallel.map(source, pool, x -> x) : parallel.mapAsync(source, this::later);
        break;
      default:
        Stream<Integer> stream =
            StreamSupport.stream(Spliterators.spliteratorUnknownSize(source, 0), false)
                .onClose(() -> closed.set(true));
        run =
            blocking ? parallel.map(stream, pool, x -> x) : parallel.mapAsync(stream, this::later);
    }
    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> run.get(30, TimeUnit.SECONDS));
    assertEquals("next() broke on item " + breaksAt, failed.getCause().getMessage());
    if (kind == Source.STREAM) {
      assertTrue(closed.get(), "the stream is closed");
    }
  }

  /** Completes on another thread, so that the next item is pulled there. */
  private CompletableFuture<Integer> later(int item) {
    return CompletableFuture.supplyAsync(() -> item, pool);
  }
}
