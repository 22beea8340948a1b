package dev.jeton.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A closed-loop load generator: {@code clients} threads each send a request, wait for its answer,
 * and send the next, with a pause of {@code backoffMillis} after a rejection (a client that
 * honoured Retry-After would pause seconds; one that ignores it, not at all: the pause is a
 * parameter). HTTP/1.1 with keep-alive, one connection per client.
 *
 * <p>Two clients: {@code raw} (the default) writes the request on a blocking socket and reads the
 * status line, the headers and the body itself ({@link RawHttp}); {@code jdk} is the JDK's {@link
 * HttpClient}. The load generator shares the server's two cores, and the JDK client's asynchronous
 * machinery costs several times the raw client's system calls per request: at 10,000 rejections a
 * second that CPU is most of a rejection's measured latency. ({@code wrk} is cheaper still but
 * reports one latency for all responses; the admitted and the rejected are measured apart here.)
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

  /** Sends one request and returns its answer. */
  private interface Exchange {
    RawHttp.Answer get() throws IOException, InterruptedException;
  }

  /**
   * Runs the load; {@code raw} picks the client: {@link RawHttp} (true) or the JDK's {@link
   * HttpClient} (false).
   */
  static Result run(
      int port, int clients, int backoffMillis, Duration warmup, Duration measure, boolean raw)
      throws InterruptedException {
    ExecutorService executor = Executors.newFixedThreadPool(4);
    try {
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
      InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
      Supplier<Exchange> exchanges =
          raw
              ? () -> new RawHttp(address, "/work")::get
              : () ->
                  () -> {
                    HttpResponse<String> response =
                        http.send(request, HttpResponse.BodyHandlers.ofString());
                    return new RawHttp.Answer(
                        response.statusCode(),
                        response.headers().firstValue("Retry-After").isPresent());
                  };
      return run(exchanges, clients, backoffMillis, warmup, measure);
    } finally {
      executor.shutdownNow(); // its threads are not daemons: the JVM would not exit
    }
  }

  private static Result run(
      Supplier<Exchange> exchanges,
      int clients,
      int backoffMillis,
      Duration warmup,
      Duration measure)
      throws InterruptedException {
    long start = System.nanoTime();
    long recordFrom = start + warmup.toNanos();
    long end = recordFrom + measure.toNanos();
    Client[] all = new Client[clients];
    CountDownLatch done = new CountDownLatch(clients);
    for (int i = 0; i < clients; i++) {
      Client c = new Client(exchanges.get(), backoffMillis, recordFrom, end, done);
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
    private final Exchange exchange;
    private final int backoffMillis;
    private final long recordFrom;
    private final long end;
    private final CountDownLatch done;

    Client(Exchange exchange, int backoffMillis, long recordFrom, long end, CountDownLatch done) {
      this.exchange = exchange;
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
            RawHttp.Answer answer = exchange.get();
            status = answer.status();
            if ((status == 503 || status == 429) && !answer.retryAfter()) {
              error = status + " without Retry-After";
            }
          } catch (IOException e) {
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
