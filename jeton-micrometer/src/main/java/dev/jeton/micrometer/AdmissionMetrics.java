package dev.jeton.micrometer;

import dev.jeton.http.AdmissionControl;
import dev.jeton.http.AdmissionStats;
import dev.jeton.http.Reason;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Binds an HTTP {@link AdmissionControl} (jeton-http) to a Micrometer {@link MeterRegistry}, every
 * meter tagged {@code name=<name>} plus the tags given:
 *
 * <pre>{@code
 * new AdmissionMetrics(control, "api").bindTo(registry);
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>what</th></tr>
 *   <tr><td>{@code jeton.admission.in.flight}</td><td>gauge (requests)</td><td>tickets open
 *       now</td></tr>
 *   <tr><td>{@code jeton.admission.queued}</td><td>gauge (requests)</td><td>requests waiting
 *       now</td></tr>
 *   <tr><td>{@code jeton.admission.limit}</td><td>gauge (requests)</td><td>the limit now: the
 *       adaptive limit's current value when there is one</td></tr>
 *   <tr><td>{@code jeton.admission.admitted}</td><td>counter (requests)</td><td>requests
 *       admitted with a ticket that holds a permit</td></tr>
 *   <tr><td>{@code jeton.admission.exempted}</td><td>counter (requests)</td><td>requests let
 *       through by the exemption predicate</td></tr>
 *   <tr><td>{@code jeton.admission.rejected}</td><td>counter (requests), tag {@code reason}:
 *       {@code limit_reached}, {@code queue_full}, {@code queue_timeout}, {@code closed},
 *       {@code unavailable}</td><td>rejections by reason</td></tr>
 *   <tr><td>{@code jeton.admission.tickets}</td><td>counter (requests), tag {@code outcome}:
 *       {@code closed}, {@code dropped}, {@code abandoned}</td><td>admitted tickets by how they
 *       ended</td></tr>
 *   <tr><td>{@code jeton.admission.queue.wait}</td><td>function timer</td><td>count and total
 *       time of requests that waited in the queue and left it</td></tr>
 *   <tr><td>{@code jeton.admission.queue.wait.max}</td><td>time gauge</td><td>the longest of
 *       those waits since the control was built</td></tr>
 * </table>
 *
 * <p>Every meter reads the control when the registry publishes; nothing is added to the request
 * path. The registry holds the control weakly, as Micrometer's own binders do.
 */
public final class AdmissionMetrics implements MeterBinder {
  private final AdmissionControl<?> control;
  private final Tags tags;

  /**
   * Meters for {@code control}, tagged {@code name=<name>} and with {@code tags}.
   *
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public AdmissionMetrics(AdmissionControl<?> control, String name, Tag... tags) {
    this.control = Objects.requireNonNull(control, "control");
    this.tags = Meters.tags(name, "an admission control", tags);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    gauge(registry, "jeton.admission.in.flight", "Tickets open now", AdmissionControl::inFlight);
    gauge(registry, "jeton.admission.queued", "Requests waiting now", AdmissionControl::queued);
    gauge(
        registry,
        "jeton.admission.limit",
        "The limit now (the adaptive limit's last value); NaN if partitioned without a global one",
        c -> {
          OptionalInt limit = c.limit();
          return limit.isPresent() ? limit.getAsInt() : Double.NaN;
        });
    counter(
        registry,
        "jeton.admission.admitted",
        "Requests admitted",
        Tags.empty(),
        AdmissionStats::admitted);
    counter(
        registry,
        "jeton.admission.exempted",
        "Requests let through as exempt",
        Tags.empty(),
        AdmissionStats::exempted);
    for (Reason reason : Reason.values()) {
      counter(
          registry,
          "jeton.admission.rejected",
          "Requests rejected, by reason",
          Tags.of("reason", reason.name().toLowerCase(Locale.ROOT)),
          s -> s.rejected(reason));
    }
    tickets(registry, "closed", AdmissionStats::ticketsClosed);
    tickets(registry, "dropped", AdmissionStats::ticketsDropped);
    tickets(registry, "abandoned", AdmissionStats::ticketsAbandoned);
    FunctionTimer.builder(
            "jeton.admission.queue.wait",
            control,
            c -> c.stats().dequeued(),
            c -> c.stats().totalQueueWait().toNanos(),
            TimeUnit.NANOSECONDS)
        .description("Time requests spent in the queue, counted when they left it")
        .tags(tags)
        .register(registry);
    TimeGauge.builder(
            "jeton.admission.queue.wait.max",
            control,
            TimeUnit.NANOSECONDS,
            c -> c.stats().maxQueueWait().toNanos())
        .description("The longest time a request spent in the queue")
        .tags(tags)
        .register(registry);
  }

  /** One outcome of the counter of ended tickets. */
  private void tickets(
      MeterRegistry registry, String outcome, ToDoubleFunction<AdmissionStats> count) {
    counter(
        registry,
        "jeton.admission.tickets",
        "Admitted tickets ended, by how",
        Tags.of("outcome", outcome),
        count);
  }

  private void gauge(
      MeterRegistry registry,
      String name,
      String description,
      ToDoubleFunction<AdmissionControl<?>> value) {
    Gauge.builder(name, control, value)
        .description(description)
        .baseUnit("requests")
        .tags(tags)
        .register(registry);
  }

  private void counter(
      MeterRegistry registry,
      String name,
      String description,
      Tags extra,
      ToDoubleFunction<AdmissionStats> count) {
    FunctionCounter.builder(name, control, c -> count.applyAsDouble(c.stats()))
        .description(description)
        .baseUnit("requests")
        .tags(tags.and(extra))
        .register(registry);
  }
}
