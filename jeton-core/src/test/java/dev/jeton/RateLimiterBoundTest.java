package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rate limiter's promise, checked as a property: over any window of length t, the weight
 * admitted is at most {@code burst + rate * t}. On a clock the test moves, with random requests of
 * every kind (tries, waits, timed waits, cancels) and random pauses; and on the real clock with
 * real threads, where the whole run is the window.
 */
class RateLimiterBoundTest {

  /** One admission: when, and how much. */
  record Admitted(long at, int weight) {}

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
  void overAnyWindow_theWeightAdmittedStaysWithinTheBound(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    long permits = 1 + random.nextInt(20);
    Duration period = Duration.ofMillis(1 + random.nextInt(2_000)).plusNanos(random.nextInt(7));
    int burst = 1 + random.nextInt(10);
    ManualTime time = new ManualTime();
    FifoRateLimiter limiter = time.limiter(permits, period, burst);
    List<Admitted> admitted = new ArrayList<>();
    List<CompletableFuture<Void>> waiting = new ArrayList<>();
    long emission = period.toNanos() / permits + 1;

    for (int step = 0; step < 2_000; step++) {
      int weight = 1 + random.nextInt(burst);
      switch (random.nextInt(6)) {
        case 0 -> {
          if (limiter.tryAcquire(weight)) {
            admitted.add(new Admitted(time.getAsLong(), weight));
          }
        }
        case 1, 2 ->
            waiting.add(whenAdmitted(limiter.acquireAsync(weight), time, weight, admitted));
        case 3 ->
            waiting.add(
                whenAdmitted(
                    limiter.acquireAsync(weight, Duration.ofNanos(random.nextLong(3 * emission))),
                    time,
                    weight,
                    admitted));
        case 4 -> {
          if (!waiting.isEmpty()) {
            waiting.get(random.nextInt(waiting.size())).cancel(false);
          }
        }
        default -> time.advance(random.nextLong(2 * emission));
      }
    }
    time.advance(emission * burst * (waiting.size() + 1L)); // time enough for every waiter
    for (CompletableFuture<Void> f : waiting) {
      assertTrue(f.isDone(), "every request passed, timed out or was cancelled");
    }
    assertEquals(0, limiter.queueLength());
    assertTrue(admitted.size() > 100, "enough admissions to mean something: " + admitted.size());
    assertWithinBound(admitted, permits, period, burst);
  }

  /** The future, which also records its admission at the moment it completes normally. */
  private static CompletableFuture<Void> whenAdmitted(
      CompletableFuture<Void> f, ManualTime time, int weight, List<Admitted> admitted) {
    f.thenRun(() -> admitted.add(new Admitted(time.getAsLong(), weight)));
    return f;
  }

  /** Every window between two admissions holds at most burst + rate * its length. */
  static void assertWithinBound(List<Admitted> admitted, long permits, Duration period, int burst) {
    List<Admitted> sorted = new ArrayList<>(admitted);
    sorted.sort((a, b) -> Long.compare(a.at, b.at));
    BigInteger periodNanos = BigInteger.valueOf(period.toNanos());
    for (int i = 0; i < sorted.size(); i++) {
      long weight = 0;
      for (int j = i; j < sorted.size(); j++) {
        weight += sorted.get(j).weight;
        long length = sorted.get(j).at - sorted.get(i).at;
        // weight <= burst + length * permits / period, in integers
        BigInteger over = BigInteger.valueOf(weight - burst).multiply(periodNanos);
        BigInteger allowed = BigInteger.valueOf(length).multiply(BigInteger.valueOf(permits));
        if (over.compareTo(allowed) > 0) {
          throw new AssertionError(
              weight
                  + " admitted within "
                  + length
                  + " ns, over the bound of "
                  + burst
                  + " + "
                  + permits
                  + " per "
                  + period);
        }
      }
    }
  }

  /**
   * Eight threads on the real clock, blocking, timed and asynchronous: everything admitted lies
   * between the first request and the last return, so that window bounds it all.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 20})
  void realThreads_admitNoMoreThanTheBoundOverTheRun(int burst) throws Exception {
    long permits = 2_000;
    RateLimiter limiter =
        RateLimiter.builder().rate(permits, Duration.ofSeconds(1)).burst(burst).build();
    AtomicLong weight = new AtomicLong();
    ConcurrentLinkedQueue<CompletableFuture<Void>> futures = new ConcurrentLinkedQueue<>();
    long start = System.nanoTime();
    StressWorkers.platformWorkersUninterrupted(
        8,
        60,
        random -> {
          int w = 1 + random.nextInt(burst);
          switch (random.nextInt(3)) {
            case 0 -> {
              limiter.acquire(w);
              weight.addAndGet(w);
            }
            case 1 -> {
              try {
                limiter.acquire(w, Duration.ofMillis(random.nextInt(5)));
                weight.addAndGet(w);
              } catch (java.util.concurrent.TimeoutException expected) {
                // it did not pass: nothing to count
              }
            }
            default -> {
              CompletableFuture<Void> f = limiter.acquireAsync(w);
              if (random.nextBoolean() && f.cancel(false)) {
                return; // withdrawn: it did not pass
              }
              f.join();
              weight.addAndGet(w);
            }
          }
        },
        limiter);
    long end = System.nanoTime();
    BigInteger allowed =
        BigInteger.valueOf(end - start)
            .multiply(BigInteger.valueOf(permits))
            .divide(BigInteger.valueOf(1_000_000_000L))
            .add(BigInteger.valueOf(burst));
    assertTrue(
        BigInteger.valueOf(weight.get()).compareTo(allowed) <= 0,
        weight + " admitted in " + (end - start) + " ns, over " + allowed);
    assertEquals(0, limiter.queueLength());
  }
}
