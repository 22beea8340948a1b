package dev.jeton.bench;

import dev.jeton.KeyedSemaphore;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of a per-key limit: two threads each take one permit of a key and give it back, the keys
 * going round 1,024 of them (limit 4 per key, so no one waits), in ns per acquire+release.
 *
 * <ul>
 *   <li>{@code keyed}: {@code KeyedSemaphore.forKey(k).acquire(1)} + release. Between two uses a
 *       key is usually idle, so this pays for making its entry and removing it again: the case that
 *       keeps memory at the keys in use.
 *   <li>{@code keyed-held}: the same, with every key also held once for the whole run, so its entry
 *       always exists: the steady-state cost on busy keys.
 *   <li>{@code keyed-global}: {@code keyed} with a global limit of 1,000 (never reached), so each
 *       request also takes a permit of the global semaphore.
 *   <li>{@code map}: the hand-rolled alternative, {@code ConcurrentHashMap.computeIfAbsent(k,
 *       Semaphore.create(4))} and never removing anything: memory grows with every key ever seen.
 * </ul>
 *
 * <p>Run: {@code java -jar jeton-bench/target/benchmarks.jar KeyedBenchmark}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 2,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@Threads(2)
public class KeyedBenchmark {
  static final int KEYS = 1024;
  static final int PER_KEY = 4;

  /** The shared limits. */
  @State(Scope.Benchmark)
  public static class Limits {
    @Param({"keyed", "keyed-held", "keyed-global", "map"})
    public String impl = "keyed";

    KeyedSemaphore<Integer> keyed;
    final ConcurrentHashMap<Integer, Semaphore> map = new ConcurrentHashMap<>();
    final List<Permit> held = new ArrayList<>();

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException {
      keyed =
          impl.equals("keyed-global")
              ? KeyedSemaphore.builder().limitPerKey(PER_KEY).globalLimit(1_000).build()
              : KeyedSemaphore.create(PER_KEY);
      if (impl.equals("keyed-held")) {
        for (int key = 0; key < KEYS; key++) {
          held.add(keyed.forKey(key).acquire(1));
        }
      }
    }

    @TearDown(Level.Trial)
    public void check() {
      held.forEach(Permit::release);
      if (keyed.keyCount() != 0) {
        throw new IllegalStateException("entries left: " + keyed);
      }
    }

    Semaphore semaphore(int key) {
      return impl.equals("map")
          ? map.computeIfAbsent(key, k -> Semaphore.create(PER_KEY))
          : keyed.forKey(key);
    }
  }

  /** Each thread walks the keys from its own start. */
  @State(Scope.Thread)
  public static class Cursor {
    int next;

    @Setup(Level.Trial)
    public void setUp() {
      next = (int) (Thread.currentThread().getId() * 517) % KEYS;
    }

    int nextKey() {
      int key = next;
      next = (key + 1) % KEYS;
      return key;
    }
  }

  @Benchmark
  public void acquireRelease(Limits limits, Cursor cursor) throws InterruptedException {
    limits.semaphore(cursor.nextKey()).acquire(1).release();
  }
}
