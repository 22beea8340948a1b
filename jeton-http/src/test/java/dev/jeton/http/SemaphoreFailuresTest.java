package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.SemaphoreClosedException;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** How a failure of the semaphore maps to a reason, and how the unavailable ones are logged. */
class SemaphoreFailuresTest {
  /** One line of the log: its level, message and exception. */
  record Line(System.Logger.Level level, String message, @Nullable Throwable thrown) {}

  /** A logger that keeps what it is given. */
  static final class Recording implements System.Logger {
    final List<Line> lines = new ArrayList<>();

    @Override
    public String getName() {
      return "test";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(
        Level level, @Nullable ResourceBundle bundle, String message, @Nullable Throwable thrown) {
      lines.add(new Line(level, message, thrown));
    }

    @Override
    public void log(
        Level level, @Nullable ResourceBundle bundle, String format, @Nullable Object... params) {
      lines.add(new Line(level, format, null));
    }
  }

  private final Recording log = new Recording();
  private final long[] now = {Long.MIN_VALUE + 5}; // nanoTime may be anywhere
  private final SemaphoreFailures failures = new SemaphoreFailures(() -> log, () -> now[0]);

  @Test
  void wrappedFailuresAreJudgedByTheirCause() {
    SemaphoreClosedException closed = new SemaphoreClosedException("closed");
    assertEquals(Reason.CLOSED, failures.reasonFor(closed));
    assertEquals(Reason.CLOSED, failures.reasonFor(new CompletionException(closed)));
    assertEquals(
        Reason.CLOSED, failures.reasonFor(new CompletionException(new ExecutionException(closed))));
    assertEquals(
        Reason.LIMIT_REACHED,
        failures.reasonFor(new CompletionException(new IllegalArgumentException("limit 0"))));
    assertEquals(0, log.lines.size(), "neither is logged");
    assertEquals(Reason.UNAVAILABLE, failures.reasonFor(new CompletionException(null)));
  }

  @Test
  void unavailableIsLoggedWithTheFailureAtMostOnceAPeriodCountingTheRest() {
    RuntimeException first = new FailingSemaphore.Unreachable("connection refused");
    assertEquals(Reason.UNAVAILABLE, failures.reasonFor(new CompletionException(first)));
    assertEquals(1, log.lines.size());
    Line line = log.lines.get(0);
    assertEquals(System.Logger.Level.WARNING, line.level());
    assertSame(first, line.thrown(), "the cause, unwrapped, with its stack trace");
    assertTrue(line.message().contains("1 request rejected UNAVAILABLE"), line.message());

    for (int i = 0; i < 99; i++) {
      now[0] += SemaphoreFailures.REPORT_NANOS / 100;
      failures.reasonFor(new FailingSemaphore.Unreachable("again " + i));
    }
    assertEquals(1, log.lines.size(), "within the period: counted, not logged");
    now[0] += SemaphoreFailures.REPORT_NANOS / 100;
    RuntimeException latest = new FailingSemaphore.Unreachable("timed out");
    failures.reasonFor(latest);
    assertEquals(2, log.lines.size());
    assertSame(latest, log.lines.get(1).thrown());
    String message = log.lines.get(1).message();
    assertTrue(message.contains("100 requests rejected"), message);
  }

  @Test
  void releaseFailuresAreLoggedApartFromRejections() {
    failures.reasonFor(new FailingSemaphore.Unreachable("connection refused"));
    RuntimeException lost = new FailingSemaphore.Unreachable("connection reset");
    failures.releaseFailed(new CompletionException(lost));
    assertEquals(2, log.lines.size(), "each kind has its own period");
    assertSame(lost, log.lines.get(1).thrown());
    String message = log.lines.get(1).message();
    assertTrue(message.contains("1 request whose permit failed to go back"), message);
    failures.releaseFailed(lost);
    assertEquals(2, log.lines.size(), "within the period: counted, not logged");
  }
}
