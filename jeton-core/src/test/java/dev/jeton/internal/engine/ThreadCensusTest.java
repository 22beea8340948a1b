package dev.jeton.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.TestThreads;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** How many threads waited on channels lately (decision 56), on a clock the test moves. */
class ThreadCensusTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  private final AtomicLong clock = new AtomicLong(1_000_000_000L);

  private ThreadCensus census(int cores) {
    return new ThreadCensus(cores, clock::get);
  }

  private void noteFrom(ThreadCensus census, int threadCount) throws Exception {
    for (int t = 0; t < threadCount; t++) {
      threads.start(census::note);
    }
    threads.joinAll();
  }

  @Test
  void aThreadCountsOncePerPeriod() {
    ThreadCensus census = census(2);
    assertEquals(1, census.note());
    assertEquals(1, census.note());
    clock.addAndGet(ThreadCensus.PERIOD_NANOS - 1);
    assertEquals(1, census.note(), "still the same period");
  }

  @Test
  void eachThreadCounts() throws Exception {
    ThreadCensus census = census(2);
    noteFrom(census, 3);
    assertEquals(4, census.note(), "three others and this one");
  }

  /** The ended period's count stands until the new one passes it; then threads drop out. */
  @Test
  void threadsThatStopWaiting_dropOutAfterTwoPeriods() throws Exception {
    ThreadCensus census = census(2);
    noteFrom(census, 3);
    clock.addAndGet(ThreadCensus.PERIOD_NANOS);
    assertEquals(3, census.note(), "the ended period's three, though this period has one");
    clock.addAndGet(ThreadCensus.PERIOD_NANOS);
    assertEquals(1, census.note(), "only this thread waited in the last period");
  }

  @Test
  void crowded_whenMoreThreadsWaitedThanThereAreCores() throws Exception {
    ThreadCensus census = census(2);
    assertFalse(census.crowded(), "one thread");
    noteFrom(census, 1);
    assertFalse(census.crowded(), "two threads on two cores");
    noteFrom(census, 1);
    assertTrue(census.crowded(), "three threads on two cores");
  }

  /**
   * Many threads noting at once, over and over, within one period: each counts exactly once, so no
   * estimate exceeds the threads, and the last one sees them all.
   */
  @Test
  void stress_concurrentThreadsAreEachCountedOnce() throws Exception {
    int threadCount = 8;
    ThreadCensus census = census(2);
    AtomicInteger most = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    for (int t = 0; t < threadCount; t++) {
      threads.start(
          () -> {
            go.await();
            for (int i = 0; i < 20_000; i++) {
              most.accumulateAndGet(census.note(), Math::max);
            }
          });
    }
    go.countDown();
    threads.joinAll();
    assertEquals(threadCount, most.get());
    assertEquals(threadCount + 1, census.note(), "and this thread");
  }

  /**
   * Threads noting while another moves the clock across many periods: each period is started once,
   * so an estimate never counts more threads than there are (a thread counted in the period just
   * ended and again in the new one is the one race allowed: at most double).
   */
  @Test
  void stress_periodsTurningUnderConcurrentNotes() throws Exception {
    int threadCount = 4;
    ThreadCensus census = census(2);
    AtomicInteger most = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(threadCount);
    for (int t = 0; t < threadCount; t++) {
      threads.start(
          () -> {
            for (int i = 0; i < 20_000; i++) {
              most.accumulateAndGet(census.note(), Math::max);
            }
            done.countDown();
          });
    }
    threads.start(
        () -> {
          while (done.getCount() > 0) {
            clock.addAndGet(ThreadCensus.PERIOD_NANOS);
            Thread.yield();
          }
        });
    threads.joinAll();
    assertTrue(most.get() >= 1, "counted");
    assertTrue(most.get() <= 2 * threadCount, "at most double: " + most);
  }
}
