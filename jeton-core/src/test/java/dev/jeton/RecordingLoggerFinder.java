package dev.jeton;

import java.io.PrintStream;
import java.text.MessageFormat;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The tests' {@link System.LoggerFinder} (installed by its service file): every {@code
 * System.Logger} message goes to standard error, as the default back end would send it, and to the
 * listeners of its logger's name, so that a test can read what Jeton logged through the same
 * interface an application's logging framework is handed.
 */
public final class RecordingLoggerFinder extends System.LoggerFinder {
  /** One message as logged: its logger, level, text and throwable. */
  public record Logged(
      String logger, System.Logger.Level level, String message, @Nullable Throwable thrown) {}

  private static final List<Listener> LISTENERS = new CopyOnWriteArrayList<>();

  private record Listener(String logger, Consumer<Logged> consumer) {}

  /** Sends every message of {@code logger} to {@code consumer} until the returned handle runs. */
  public static Runnable listen(String logger, Consumer<Logged> consumer) {
    Listener listener = new Listener(logger, consumer);
    LISTENERS.add(listener);
    return () -> LISTENERS.remove(listener);
  }

  @Override
  public System.Logger getLogger(String name, Module module) {
    return new Recording(name);
  }

  private static final class Recording implements System.Logger {
    private final String name;

    Recording(String name) {
      this.name = name;
    }

    @Override
    public String getName() {
      return name;
    }

    @Override
    public boolean isLoggable(Level level) {
      return level.getSeverity() >= Level.INFO.getSeverity();
    }

    @Override
    public void log(Level level, @Nullable ResourceBundle bundle, String msg, Throwable thrown) {
      publish(new Logged(name, level, msg, thrown));
    }

    @Override
    public void log(
        Level level, @Nullable ResourceBundle bundle, String format, @Nullable Object... params) {
      String text =
          params == null || params.length == 0 ? format : MessageFormat.format(format, params);
      publish(new Logged(name, level, text, null));
    }

    private void publish(Logged logged) {
      if (!isLoggable(logged.level())) {
        return;
      }
      PrintStream err = System.err;
      err.println("[" + logged.level() + "] " + name + ": " + logged.message());
      if (logged.thrown() != null) {
        logged.thrown().printStackTrace(err);
      }
      for (Listener listener : LISTENERS) {
        if (listener.logger().equals(name)) {
          listener.consumer().accept(logged);
        }
      }
    }
  }
}
