package dev.jeton.bench;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.jeton.AdaptiveLimit;
import dev.jeton.Semaphore;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.servlet.AdmissionFilter;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Admission control under overload, side by side in one run: a Jetty server that can do {@code
 * capacity} pieces of 20 to 50 ms work at once ({@link OverloadServer}), {@code 10 x capacity}
 * closed-loop clients on the same machine ({@link LoadClients}), and in front of the endpoint, in
 * turn: no filter; Jeton's servlet {@code AdmissionFilter} best effort, queued (at most {@code
 * capacity} waiting, 10 ms each) and adaptive (an {@code AdaptiveLimit} from {@code capacity} up to
 * 10 times it); resilience4j's {@code Bulkhead} in a filter; and Netflix concurrency-limits'
 * limiter in a filter (its own servlet filter is for {@code javax.servlet}; this one does what that
 * one does, on Jakarta), the peers answering 503 with {@code Retry-After: 1} when full, Jeton with
 * its own estimate.
 *
 * <p>First an unloaded run (no filter, {@code capacity} clients: the server is exactly busy) gives
 * the unloaded latency; then each contender runs with the full load. Reported per contender:
 * goodput (200s per second, and as a share of the capacity, {@code capacity / mean work}), p50 and
 * p99 of admitted requests, rejections per second and their p50 and p99, errors (anything but 200,
 * 503 or 429 with a Retry-After, or no answer), and the most requests that were inside the endpoint
 * at once.
 *
 * <pre>
 * java -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.OverloadBenchmark \
 *     [--capacity 16] [--load 10] [--warmup 5] [--seconds 20] [--backoff 10] [--only none,bulkhead]
 *     [--client raw|jdk] [--rounds 1]
 * </pre>
 */
public final class OverloadBenchmark {
  private static final int MIN_MILLIS = 20;
  private static final int MAX_MILLIS = 50;

  /** Jeton's queued mode waits at most this long: half the shortest work, a small price. */
  private static final int QUEUE_WAIT_MILLIS = 10;

  private OverloadBenchmark() {}

  /** The contenders by name: each makes its filter for a capacity (null: no filter). */
  static Map<String, IntFunction<@Nullable Filter>> contenders() {
    Map<String, IntFunction<@Nullable Filter>> all = new LinkedHashMap<>();
    all.put("none", c -> null);
    all.put(
        "jeton-best-effort", c -> jeton(AdmissionControl.<HttpServletRequest>builder().limit(c)));
    all.put(
        "jeton-queued",
        c ->
            jeton(
                AdmissionControl.<HttpServletRequest>builder()
                    .limit(c)
                    .queue(c, Duration.ofMillis(QUEUE_WAIT_MILLIS))));
    all.put(
        "jeton-adaptive",
        c ->
            jeton(
                AdmissionControl.<HttpServletRequest>builder()
                    .adaptive(
                        AdaptiveLimit.builder()
                            .initialLimit(c)
                            .maxLimit(10 * c)
                            .build(Semaphore.create(c)))));
    all.put("resilience4j-bulkhead", OverloadBenchmark::bulkhead);
    all.put("netflix-default", c -> netflix(SimpleLimiter.newBuilder().build()));
    return all;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = options(args);
    int capacity = Integer.parseInt(options.getOrDefault("capacity", "16"));
    int load = Integer.parseInt(options.getOrDefault("load", "10"));
    Duration warmup = Duration.ofSeconds(Long.parseLong(options.getOrDefault("warmup", "5")));
    Duration measure = Duration.ofSeconds(Long.parseLong(options.getOrDefault("seconds", "20")));
    int backoff = Integer.parseInt(options.getOrDefault("backoff", "10"));
    String client = options.getOrDefault("client", "raw");
    if (!client.equals("raw") && !client.equals("jdk")) {
      throw new IllegalArgumentException("--client must be raw or jdk, was " + client);
    }
    int rounds = Integer.parseInt(options.getOrDefault("rounds", "1"));
    Map<String, IntFunction<@Nullable Filter>> contenders = contenders();
    List<String> names = new ArrayList<>(contenders.keySet());
    if (options.containsKey("only")) {
      names = Arrays.asList(options.get("only").split(","));
      for (String name : names) {
        if (!contenders.containsKey(name)) {
          throw new IllegalArgumentException(
              "unknown contender '" + name + "'; known: " + contenders.keySet());
        }
      }
    }
    int clients = capacity * load;
    double capacityPerSecond = capacity * 1000.0 / ((MIN_MILLIS + MAX_MILLIS) / 2.0);
    Setup setup =
        new Setup(capacity, capacityPerSecond, backoff, warmup, measure, client.equals("raw"));
    System.out.printf(
        Locale.ROOT,
        "capacity %d at once (%.0f/s), work %d-%d ms, %d clients (%s), backoff %d ms after a"
            + " rejection, warm-up %s, measured %s, %d round(s), java %s%n%n",
        capacity,
        capacityPerSecond,
        MIN_MILLIS,
        MAX_MILLIS,
        clients,
        client,
        backoff,
        warmup,
        measure,
        rounds,
        System.getProperty("java.version"));
    System.out.println(
        "| contender | round | clients | goodput/s | of capacity | admitted p50 ms"
            + " | admitted p99 ms | rejected/s | rejection p50 ms | rejection p99 ms | errors"
            + " | peak inside |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (int round = 1; round <= rounds; round++) {
      row("unloaded (none)", round, capacity, null, setup);
      // Each round starts one contender later, so that no one always runs first or last.
      for (int i = 0; i < names.size(); i++) {
        String name = names.get((i + round - 1) % names.size());
        IntFunction<@Nullable Filter> filter = Objects.requireNonNull(contenders.get(name));
        row(name, round, clients, filter.apply(capacity), setup);
      }
    }
  }

