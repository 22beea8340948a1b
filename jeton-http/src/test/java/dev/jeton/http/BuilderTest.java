package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Semaphore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class BuilderTest {

  private static void fails(Class<? extends Throwable> type, String naming, Executable call) {
    Throwable e = assertThrows(type, call);
    assertTrue(e.getMessage().contains(naming), () -> e.getMessage() + " should name " + naming);
  }

  @Test
  void badValuesFailInTheSetterNamingThem() {
    var b = AdmissionControl.<String>builder();
    fails(IllegalArgumentException.class, "limit must be at least 1, was 0", () -> b.limit(0));
    fails(IllegalArgumentException.class, "was -3", () -> b.limit(-3));
    fails(
        IllegalArgumentException.class,
        "maxQueue must be at least 1, was 0",
        () -> b.queue(0, Duration.ofSeconds(1)));
    fails(
        IllegalArgumentException.class,
        "maxWait must be positive, was PT0S",
        () -> b.queue(10, Duration.ZERO));
    fails(
        IllegalArgumentException.class,
        "maxWait must be positive, was PT-1S",
        () -> b.queue(10, Duration.ofSeconds(-1)));
    fails(
        IllegalArgumentException.class,
        "aging must be positive, was PT0S",
        () -> b.priority(s -> 0, Duration.ZERO));
    fails(
        IllegalArgumentException.class,
        "limitPerKey must be at least 1, was 0",
        () -> b.partitionBy(s -> s, 0));
    fails(
        IllegalArgumentException.class,
        "rejectionStatus must be 503 or 429, was 500",
        () -> b.rejectionStatus(500));
    fails(
        IllegalArgumentException.class,
        "maxRetryAfter must be at least 1 s, was PT0.5S",
        () -> b.maxRetryAfter(Duration.ofMillis(500)));
    fails(NullPointerException.class, "semaphore", () -> b.semaphore(null));
    fails(
        IllegalArgumentException.class,
        "timeout must be positive, was PT0S",
        () -> b.semaphoreTimeout(Duration.ZERO));
  }

  /**
   * Regression: {@code limit(Integer.MAX_VALUE)} and {@code partitionBy(f, Integer.MAX_VALUE)}
   * passed the setter and failed only in {@code build()}, the second naming {@code limit}.
   */
  @Test
  void limitsAboveTheLargestASemaphoreTakesFailInTheSetterNamingThem() {
    var b = AdmissionControl.<String>builder();
    fails(
        IllegalArgumentException.class,
        "limit must be at most 1073741823 (the largest limit of a semaphore), was 2147483647",
        () -> b.limit(Integer.MAX_VALUE));
    fails(
        IllegalArgumentException.class,
        "limitPerKey must be at most 1073741823 (the largest limit of a semaphore), was 1073741824",
        () -> b.partitionBy(s -> s, 1 << 30));
  }

  @Test
  void theLargestLimitIsTheLargestASemaphoreTakes() throws InterruptedException {
    int largest = (1 << 30) - 1;
    assertThrows(IllegalArgumentException.class, () -> Semaphore.create(largest + 1));
    AdmissionControl<String> plain = AdmissionControl.<String>builder().limit(largest).build();
    assertEquals(largest, plain.limit().getAsInt());
    AdmissionControl<String> partitioned =
        AdmissionControl.<String>builder().partitionBy(s -> s, largest).limit(largest).build();
    assertInstanceOf(Ticket.class, partitioned.admit("a")).close();
  }

  @Test
  void aLimitOrASemaphoreIsRequiredButNotBoth() {
    fails(
        IllegalStateException.class,
        "neither was set",
        () -> AdmissionControl.<String>builder().build());
    fails(
        IllegalStateException.class,
        "both were set",
        () -> AdmissionControl.<String>builder().limit(2).semaphore(Semaphore.create(2)).build());
  }

  @Test
  void queueOrderWithoutAQueueFails() {
    fails(
        IllegalStateException.class,
        "lifo() orders the queue",
        () -> AdmissionControl.<String>builder().limit(2).lifo().build());
    fails(
        IllegalStateException.class,
        "priority(...) orders the queue",
        () ->
            AdmissionControl.<String>builder()
                .limit(2)
                .priority(s -> 0, Duration.ofSeconds(1))
                .build());
  }
}
