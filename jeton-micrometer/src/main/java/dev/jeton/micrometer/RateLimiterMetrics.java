package dev.jeton.micrometer;

import dev.jeton.RateLimiter;
import dev.jeton.RateLimiterStats;
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
 * Binds a {@link RateLimiter} to a Micrometer {@link MeterRegistry}, every meter tagged {@code
 * name=<name>} plus the tags given:
 *
 * <pre>{@code
 * RateLimiter vendor =
 *     RateLimiter.builder().rate(10, Duration.ofSeconds(1)).statistics(true).build();
 * new RateLimiterMetrics(vendor, "vendor").bindTo(registry);
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>what</th></tr>
 *   <tr><td>{@code jeton.rate.limiter.rate}</td><td>gauge (permits per second)</td><td>{@link
 *       RateLimiter#permits()} over {@link RateLimiter#period()}, as it is now</td></tr>
 *   <tr><td>{@code jeton.rate.limiter.burst}</td><td>gauge (permits)</td><td>{@link
 *       RateLimiter#burst()}</td></tr>
 *   <tr><td>{@code jeton.rate.limiter.queued}</td><td>gauge (requests)</td><td>{@link
 *       RateLimiter#queueLength()}</td></tr>
 *   <tr><td>{@code jeton.rate.limiter.requests}</td><td>counter, tag {@code outcome}: {@code
 *       admitted}, {@code rejected}, {@code timeout}, {@code cancelled}</td><td>requests by how
 *       they ended; {@code rejected} counts {@code tryAcquire} calls that could not pass at
 *       once</td></tr>
 *   <tr><td>{@code jeton.rate.limiter.wait}</td><td>function timer</td><td>count and total time
 *       of the waits of admitted requests (zero for those admitted at once)</td></tr>
 *   <tr><td>{@code jeton.rate.limiter.wait.max}</td><td>time gauge</td><td>the longest wait of
 *       an admitted request since the limiter was built</td></tr>
 *   <tr><td>{@code jeton.rate.limiter.queued.peak}</td><td>gauge (requests)</td><td>the most
 *       requests ever waiting at once</td></tr>
 * </table>
 *
 * <p>The first three are bound for every limiter; the others read {@link RateLimiter#stats()}, so
 * they are bound only if the limiter keeps statistics when {@link #bindTo} runs ({@code
 * statistics(true)}); {@link #bindsStatistics()} says whether they were. The counters have no base
 * unit, so that a Prometheus registry names them {@code jeton_rate_limiter_requests_total}.
 *
 * <p>Every meter reads the limiter when the registry publishes, never on its hot path. As with
 * Micrometer's own binders, the registry holds the limiter weakly: keep a reference to it for as
 * long as it should be measured.
 */
public final class RateLimiterMetrics implements MeterBinder {
  private final RateLimiter limiter;
  private final Tags tags;
  private volatile boolean bindsStatistics;

  /**
   * Meters for {@code limiter}, tagged {@code name=<name>} and with {@code tags}.
   *
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public RateLimiterMetrics(RateLimiter limiter, String name, Tag... tags) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.tags = Meters.tags(name, "a rate limiter", tags);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    gauge(
        registry,
        "jeton.rate.limiter.rate",
        "The rate now, in permits per second",
        "permits",
        RateLimiterMetrics::perSecond);
    gauge(
        registry,
        "jeton.rate.limiter.burst",
        "The most weight that may pass at once",
        "permits",
        RateLimiter::burst);
    gauge(
        registry,
        "jeton.rate.limiter.queued",
        "Requests waiting now",
        "requests",
        RateLimiter::queueLength);
    if (limiter.stats().isEmpty()) {
      bindsStatistics = false;
      return;
    }
    requests(registry, "admitted", RateLimiterStats::admitted);
    requests(registry, "rejected", RateLimiterStats::rejected);
    requests(registry, "timeout", RateLimiterStats::timedOut);
    requests(registry, "cancelled", RateLimiterStats::cancelled);
    FunctionTimer.builder(
            "jeton.rate.limiter.wait",
            limiter,
            l -> (long) stat(l, RateLimiterStats::admitted),
            l -> stat(l, st -> st.totalWait().toNanos()),
            TimeUnit.NANOSECONDS)
        .description("Waits of admitted requests, from the request to passing")
        .tags(tags)
        .register(registry);
    TimeGauge.builder(
            "jeton.rate.limiter.wait.max",
            limiter,
            TimeUnit.NANOSECONDS,
            l -> stat(l, st -> st.maxWait().toNanos()))
        .description("The longest wait of any admitted request since the limiter was built")
        .tags(tags)
        .register(registry);
    gauge(
        registry,
        "jeton.rate.limiter.queued.peak",
        "The most requests ever waiting at once",
        "requests",
        l -> stat(l, RateLimiterStats::peakQueueLength));
    bindsStatistics = true;
  }

  /**
   * Whether the last {@link #bindTo} bound the meters that read the limiter's statistics (false
   * before any bind).
   */
  public boolean bindsStatistics() {
    return bindsStatistics;
  }

  private static double perSecond(RateLimiter limiter) {
    return limiter.permits() * 1e9 / limiter.period().toNanos();
  }

  private void gauge(
      MeterRegistry registry,
      String name,
      String description,
      String unit,
      ToDoubleFunction<RateLimiter> value) {
    Gauge.builder(name, limiter, value)
        .description(description)
        .baseUnit(unit)
        .tags(tags)
        .register(registry);
  }

  private void requests(
      MeterRegistry registry, String outcome, ToDoubleFunction<RateLimiterStats> count) {
    FunctionCounter.builder("jeton.rate.limiter.requests", limiter, l -> stat(l, count))
        .description("Requests to pass the limiter, by how they ended")
        .tags(tags)
        .tag("outcome", outcome)
        .register(registry);
  }

  /** One statistic now; NaN if the limiter keeps none. */
  private static double stat(RateLimiter limiter, ToDoubleFunction<RateLimiterStats> value) {
    return limiter.stats().map(value::applyAsDouble).orElse(Double.NaN);
  }
}
