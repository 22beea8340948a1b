package dev.jeton.http.servlet;

import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Decision;
import dev.jeton.http.Rejection;
import dev.jeton.http.Ticket;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Jakarta Servlet 6 filter that admits each request through an {@link AdmissionControl} before
 * the rest of the chain runs, and answers the requests it rejects: for Spring MVC, Jetty, Tomcat,
 * Undertow and any other servlet container.
 *
 * <p>An admitted request holds its {@link Ticket} until its response is done:
 *
 * <ul>
 *   <li>a synchronous request until the chain returns: {@link Ticket#close()}, or {@link
 *       Ticket#abandon()} if the chain threw;
 *   <li>an asynchronous request (one whose servlet called {@code startAsync} and did not finish it
 *       before the chain returned) until its {@link jakarta.servlet.AsyncListener} sees the first
 *       of: complete ({@link Ticket#close()}), timeout ({@link Ticket#dropped()}: an overloaded
 *       backend is the usual cause) or error ({@link Ticket#abandon()}: the client went away or the
 *       work failed). A later {@code startAsync} on the same request keeps the ticket.
 * </ul>
 *
 * <p>Either way, the ticket is also held until every task the application gave to {@code
 * AsyncContext.start} has returned, however long after the container answered the client: a
 * container that times a request out cannot stop the work started for it, and the limit counts
 * work, not connections. For that the application sees the request wrapped (its {@code startAsync}
 * and {@code getAsyncContext} return a context that counts the tasks). Work the application runs on
 * threads of its own is counted only until the container is done with the request: stop it when the
 * request times out (an {@code AsyncListener}'s {@code onTimeout}), or run it with {@code
 * AsyncContext.start}. A client that never reads its response holds the permit while the write
 * blocks: the container's write timeout bounds it (Jetty's connector idle timeout, Tomcat's {@code
 * connectionTimeout}).
 *
 * <p>Only {@link DispatcherType#REQUEST} dispatches are limited: the {@code ASYNC} dispatch of
 * {@code AsyncContext.dispatch()}, and {@code FORWARD}, {@code INCLUDE} and {@code ERROR}
 * dispatches, belong to a request admitted (or rejected) already and pass through, so the filter
 * may be mapped for any dispatcher types. It must be registered with async support ({@code
 * asyncSupported = true}) for servlets behind it to start async work.
 *
 * <p>A rejected request gets the {@link Rejection}'s status, a {@code Retry-After} header in
 * seconds, its other {@linkplain Rejection#headers() headers} (a rate limit's {@code
 * RateLimit-Policy} and {@code RateLimit}), and a short {@code text/plain} body naming the reason,
 * unless the response is committed already; or, if one is given, the {@link RejectionHandler}
 * writes it. A thread interrupted while it waits for admission gets a 503 with {@code Retry-After:
 * 1}, its interrupt status restored. Exempt requests pass with a ticket that holds nothing. An
 * admitted request's response gets the {@linkplain AdmissionControl#rateLimitHeaders rate-limit
 * headers}, if asked for, before the chain runs.
 *
 * <p>The filter never closes its {@code AdmissionControl}: whoever built it does, after the server
 * stopped.
 */
public final class AdmissionFilter implements Filter {

  /** Writes the response to a rejected request in place of the default one. */
  @FunctionalInterface
  public interface RejectionHandler {
    /**
     * Answers {@code request}, which {@code rejection} turned away; the chain does not run.
     *
     * @throws IOException if writing the response fails
     */
    void reject(HttpServletRequest request, HttpServletResponse response, Rejection rejection)
        throws IOException;
  }

  /*
   * How a ticket ends. Invariant: every ticket this filter takes is in a TicketHold, which ends
   * it exactly once, when the container is done with the request (the first of three places, and
   * no other, says how) and every task the application gave to AsyncContext.start has returned:
   *   1. the chain threw: abandon(), in the finally of the REQUEST dispatch;
   *   2. the chain returned and the request is not (or no longer) async: close(), same place;
   *   3. the chain returned with async started: the TicketListener added to the async context
   *      says so on the first async event (complete, timeout, error); the filter does not touch
   *      it again. The container fires those events only after this dispatch returned, so none is
   *      lost between isAsyncStarted() and addListener.
   * The application sees the request as an AdmittedRequest, whose AsyncContext tells the hold of
   * each task. Later dispatches of the same request (ASYNC, ERROR, FORWARD, INCLUDE) are not
   * admitted again, so a request never takes a second ticket; they are wrapped again with the
   * hold, found in a request attribute of this filter's, so that their tasks are held for too.
   */

