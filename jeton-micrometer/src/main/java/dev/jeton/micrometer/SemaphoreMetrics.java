package dev.jeton.micrometer;

import dev.jeton.Semaphore;
import dev.jeton.SemaphoreStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Binds a {@link Semaphore} of any scope (in-process, machine-wide, fleet-wide) to a Micrometer
 * {@link MeterRegistry}, every meter tagged {@code name=<name>} plus the tags given:
 *
 * <pre>{@code
 * Semaphore db = Semaphore.builder().name("db").limit(10).statistics(true).build();
 * new SemaphoreMetrics(db, "db").bindTo(registry);
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>what</th></tr>
 *   <tr><td>{@code jeton.semaphore.limit}</td><td>gauge (permits)</td><td>{@link
 *       Semaphore#limit()}</td></tr>
 *   <tr><td>{@code jeton.semaphore.available}</td><td>gauge (permits)</td><td>{@link
 *       Semaphore#available()}</td></tr>
 *   <tr><td>{@code jeton.semaphore.queued}</td><td>gauge (requests)</td><td>{@link
 *       Semaphore#queueLength()}</td></tr>
 *   <tr><td>{@code jeton.semaphore.requests}</td><td>counter (requests), tag {@code outcome}:
 *       {@code acquired}, {@code timeout}, {@code cancelled}, {@code rejected}</td><td>requests
 *       by how they ended; {@code rejected} counts {@code tryAcquire} calls that found no
 *       room</td></tr>
 *   <tr><td>{@code jeton.semaphore.releases}</td><td>counter (requests)</td><td>granted
 *       requests given back</td></tr>
 *   <tr><td>{@code jeton.semaphore.leaked}</td><td>function counter (requests)</td><td>granted
 *       requests whose {@link dev.jeton.Permit} was collected without having been released, as
 *       leak detection reported them</td></tr>
 *   <tr><td>{@code jeton.semaphore.wait}</td><td>function timer</td><td>count and total time
 *       of the waits of granted requests (zero for those granted at once)</td></tr>
 *   <tr><td>{@code jeton.semaphore.wait.max}</td><td>time gauge</td><td>the longest wait since
 *       the semaphore was created (not per publishing interval)</td></tr>
 *   <tr><td>{@code jeton.semaphore.queued.peak}</td><td>gauge (requests)</td><td>the most
 *       requests ever queued at once</td></tr>
 * </table>
 *
 * <p>The three gauges are bound for every semaphore. The others read {@link Semaphore#stats()}, so
 * they are bound only if the semaphore keeps statistics when {@link #bindTo} runs (an in-process
 * semaphore built with {@code statistics(true)}); {@link #bindsStatistics()} says whether they
 * were. The machine-wide and Redis semaphores keep none today.
 *
 * <p>Every meter reads the semaphore when the registry publishes, never on the semaphore's hot
 * path. For a Redis semaphore, {@code limit()} is a round trip to Redis, made by the publishing
 * thread; a failure there shows as NaN (Micrometer's rule for a gauge whose function throws). As
 * with Micrometer's own binders, the registry holds the semaphore weakly: keep a reference to it
 * for as long as it should be measured.
 */
public final class SemaphoreMetrics implements MeterBinder {
  private final Semaphore semaphore;
  private final Tags tags;
  private volatile boolean bindsStatistics;

  /**
   * Meters for {@code semaphore}, tagged {@code name=<name>} and with {@code tags}.
   *
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public SemaphoreMetrics(Semaphore semaphore, String name, Tag... tags) {
    this.semaphore = Objects.requireNonNull(semaphore, "semaphore");
    this.tags = Meters.tags(name, "a semaphore", tags);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    gauge(registry, "jeton.semaphore.limit", "The semaphore's limit", "permits", Semaphore::limit);
    gauge(
        registry, "jeton.semaphore.available", "Permits free now", "permits", Semaphore::available);
    gauge(
        registry,
        "jeton.semaphore.queued",
        "Requests waiting now",
        "requests",
        Semaphore::queueLength);
    if (semaphore.stats().isEmpty()) {
      bindsStatistics = false;
      return;
    }
    requests(registry, "acquired", SemaphoreStats::acquired);
    requests(registry, "timeout", SemaphoreStats::timedOut);
    requests(registry, "cancelled", SemaphoreStats::cancelled);
    requests(registry, "rejected", SemaphoreStats::rejected);
    FunctionCounter.builder(
            "jeton.semaphore.releases", semaphore, s -> stat(s, SemaphoreStats::released))
        .description("Granted requests given back")
        .baseUnit("requests")
        .tags(tags)
        .register(registry);
    FunctionCounter.builder(
            "jeton.semaphore.leaked", semaphore, s -> stat(s, SemaphoreStats::leaked))
        .description("Granted requests whose Permit was collected unreleased (leak detection)")
        .baseUnit("requests")
        .tags(tags)
        .register(registry);
    FunctionTimer.builder(
            "jeton.semaphore.wait",
            semaphore,
            s -> (long) stat(s, SemaphoreStats::acquired),
            s -> stat(s, st -> st.totalWait().toNanos()),
            TimeUnit.NANOSECONDS)
        .description("Waits of granted requests, from joining the queue to the grant")
        .tags(tags)
        .register(registry);
    TimeGauge.builder(
            "jeton.semaphore.wait.max",
            semaphore,
            TimeUnit.NANOSECONDS,
            s -> stat(s, st -> st.maxWait().toNanos()))
        .description("The longest wait of any granted request since the semaphore was created")
        .tags(tags)
        .register(registry);
    gauge(
        registry,
        "jeton.semaphore.queued.peak",
        "The most requests ever queued at once",
        "requests",
        s -> stat(s, SemaphoreStats::peakQueueLength));
    bindsStatistics = true;
  }

  /**
   * Whether the last {@link #bindTo} bound the meters that read the semaphore's statistics (false
   * before any bind).
   */
  public boolean bindsStatistics() {
    return bindsStatistics;
  }

  private void gauge(
      MeterRegistry registry,
      String name,
      String description,
      String unit,
      ToDoubleFunction<Semaphore> value) {
    Gauge.builder(name, semaphore, value)
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .register(registry);
  }

  private void requests(
      MeterRegistry registry, String outcome, ToDoubleFunction<SemaphoreStats> count) {
    FunctionCounter.builder("jeton.semaphore.requests", semaphore, s -> stat(s, count))
        .description("Requests for permits, by how they ended")
        .baseUnit("requests")
        .tags(tags)
        .tag("outcome", outcome)
        .register(registry);
  }

  /** One statistic now; NaN if the semaphore no longer keeps statistics (never, today). */
  private static double stat(Semaphore semaphore, ToDoubleFunction<SemaphoreStats> value) {
    return semaphore.stats().map(value::applyAsDouble).orElse(Double.NaN);
  }
}
