package dev.jeton.http.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The application the adapter's tests deploy behind the admission filter: a servlet whose paths
 * each do one thing, and a probe filter in front of the admission filter that sees each dispatch
 * from outside.
 *
 * <ul>
 *   <li>{@code /work}: counts itself at work (now and the most ever, in all and per {@code tenant}
 *       parameter), waits for {@link #gate} to open, answers {@code ok}; {@code /work?short} parks
 *       a moment instead of waiting;
 *   <li>{@code /throw}: the handler throws;
 *   <li>{@code /async}: starts async mode ({@code ?timeout=MS} sets its timeout) and leaves the
 *       context in {@link #pending} for the test to finish; counts itself at work until its first
 *       async event;
 *   <li>{@code /async-work?timeout=MS}: starts async mode with that timeout and runs its work with
 *       {@code AsyncContext.start}: counted at work until {@link #gate} opens, however long after
 *       the timeout, then it completes the request (if the container has not already); with {@code
 *       &fail}, the work throws at once instead, without completing it;
 *   <li>{@code /dispatch}: starts async mode and dispatches at once; the {@code ASYNC} dispatch
 *       answers {@code dispatched}, or with {@code ?again} starts async mode once more and leaves
 *       the context in {@link #pending}, or with {@code ?timeout=MS} does as {@code /async-work};
 *   <li>{@code /on-timeout?timeout=MS&dispatch} (or {@code &start}): starts async mode with that
 *       timeout, and its {@code onTimeout} dispatches the request, whose {@code ASYNC} dispatch
 *       works as {@code /work} does (or starts that work with the event's {@code
 *       AsyncContext.start}, waits until it runs, and the work then completes the request);
 *   <li>{@code /large}: counts itself at work while it writes a body far larger than any socket
 *       buffer, until the body is written or a write fails;
 *   <li>{@code /health}: answers {@code up}.
 * </ul>
 */
final class TestApp {
  /** A hang guard, never a timing assertion: long enough for a loaded 2-core machine. */
  static final long GUARD_SECONDS = 60;

  /** Requests to {@code /work} wait for this to open. */
  final CountDownLatch gate = new CountDownLatch(1);

  /** Requests in {@code /work} now, and the most ever at once. */
  final AtomicInteger atWork = new AtomicInteger();

  final AtomicInteger worst = new AtomicInteger();

  /** Requests in {@code /work} now per {@code tenant} parameter, and the most ever at once. */
  final Map<String, AtomicInteger> atWorkByTenant = new ConcurrentHashMap<>();

  final Map<String, AtomicInteger> worstByTenant = new ConcurrentHashMap<>();

  /** Async requests started and not finished by the servlet, for the test to finish. */
  final BlockingQueue<AsyncContext> pending = new LinkedBlockingQueue<>();

  /** A permit for each dispatch of each type that returned through the probe filter. */
  final Map<DispatcherType, Semaphore> returned = new ConcurrentHashMap<>();

  /** The thread of each {@code REQUEST} dispatch now inside the probe, by its {@code id}. */
  final Map<String, Thread> threads = new ConcurrentHashMap<>();

  /** How many dispatches came back through the probe with their thread interrupted. */
  final AtomicInteger interrupted = new AtomicInteger();

  final HttpServlet servlet =
      new HttpServlet() {
        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response)
            throws IOException, ServletException {
          switch (request.getRequestURI()) {
            case "/work" -> work(request, response);
            case "/throw" -> throw new ServletException("the handler failed");
            case "/async" -> startAsync(request);
            case "/async-work" -> startAsyncWork(request);
            case "/dispatch" -> dispatch(request, response);
            case "/on-timeout" -> workOnTimeout(request);
            case "/large" -> writeLarge(response);
            case "/health" -> response.getWriter().print("up");
            default -> response.sendError(HttpServletResponse.SC_NOT_FOUND);
          }
        }
      };

  /**
   * The outermost filter: records how each dispatch went through the rest of the chain; with {@code
   * ?commit}, commits the response before it.
   */
  final Filter probe =
      (request, response, chain) -> {
        DispatcherType type = request.getDispatcherType();
        String id = request.getParameter("id");
        if (type == DispatcherType.REQUEST && id != null) {
          threads.put(id, Thread.currentThread());
        }
        if (type == DispatcherType.REQUEST && request.getParameter("commit") != null) {
          response.flushBuffer(); // as a filter that streams early would
        }
        try {
          chain.doFilter(request, response);
        } finally {
          if (id != null) {
            threads.remove(id);
          }
          if (Thread.interrupted()) { // cleared: the container's thread goes back to its pool
            interrupted.incrementAndGet();
          }
          returned.computeIfAbsent(type, t -> new Semaphore(0)).release();
        }
      };

  private void work(HttpServletRequest request, HttpServletResponse response) throws IOException {
    begin();
    String tenant = request.getParameter("tenant");
    AtomicInteger ofTenant =
        atWorkByTenant.computeIfAbsent(tenant == null ? "" : tenant, t -> new AtomicInteger());
    worstByTenant
        .computeIfAbsent(tenant == null ? "" : tenant, t -> new AtomicInteger())
        .accumulateAndGet(ofTenant.incrementAndGet(), Math::max);
    try {
      if (request.getParameter("short") != null) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // some work, not a wait
      } else if (!gate.await(GUARD_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the gate never opened");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      ofTenant.decrementAndGet();
      atWork.decrementAndGet();
    }
    response.getWriter().print("ok");
  }

  private void startAsync(HttpServletRequest request) {
    begin();
    AsyncContext async = request.startAsync();
    String timeout = request.getParameter("timeout");
    async.setTimeout(timeout == null ? 0 : Long.parseLong(timeout));
    async.addListener(new AtWorkUntilDone());
    pending.add(async);
  }

  /** Sends 1 GiB, a MiB at a time: to a client that reads nothing, a write soon blocks. */
  private void writeLarge(HttpServletResponse response) throws IOException {
    begin();
    try {
      byte[] mib = new byte[1 << 20];
      response.setContentLengthLong(1024L * mib.length);
      OutputStream out = response.getOutputStream();
      for (int i = 0; i < 1024; i++) {
        out.write(mib);
      }
    } finally {
      atWork.decrementAndGet();
    }
  }

  private void startAsyncWork(HttpServletRequest request) {
    AsyncContext async = request.startAsync();
    async.setTimeout(Long.parseLong(request.getParameter("timeout")));
    if (request.getParameter("fail") != null) {
      async.start(
          () -> {
            throw new IllegalStateException("the work failed");
          });
      return;
    }
    async.start(
        () -> {
          gatedWork();
          completeQuietly(async);
        });
  }

  /** At work until {@link #gate} opens. */
  private void gatedWork() {
    begin();
    try {
      if (!gate.await(GUARD_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the gate never opened");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      atWork.decrementAndGet();
    }
  }

  /**
   * Ends an async request's time at work on its first event. Added before the admission filter's
   * listener (during the dispatch, not after it), it hears each event first, so the count drops
   * before the ticket comes back and another request can be admitted.
   */
  private final class AtWorkUntilDone implements AsyncListener {
    private final AtomicBoolean ended = new AtomicBoolean();

    private void end() {
      if (ended.compareAndSet(false, true)) {
        atWork.decrementAndGet();
      }
    }

    @Override
    public void onComplete(AsyncEvent event) {
      end();
    }

    @Override
    public void onTimeout(AsyncEvent event) {
      end();
    }

    @Override
    public void onError(AsyncEvent event) {
      end();
    }

    @Override
    public void onStartAsync(AsyncEvent event) {}
  }

  private void begin() {
    worst.accumulateAndGet(atWork.incrementAndGet(), Math::max);
  }

  private void dispatch(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    if (request.getDispatcherType() == DispatcherType.REQUEST) {
      request.startAsync().dispatch();
    } else if (request.getParameter("again") != null) {
      pending.add(request.startAsync());
    } else if (request.getParameter("timeout") != null) {
      startAsyncWork(request);
    } else {
      response.getWriter().print("dispatched");
    }
  }

  private void workOnTimeout(HttpServletRequest request) throws IOException {
    if (request.getDispatcherType() == DispatcherType.ASYNC) {
      gatedWork(); // the work the timeout dispatched to
      return;
    }
    AsyncContext async = request.startAsync();
    async.setTimeout(Long.parseLong(request.getParameter("timeout")));
    boolean dispatch = request.getParameter("dispatch") != null;
    async.addListener(
        new AsyncListener() {
          @Override
          public void onTimeout(AsyncEvent event) {
            AsyncContext timedOut = event.getAsyncContext();
            if (dispatch) {
              timedOut.dispatch();
              return;
            }
            CountDownLatch running = new CountDownLatch(1);
            timedOut.start( // Tomcat 11 refuses it: IllegalStateException, TIMING_OUT
                () -> {
                  running.countDown();
                  gatedWork();
                  completeQuietly(timedOut);
                });
            // A listener that neither completes nor dispatches gets the container's error
            // dispatch as soon as it returns, and Jetty may then recycle the request before
            // the task it was given has started, which then never runs (seen on a loaded
            // machine): this app holds on until its work runs.
            try {
              running.await(GUARD_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }

          @Override
          public void onComplete(AsyncEvent event) {}

          @Override
          public void onError(AsyncEvent event) {}

          @Override
          public void onStartAsync(AsyncEvent event) {}
        });
  }

  /** Waits for the next dispatch of {@code type} to come back out through the probe. */
  void awaitReturned(DispatcherType type) throws InterruptedException {
    Semaphore s = returned.computeIfAbsent(type, t -> new Semaphore(0));
    if (!s.tryAcquire(GUARD_SECONDS, TimeUnit.SECONDS)) {
      throw new AssertionError("no " + type + " dispatch returned");
    }
  }

  /** Takes the next async request the servlet left pending. */
  AsyncContext takePending() throws InterruptedException {
    AsyncContext async = pending.poll(GUARD_SECONDS, TimeUnit.SECONDS);
    if (async == null) {
      throw new AssertionError("no async request became pending");
    }
    return async;
  }

  /** Answers {@code body} to a pending async request and completes it. */
  static void finish(AsyncContext async, String body) throws IOException {
    async.getResponse().getWriter().print(body);
    async.complete();
  }

  /**
   * Completes {@code async} unless the container ended it already (a timeout, an error), in which
   * case it may be recycled: Tomcat then throws {@code IllegalStateException}, Jetty 12.1 a {@code
   * NullPointerException}.
   */
  static void completeQuietly(AsyncContext async) {
    try {
      async.complete();
    } catch (RuntimeException e) {
      // ended already
    }
  }

  /** Waits until {@code condition} holds; fails, naming what it awaited, after the hang guard. */
  static void awaitTrue(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GUARD_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what);
      }
      LockSupport.parkNanos(100_000); // leaves the core to the threads awaited
    }
  }

  /** The async work writing on after its client went away, until the write fails. */
  static void writeUntilFailure(AsyncContext async) {
    byte[] chunk = new byte[1024];
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GUARD_SECONDS);
    try {
      while (System.nanoTime() - deadline < 0) {
        OutputStream out = async.getResponse().getOutputStream();
        out.write(chunk);
        out.flush();
      }
      throw new AssertionError("writing to a closed connection never failed");
    } catch (IOException | IllegalStateException e) {
      // the connection is gone (or the container completed the request already): expected
    }
    completeQuietly(async);
  }
}
