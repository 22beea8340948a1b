package dev.jeton.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.AdaptiveLimit;
import dev.jeton.Semaphore;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Decision;
import dev.jeton.http.Rejection;
import dev.jeton.http.Ticket;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class AdmissionMetricsTest {
  private final MeterRegistry registry = new SimpleMeterRegistry();

  private double gauge(String name) {
    return registry.get(name).tag("name", "api").gauge().value();
  }

  private double count(String name, String... tags) {
    return registry.get(name).tag("name", "api").tags(tags).functionCounter().count();
  }

  @Test
  void metersFollowTheControl() throws Exception {
    AdmissionControl<String> control =
        AdmissionControl.<String>builder()
            .limit(1)
            .queue(1, Duration.ofSeconds(30))
            .exempt("health"::equals)
            .build();
    new AdmissionMetrics(control, "api", Tag.of("service", "shop")).bindTo(registry);
    assertEquals(1, gauge("jeton.admission.limit"));

    Ticket held = assertInstanceOf(Ticket.class, control.admit("a"));
    CompletableFuture<Decision> waiting = control.admitAsync("b");
    Rejection full = assertInstanceOf(Rejection.class, control.admit("c"));
    assertTrue(full.retryAfterSeconds() >= 1);
    ((Ticket) control.admit("health")).close();
    assertEquals(1, gauge("jeton.admission.in.flight"));
    assertEquals(1, gauge("jeton.admission.queued"));

    held.close();
    Ticket second = assertInstanceOf(Ticket.class, waiting.join());
    second.close();
    assertEquals(0, gauge("jeton.admission.in.flight"));
    assertEquals(0, gauge("jeton.admission.queued"));
    assertEquals(2, count("jeton.admission.admitted"));
    assertEquals(1, count("jeton.admission.exempted"));
    assertEquals(1, count("jeton.admission.rejected", "reason", "queue_full"));
    assertEquals(0, count("jeton.admission.rejected", "reason", "limit_reached"));
    assertEquals(1, registry.get("jeton.admission.queue.wait").functionTimer().count());
    double max =
        registry.get("jeton.admission.queue.wait.max").timeGauge().value(TimeUnit.NANOSECONDS);
    assertTrue(max > 0, "the queued request waited: " + max);
    for (Meter meter : registry.getMeters()) {
      assertEquals("shop", meter.getId().getTag("service"), meter.getId().toString());
    }
  }

  @Test
  void ticketsAreCountedByHowTheyEnded() throws Exception {
    AdmissionControl<String> control = AdmissionControl.<String>builder().limit(4).build();
    new AdmissionMetrics(control, "api").bindTo(registry);
    ((Ticket) control.admit("a")).close();
    ((Ticket) control.admit("b")).close();
    ((Ticket) control.admit("c")).dropped();
    ((Ticket) control.admit("d")).abandon();
    assertEquals(2, count("jeton.admission.tickets", "outcome", "closed"));
    assertEquals(1, count("jeton.admission.tickets", "outcome", "dropped"));
    assertEquals(1, count("jeton.admission.tickets", "outcome", "abandoned"));
  }

  @Test
  void theLimitGaugeShowsTheAdaptiveLimit() {
    AdaptiveLimit adaptive = AdaptiveLimit.builder().initialLimit(12).build(Semaphore.create(3));
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().adaptive(adaptive).build();
    new AdmissionMetrics(control, "api").bindTo(registry);
    assertEquals(12, gauge("jeton.admission.limit"));
  }

  @Test
  void partitionsWithoutAGlobalLimitHaveNone() {
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().partitionBy(r -> r, 2).build();
    new AdmissionMetrics(control, "api").bindTo(registry);
    assertTrue(Double.isNaN(gauge("jeton.admission.limit")));
  }

  @Test
  void everyReasonHasItsCounter() {
    AdmissionControl<String> control = AdmissionControl.<String>builder().limit(1).build();
    new AdmissionMetrics(control, "api").bindTo(registry);
    for (String reason :
        new String[] {"limit_reached", "queue_full", "queue_timeout", "closed", "unavailable"}) {
      assertEquals(0, count("jeton.admission.rejected", "reason", reason), reason);
    }
  }
}
