package dev.jeton.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A closed-loop load generator: {@code clients} threads each send a request, wait for its answer,
 * and send the next, with a pause of {@code backoffMillis} after a rejection (a client that
 * honoured Retry-After would pause seconds; one that ignores it, not at all: the pause is a
 * parameter). The JDK's {@link HttpClient}, HTTP/1.1, one connection per client at a time.
 *
 * <p>Requests answered during the warm-up are not recorded; the others are sorted by how they
 * ended: 200 (admitted and done), 503 or 429 (rejected), anything else or no answer (errors).
 */
final class LoadClients {

  /** What one run measured. Latencies in nanoseconds, sorted. */
  record Result(
      double seconds, long[] admitted, long[] rejected, long errors, List<String> errorSamples) {

    double goodput() {
      return admitted.length / seconds;
    }

    double rejectionsPerSecond() {
      return rejected.length / seconds;
    }

    /** The q-quantile (0..1) of {@code sorted}, in milliseconds; NaN if empty. */
    static double millis(long[] sorted, double q) {
      if (sorted.length == 0) {
        return Double.NaN;
      }
      int i = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
      return sorted[Math.max(0, i)] / 1e6;
    }
  }

  private LoadClients() {}

  static Result run(int port, int clients, int backoffMillis, Duration warmup, Duration measure)
      throws InterruptedException {
    ExecutorService executor = Executors.newFixedThreadPool(4);
    try {
      return run(executor, port, clients, backoffMillis, warmup, measure);
    } finally {
      executor.shutdownNow(); // its threads are not daemons: the JVM would not exit
    }
  }

  private static Result run(
      ExecutorService executor,
      int port,
      int clients,
      int backoffMillis,
      Duration warmup,
      Duration measure)
      throws InterruptedException {
    HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(executor)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/work"))
            .timeout(Duration.ofSeconds(30))
            .build();
    long start = System.nanoTime();
    long recordFrom = start + warmup.toNanos();
    long end = recordFrom + measure.toNanos();
    Client[] all = new Client[clients];
    CountDownLatch done = new CountDownLatch(clients);
    for (int i = 0; i < clients; i++) {
      Client c = new Client(http, request, backoffMillis, recordFrom, end, done);
      all[i] = c;
      Thread t = new Thread(c, "load-client-" + i);
      t.setDaemon(true);
      t.start();
    }
    if (!done.await(measure.plus(warmup).toSeconds() + 120, TimeUnit.SECONDS)) {
      throw new IllegalStateException("clients did not finish: the server stopped answering");
    }
    Samples admitted = new Samples();
    Samples rejected = new Samples();
    long errors = 0;
    List<String> errorSamples = new ArrayList<>();
    for (Client c : all) {
      admitted.addAll(c.admitted);
      rejected.addAll(c.rejected);
      errors += c.errors;
      if (c.firstError != null && errorSamples.size() < 3) {
        errorSamples.add(c.firstError);
      }
    }
    return new Result(
        measure.toNanos() / 1e9, admitted.sorted(), rejected.sorted(), errors, errorSamples);
  }

  private static final class Client implements Runnable {
    final Samples admitted = new Samples();
    final Samples rejected = new Samples();
    long errors;
    @Nullable String firstError;
    private final HttpClient http;
    private final HttpRequest request;
    private final int backoffMillis;
    private final long recordFrom;
    private final long end;
    private final CountDownLatch done;

    Client(
        HttpClient http,
        HttpRequest request,
        int backoffMillis,
        long recordFrom,
        long end,
        CountDownLatch done) {
      this.http = http;
      this.request = request;
      this.backoffMillis = backoffMillis;
      this.recordFrom = recordFrom;
      this.end = end;
      this.done = done;
    }

    @Override
    public void run() {
      try {
        long t0;
        while ((t0 = System.nanoTime()) < end) {
          int status;
          @Nullable String error = null;
          try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            status = response.statusCode();
            if ((status == 503 || status == 429)
                && response.headers().firstValue("Retry-After").isEmpty()) {
              error = status + " without Retry-After";
            }
          } catch (java.io.IOException e) {
            status = -1;
            error = e.toString();
          }
          long t1 = System.nanoTime();
          boolean record = t0 >= recordFrom && t1 <= end;
          boolean rejection = status == 503 || status == 429;
          if (record) {
            if (status == 200) {
              admitted.add(t1 - t0);
            } else if (rejection && error == null) {
              rejected.add(t1 - t0);
            } else {
              errors++;
              if (firstError == null) {
                firstError = error != null ? error : "status " + status;
              }
            }
          }
          if (rejection && backoffMillis > 0) {
            Thread.sleep(backoffMillis);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        done.countDown();
      }
    }
  }

  /** A growable array of longs. */
  private static final class Samples {
    private long[] values = new long[1024];
    private int size;

    void add(long v) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = v;
    }

    void addAll(Samples other) {
      for (int i = 0; i < other.size; i++) {
        add(other.values[i]);
      }
    }

    long[] sorted() {
      long[] copy = Arrays.copyOf(values, size);
      Arrays.sort(copy);
      return copy;
    }
  }
}
