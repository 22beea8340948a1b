package dev.jeton.bench;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Decision;
import dev.jeton.http.Ticket;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What admission control adds to an admitted request, in process: admit, then close the ticket when
 * the response is done, with the limit never reached (so every request is admitted). Jeton's {@code
 * AdmissionControl} in each mode beside resilience4j's {@code Bulkhead}, Netflix
 * concurrency-limits' {@code SimpleLimiter} (its default limit) and a bare {@code
 * java.util.concurrent.Semaphore} (the floor: one CAS to take, one to give back). Goal: Jeton under
 * 1 µs. Run with {@code -t 1} (default) and {@code -t 2} for two threads at once.
 *
 * <pre>
 * java -jar jeton-bench/target/benchmarks.jar AdmissionBenchmark
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 3,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class AdmissionBenchmark {
  static final String JETON = "jeton-best-effort";
  static final String JETON_QUEUED = "jeton-queued";
  static final String JETON_PARTITIONED = "jeton-partitioned";
  static final String BULKHEAD = "resilience4j-bulkhead";
  static final String NETFLIX = "netflix-simple";
  static final String JUC = "juc-semaphore";

  /** One limiter, shared by the benchmark's threads. */
  @State(Scope.Benchmark)
  public static class Limiters {
    @Param({JETON, JETON_QUEUED, JETON_PARTITIONED, BULKHEAD, NETFLIX, JUC})
    public String impl = JETON;

    private static final int LIMIT = 1_000;

    AdmissionControl<String> jeton;
    Bulkhead bulkhead;
    Limiter<String> netflix;
    Semaphore juc;

    @Setup
    public void setUp() {
      AdmissionControl.Builder<String> builder = AdmissionControl.<String>builder().limit(LIMIT);
      switch (impl) {
        case JETON_QUEUED -> builder.queue(100, Duration.ofSeconds(1));
        case JETON_PARTITIONED -> builder.partitionBy(request -> request, LIMIT);
        default -> {}
      }
      jeton = builder.build();
      bulkhead =
          Bulkhead.of(
              "bench",
              BulkheadConfig.custom()
                  .maxConcurrentCalls(LIMIT)
                  .maxWaitDuration(Duration.ZERO)
                  .build());
      netflix = SimpleLimiter.newBuilder().build();
      juc = new Semaphore(LIMIT);
    }

    @TearDown
    public void check() {
      if (jeton.inFlight() != 0) {
        throw new IllegalStateException("tickets left open: " + jeton.inFlight());
      }
      jeton.close();
    }

    /** Admits, "serves" and closes one request; false if it was rejected (it never should be). */
    boolean serve(String request) throws InterruptedException {
      switch (impl) {
        case BULKHEAD -> {
          if (!bulkhead.tryAcquirePermission()) {
            return false;
          }
          bulkhead.onComplete();
          return true;
        }
        case NETFLIX -> {
          Optional<Limiter.Listener> listener = netflix.acquire(request);
          if (listener.isEmpty()) {
            return false;
          }
          listener.get().onSuccess();
          return true;
        }
        case JUC -> {
          if (!juc.tryAcquire()) {
            return false;
          }
          juc.release();
          return true;
        }
        default -> {
          Decision decision = jeton.admit(request);
          if (!(decision instanceof Ticket ticket)) {
            return false;
          }
          ticket.close();
          return true;
        }
      }
    }
  }

  @Benchmark
  public boolean admitAndClose(Limiters limiters) throws InterruptedException {
    if (!limiters.serve("tenant-a")) {
      throw new IllegalStateException(limiters.impl + " rejected under its limit");
    }
    return true;
  }
}