  /** What every row of one run shares. */
  private record Setup(
      int capacity,
      double capacityPerSecond,
      int backoff,
      Duration warmup,
      Duration measure,
      boolean rawClient) {}

  private static void row(String name, int round, int clients, @Nullable Filter filter, Setup setup)
      throws Exception {
    // Every client gets a server thread: the overload reaches the filter.
    try (OverloadServer server =
        new OverloadServer(setup.capacity(), MIN_MILLIS, MAX_MILLIS, clients + 64, filter)) {
      LoadClients.Result r =
          LoadClients.run(
              server.port(),
              clients,
              setup.backoff(),
              setup.warmup(),
              setup.measure(),
              setup.rawClient());
      System.out.printf(
          Locale.ROOT,
          "| %s | %d | %d | %.1f | %.1f%% | %.1f | %.1f | %.1f | %.2f | %.2f | %d | %d |%n",
          name,
          round,
          clients,
          r.goodput(),
          100 * r.goodput() / setup.capacityPerSecond(),
          LoadClients.Result.millis(r.admitted(), 0.50),
          LoadClients.Result.millis(r.admitted(), 0.99),
          r.rejectionsPerSecond(),
          LoadClients.Result.millis(r.rejected(), 0.50),
          LoadClients.Result.millis(r.rejected(), 0.99),
          r.errors(),
          server.peakInside());
      if (!r.errorSamples().isEmpty()) {
        System.out.println("  errors, e.g.: " + r.errorSamples());
      }
    }
  }

  private static Map<String, String> options(String[] args) {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 == args.length) {
        throw new IllegalArgumentException("expected --name value pairs, got " + List.of(args));
      }
      options.put(args[i].substring(2), args[++i]);
    }
    return options;
  }

  /** Writes the rejection every peer filter here sends: 503, Retry-After: 1, a short body. */
  static void reject(ServletResponse response) throws IOException {
    HttpServletResponse http = (HttpServletResponse) response;
    http.setStatus(503);
    http.setHeader("Retry-After", "1");
    http.setContentType("text/plain");
    http.getWriter().write("overloaded\n");
  }

  private static Filter jeton(AdmissionControl.Builder<HttpServletRequest> builder) {
    return new AdmissionFilter(builder.build());
  }

  private static Filter bulkhead(int capacity) {
    Bulkhead bulkhead =
        Bulkhead.of(
            "overload",
            BulkheadConfig.custom()
                .maxConcurrentCalls(capacity)
                .maxWaitDuration(Duration.ZERO)
                .build());
    return (ServletRequest request, ServletResponse response, FilterChain chain) -> {
      if (!bulkhead.tryAcquirePermission()) {
        reject(response);
        return;
      }
      try {
        chain.doFilter(request, response);
      } finally {
        bulkhead.onComplete();
      }
    };
  }

  private static Filter netflix(Limiter<HttpServletRequest> limiter) {
    return (ServletRequest request, ServletResponse response, FilterChain chain) -> {
      Optional<Limiter.Listener> listener = limiter.acquire((HttpServletRequest) request);
      if (listener.isEmpty()) {
        reject(response);
        return;
      }
      try {
        chain.doFilter(request, response);
        listener.get().onSuccess();
      } catch (IOException | ServletException | RuntimeException e) {
        listener.get().onIgnore();
        throw e;
      }
    };
  }
}
