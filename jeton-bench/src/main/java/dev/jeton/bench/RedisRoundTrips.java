package dev.jeton.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Counts the commands each implementation sends Redis for one uncontended {@code acquire(1)} and
 * for one release (awaited), exactly: a plain program, not a benchmark. It watches the server with
 * {@code MONITOR}, which shows every command a client sends and, marked {@code lua}, the commands
 * scripts and functions run, and marks the start of each acquire and each release with an {@code
 * ECHO} sent, and answered, on another connection in between. Since each command a client sends
 * waits for its reply, a client command is a round trip; the {@code lua} ones are counted apart, as
 * the commands run inside per acquire and per release.
 *
 * <pre>
 * java -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.RedisRoundTrips \
 *     [operations [holders]] [redis://host:port]
 * </pre>
 *
 * <p>{@code holders} (default 0): permits a background client takes first and holds while the
 * operations are counted, of a semaphore of 4 + holders ({@link RedisFleet#hold}). Without a URI it
 * starts its own {@code redis-server} ({@link RedisProcess}). With one, the database is flushed
 * before each implementation.
 */
public final class RedisRoundTrips {
  private static final String ACQUIRE = "jeton-bench:acquire";
  private static final String RELEASE = "jeton-bench:release";
  private static final String END = "jeton-bench:end";

  private RedisRoundTrips() {}

  public static void main(String[] args) throws Exception {
    List<Integer> numbers = new ArrayList<>();
    String given = null;
    for (String arg : args) {
      if (arg.matches("[0-9]+")) {
        numbers.add(Integer.parseInt(arg));
      } else {
        given = arg;
      }
    }
    int operations = numbers.size() > 0 ? numbers.get(0) : 1000;
    int holders = numbers.size() > 1 ? numbers.get(1) : 0;
    RedisProcess server = given == null ? RedisProcess.start() : null;
    String uri = server != null ? server.uri() : Objects.requireNonNull(given);
    java.net.URI parsed = java.net.URI.create(uri);
    String host = parsed.getHost();
    int port = parsed.getPort() < 0 ? 6379 : parsed.getPort();
    try {
      System.out.printf(
          "Client commands (round trips) per uncontended acquire(1) and per awaited release,"
              + " and the commands run inside scripts and functions, %d operations each, 4 free"
              + " permits, %d held by another client, redis %s%n",
          operations, holders, uri);
      for (String impl :
          List.of(
              RedisFleet.JETON,
              RedisFleet.REDISSON_SEMAPHORE,
              RedisFleet.REDISSON_EXPIRABLE,
              RedisFleet.FLOOR)) {
        count(impl, uri, host, port, operations, holders);
      }
    } finally {
      if (server != null) {
        server.close();
      }
    }
    System.exit(0); // Redisson's and Lettuce's threads are gone, but not a moment too soon
  }

  private static void count(
      String impl, String uri, String host, int port, int operations, int holders)
      throws Exception {
    try (Resp control = Resp.connect(host, port, 5000)) {
      control.call("FLUSHDB");
      try (RedisFleet fleet = RedisFleet.open(impl, uri, 4 + holders);
          RedisFleet.Handle handle = fleet.handle()) {
        RedisFleet.Held held = holders > 0 ? fleet.hold(holders) : () -> {};
        for (int i = 0; i < 200; i++) { // warm up; loads the scripts and functions
          handle.release(handle.acquire());
        }
        Thread.sleep(200);
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        try (Resp monitor = Resp.connect(host, port, 5000)) {
          if (!"OK".equals(monitor.call("MONITOR"))) {
            throw new IllegalStateException("MONITOR refused");
          }
          monitor.readTimeout(0);
          Thread reader =
              new Thread(
                  () -> {
                    try {
                      while (true) {
                        lines.add(String.valueOf(monitor.read()));
                      }
                    } catch (RuntimeException closed) {
                      // the monitor connection was closed: done
                    }
                  },
                  "monitor-reader");
          reader.setDaemon(true);
          reader.start();
          for (int i = 0; i < operations; i++) {
            control.call("ECHO", ACQUIRE);
            Object permit = handle.acquire();
            control.call("ECHO", RELEASE);
            handle.release(permit);
          }
          control.call("ECHO", END);
          Tally tally = new Tally();
          while (true) {
            String line = lines.poll(10, TimeUnit.SECONDS);
            if (line == null) {
              throw new IllegalStateException("MONITOR never showed the end marker");
            }
            if (!tally.add(line)) {
              break;
            }
          }
          System.out.printf(
              "  %-18s acquire %s%n  %-18s release %s%n",
              impl, tally.acquire.describe(operations), "", tally.release.describe(operations));
        } finally {
          held.release();
        }
      }
    }
  }

  /** Commands seen in one phase, by name: those clients sent, and those scripts ran. */
  private static final class Phase {
    final Map<String, Long> commands = new TreeMap<>();
    final Map<String, Long> inner = new TreeMap<>();

    String describe(int operations) {
      return perOperation(commands, operations, "round trips/op")
          + "; inside: "
          + perOperation(inner, operations, "commands/op");
    }

    private static String perOperation(Map<String, Long> counts, int operations, String unit) {
      long total = counts.values().stream().mapToLong(Long::longValue).sum();
      List<String> parts = new ArrayList<>();
      counts.forEach((c, n) -> parts.add(String.format("%s %.3f", c, (double) n / operations)));
      return String.format(
          "%.3f %s (%s)", (double) total / operations, unit, String.join(", ", parts));
    }
  }

  /**
   * The command's name; for a script or function call, with its first argument if that is a word
   * (Jeton's operation: {@code fcall[acquire]}).
   */
  static String commandName(String quoted) {
    List<String> words = new ArrayList<>();
    int at = 0;
    while (true) {
      int open = quoted.indexOf('"', at);
      if (open < 0) {
        break;
      }
      int close = open + 1;
      while (close < quoted.length() && quoted.charAt(close) != '"') {
        close += quoted.charAt(close) == '\\' ? 2 : 1;
      }
      words.add(quoted.substring(open + 1, Math.min(close, quoted.length())));
      at = close + 1;
    }
    String name = words.get(0).toLowerCase(java.util.Locale.ROOT);
    if ((name.equals("evalsha") || name.equals("eval") || name.equals("fcall"))
        && words.size() >= 3) {
      int keys = Integer.parseInt(words.get(2));
      if (words.size() > 3 + keys && words.get(3 + keys).matches("[a-z]+")) {
        return name + "[" + words.get(3 + keys) + "]";
      }
    }
    return name;
  }

  /** Sorts MONITOR lines into the acquire and release phases, by the markers. */
  private static final class Tally {
    final Phase acquire = new Phase();
    final Phase release = new Phase();
    @Nullable Phase current;

    /** False once the end marker is seen. */
    boolean add(String line) {
      int close = line.indexOf("] ");
      if (close < 0) {
        return true; // not a command line
      }
      String rest = line.substring(close + 2);
      if (line.substring(0, close).endsWith(" lua")) { // run by a script or function
        Phase phase = current;
        if (phase != null) {
          phase.inner.merge(commandName(rest), 1L, Long::sum);
        }
        return true;
      }
      if (rest.contains('"' + END + '"')) {
        return false;
      }
      if (rest.contains('"' + ACQUIRE + '"')) {
        current = acquire;
        return true;
      }
      if (rest.contains('"' + RELEASE + '"')) {
        current = release;
        return true;
      }
      Phase phase = current;
      if (phase != null) {
        phase.commands.merge(commandName(rest), 1L, Long::sum);
      }
      return true;
    }
  }
}