  /** The body of the 503 answered when the thread is interrupted while it waits for admission. */
  private static final String INTERRUPTED = "server busy (interrupted); retry after 1 s\n";

  /** Numbers the filters, for their request attributes. */
  private static final AtomicLong FILTERS = new AtomicLong();

  private final AdmissionControl<HttpServletRequest> control;
  private final RejectionHandler rejectionHandler;
  // The hold of a request this filter admitted, one name per filter: with two filters (a global
  // limit and an endpoint's), each follows its own ticket.
  private final String holdAttribute = TicketHold.class.getName() + "@" + FILTERS.incrementAndGet();

  /** A filter that admits requests through {@code control} and writes the default rejections. */
  public AdmissionFilter(AdmissionControl<HttpServletRequest> control) {
    this(control, AdmissionFilter::writeRejection);
  }

  /**
   * A filter that admits requests through {@code control}; {@code rejectionHandler} answers the
   * rejected ones.
   */
  public AdmissionFilter(
      AdmissionControl<HttpServletRequest> control, RejectionHandler rejectionHandler) {
    this.control = Objects.requireNonNull(control, "control");
    this.rejectionHandler = Objects.requireNonNull(rejectionHandler, "rejectionHandler");
  }

  /**
   * Admits a {@code REQUEST} dispatch of an HTTP request, or answers it with a rejection; passes
   * anything else through unlimited.
   */
  @Override
  public void doFilter(ServletRequest req, ServletResponse resp, FilterChain chain)
      throws IOException, ServletException {
    if (req.getDispatcherType() != DispatcherType.REQUEST
        || !(req instanceof HttpServletRequest request)
        || !(resp instanceof HttpServletResponse response)) {
      passOn(req, resp, chain);
      return;
    }
    Decision decision;
    try {
      decision = control.admit(request);
    } catch (InterruptedException e) {
      // The interrupt status is restored only once the answer is written: a container's blocking
      // write may fail on an interrupted thread (Tomcat's does, and drops the connection).
      try {
        write(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, 1, Map.of(), INTERRUPTED);
      } finally {
        Thread.currentThread().interrupt();
      }
      return;
    }
    if (decision instanceof Rejection rejection) {
      rejectionHandler.reject(request, response, rejection);
      return;
    }
    Ticket ticket = (Ticket) decision;
    if (ticket.exempt()) {
      chain.doFilter(request, response); // it holds nothing: no listener, nothing to close
      return;
    }
    TicketHold hold = new TicketHold(ticket);
    request.setAttribute(holdAttribute, hold);
    boolean returned = false;
    try {
      // inside the try: a key function that throws abandons the ticket
      control.rateLimitHeaders(request).forEach(response::setHeader);
      chain.doFilter(new AdmittedRequest(request, hold), response);
      returned = true;
    } finally {
      if (!returned) {
        hold.requestEnded(Ticket::abandon);
      } else if (!request.isAsyncStarted() || !TicketListener.holdUntilDone(request, hold)) {
        hold.requestEnded(Ticket::close);
      }
    }
  }

  /**
   * A later dispatch (ASYNC, ERROR...) of a request this filter admitted holds its ticket while it
   * runs, and is wrapped again, so that the tasks its application starts there are held for too;
   * anything else passes unlimited.
   */
  private void passOn(ServletRequest req, ServletResponse resp, FilterChain chain)
      throws IOException, ServletException {
    if (!(req.getAttribute(holdAttribute) instanceof TicketHold hold
        && req instanceof HttpServletRequest http
        && hold.taskStarted())) {
      chain.doFilter(req, resp);
      return;
    }
    try {
      chain.doFilter(new AdmittedRequest(http, hold), resp);
    } finally {
      hold.taskEnded();
    }
  }

  /** The default answer to a rejected request: the one {@link Rejection} describes. */
  static void writeRejection(
      HttpServletRequest request, HttpServletResponse response, Rejection rejection)
      throws IOException {
    write(
        response,
        rejection.status(),
        rejection.retryAfterSeconds(),
        rejection.headers(),
        rejection.message());
  }

  private static void write(
      HttpServletResponse response,
      int status,
      long retryAfterSeconds,
      Map<String, String> headers,
      String message)
      throws IOException {
    if (response.isCommitted()) {
      return; // status and headers are sent already: nothing better to do than stop here
    }
    byte[] body = message.getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
    headers.forEach(response::setHeader);
    response.setContentType("text/plain;charset=UTF-8");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}
