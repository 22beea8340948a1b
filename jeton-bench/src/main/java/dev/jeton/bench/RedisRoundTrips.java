package dev.jeton.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Counts the commands each implementation sends Redis for one uncontended {@code acquire(1)}
 * and for one release (awaited), exactly: a plain program, not a benchmark. It watches the
 * server with {@code MONITOR}, which shows every command a client sends (and, marked {@code
 * lua}, the commands scripts run, which are not counted here), and marks the start of each
 * acquire and each release with an {@code ECHO} sent, and answered, on another connection in
 * between. Since each command waits for its reply, a command is a round trip.
 *
 * <pre>
 * java -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.RedisRoundTrips [operations] [redis://host:port]
 * </pre>
 *
 * <p>Without a URI it starts its own {@code redis-server} ({@link RedisProcess}). With one, the
 * database is flushed before each implementation.
 */
public final class RedisRoundTrips {
  private static final String ACQUIRE = "jeton-bench:acquire";
  private static final String RELEASE = "jeton-bench:release";
  private static final String END = "jeton-bench:end";

  private RedisRoundTrips() {}

  public static void main(String[] args) throws Exception {
    int operations = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    RedisProcess server = args.length > 1 ? null : RedisProcess.start();
    String uri = server != null ? server.uri() : args[1];
    java.net.URI parsed = java.net.URI.create(uri);
    String host = parsed.getHost();
    int port = parsed.getPort() < 0 ? 6379 : parsed.getPort();
    try {
      System.out.printf(
          "Client commands (round trips) per uncontended acquire(1) and per awaited release,"
              + " %d operations each, limit 4, redis %s%n",
          operations, uri);
      for (String impl :
          List.of(RedisFleet.JETON, RedisFleet.REDISSON_SEMAPHORE, RedisFleet.REDISSON_EXPIRABLE)) {
        count(impl, uri, host, port, operations);
      }
    } finally {
      if (server != null) {
        server.close();
      }
    }
    System.exit(0); // Redisson's and Lettuce's threads are gone, but not a moment too soon
  }

  private static void count(String impl, String uri, String host, int port, int operations)
      throws Exception {
    try (Resp control = Resp.connect(host, port, 5000)) {
      control.call("FLUSHDB");
      try (RedisFleet fleet = RedisFleet.open(impl, uri, 4);
          RedisFleet.Handle handle = fleet.handle()) {
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
        }
      }
    }
  }

  /** Commands seen in one phase, by name. */
  private static final class Phase {
    final Map<String, Long> commands = new TreeMap<>();

    void add(String command) {
      commands.merge(command, 1L, Long::sum);
    }

    String describe(int operations) {
      long total = commands.values().stream().mapToLong(Long::longValue).sum();
      List<String> parts = new ArrayList<>();
      commands.forEach((c, n) -> parts.add(String.format("%s %.3f", c, (double) n / operations)));
      return String.format("%.3f round trips/op  (%s)", (double) total / operations, String.join(", ", parts));
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
      if (close < 0 || line.substring(0, close).endsWith(" lua")) {
        return true; // a command run by a script, or not a command line
      }
      String rest = line.substring(close + 2);
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
        phase.add(commandName(rest));
      }
      return true;
    }
  }
}
