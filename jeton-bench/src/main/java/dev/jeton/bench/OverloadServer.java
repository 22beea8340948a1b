package dev.jeton.bench;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.EnumSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * A Jetty 12 server whose one endpoint, {@code /work}, needs {@code minMillis} to {@code maxMillis}
 * of work (uniformly drawn) and can do {@code capacity} pieces of work at once: beyond that,
 * requests wait inside the server for a worker (a fair JDK semaphore standing for a database pool
 * or a CPU budget), which is how a server without admission control turns overload into latency.
 * The work is a sleep, so the load generator on the same machine keeps the cores.
 *
 * <p>An optional filter sits in front of the endpoint, as an application would install an admission
 * filter. The server counts how many requests are inside the endpoint at once.
 */
final class OverloadServer implements AutoCloseable {
  private final Server server;
  private final AtomicInteger inside = new AtomicInteger();
  private final AtomicInteger peakInside = new AtomicInteger();

  OverloadServer(int capacity, int minMillis, int maxMillis, int threads, @Nullable Filter filter)
      throws Exception {
    QueuedThreadPool pool = new QueuedThreadPool(threads, Math.min(threads, 16));
    pool.setName("overload-server");
    server = new Server(pool);
    ServerConnector connector = new ServerConnector(server);
    connector.setPort(0);
    connector.setAcceptQueueSize(4096);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new Work(capacity, minMillis, maxMillis)), "/work");
    if (filter != null) {
      context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
    }
    server.setHandler(context);
    server.start();
  }

  int port() {
    return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
  }

  /** The most requests ever inside the endpoint at once (admitted ones, working or waiting). */
  int peakInside() {
    return peakInside.get();
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }

  private final class Work extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient Semaphore workers;
    private final int minMillis;
    private final int maxMillis;

    Work(int capacity, int minMillis, int maxMillis) {
      this.workers = new Semaphore(capacity, true);
      this.minMillis = minMillis;
      this.maxMillis = maxMillis;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      int now = inside.incrementAndGet();
      peakInside.accumulateAndGet(now, Math::max);
      try {
        workers.acquire();
        try {
          TimeUnit.MILLISECONDS.sleep(
              ThreadLocalRandom.current().nextInt(minMillis, maxMillis + 1));
        } finally {
          workers.release();
        }
        response.setContentType("text/plain");
        response.getWriter().write("done\n");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        response.sendError(500);
      } finally {
        inside.decrementAndGet();
      }
    }
  }
}
