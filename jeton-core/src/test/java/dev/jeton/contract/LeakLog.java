package dev.jeton.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.jspecify.annotations.Nullable;

/**
 * Reads Jeton's leak reports as an application without a logging framework gets them: through
 * {@code System.Logger}'s default back end, {@code java.util.logging}. Shared with other modules'
 * tests through the test jar.
 */
public final class LeakLog {
  private LeakLog() {}

  /** One report: its level as {@code System.Logger} names it, its text, and its stack if any. */
  public record Logged(System.Logger.Level level, String message, @Nullable Throwable thrown) {}

  /**
   * Passes to {@code consumer} every record logged on {@code logger} whose text contains {@code
   * marker}, until the returned action runs.
   */
  public static Runnable listen(String logger, String marker, Consumer<Logged> consumer) {
    Logger jul = Logger.getLogger(logger); // held by the handler's closure: JUL keeps it weakly
    Handler handler =
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            String text = String.valueOf(record.getMessage());
            if (text.contains(marker)) {
              consumer.accept(new Logged(levelOf(record.getLevel()), text, record.getThrown()));
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    jul.addHandler(handler);
    return () -> jul.removeHandler(handler);
  }

  private static System.Logger.Level levelOf(Level level) {
    int value = level.intValue();
    if (value >= Level.SEVERE.intValue()) {
      return System.Logger.Level.ERROR;
    }
    if (value >= Level.WARNING.intValue()) {
      return System.Logger.Level.WARNING;
    }
    return value >= Level.INFO.intValue() ? System.Logger.Level.INFO : System.Logger.Level.DEBUG;
  }

  /**
   * Checks that {@code report} is a warning whose text begins with {@code start} and says that the
   * leaked permits stay taken (the default policy); returns the text for further checks.
   */
  public static String assertKeptReport(Logged report, String start) {
    String text = report.message();
    assertEquals(System.Logger.Level.WARNING, report.level(), text);
    assertTrue(text.startsWith(start), text);
    assertTrue(text.contains("Its permits stay taken"), text);
    return text;
  }

  /**
   * Runs the collector, and gives the reporter its turn, until {@code done}; fails after a minute,
   * a hang guard only.
   */
  public static void collectUntil(BooleanSupplier done) throws InterruptedException {
    long start = System.nanoTime();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() - start > TimeUnit.SECONDS.toNanos(60)) {
        throw new AssertionError("not within the hang guard");
      }
      collectOnce();
    }
  }

  /** Runs the collector once, then gives the reporter its turn. */
  public static void collectOnce() throws InterruptedException {
    System.gc();
    Thread.sleep(20);
  }
}
