package dev.jeton.http.jdk;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Decision;
import dev.jeton.http.Rejection;
import dev.jeton.http.Ticket;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A {@link Filter} for the JDK's {@code com.sun.net.httpserver.HttpServer} that admits or rejects
 * each exchange with an {@link AdmissionControl}.
 *
 * <pre>{@code
 * AdmissionControl<HttpExchange> control =
 *     AdmissionControl.<HttpExchange>builder().limit(64).build();
 * HttpContext context = server.createContext("/", handler);
 * context.getFilters().add(new AdmissionFilter(control));
 * }</pre>
 *
 * <p>An admitted exchange goes down the chain holding its ticket, with the {@linkplain
 * AdmissionControl#rateLimitHeaders rate-limit headers} (if asked for) set on its response, which
 * is closed when the chain returns, or abandoned if it throws (the handler's failure says nothing
 * about capacity). A handler that hands its exchange to another thread to answer later would
 * release the permit too early: with this server, answer within the handler. A client that never
 * reads its response keeps the handler's write blocked, and the permit taken, until the server
 * gives up on it, which it does only with {@code -Dsun.net.httpserver.maxRspTime=<seconds>} set.
 *
 * <p>A rejected exchange gets, by default, the rejection's status (503 or 429), a {@code
 * Retry-After} header in whole seconds, the rejection's other {@linkplain Rejection#headers()
 * headers} (a rate limit's {@code RateLimit-Policy} and {@code RateLimit}), {@code Content-Type:
 * text/plain; charset=utf-8} and a short body naming the reason; a {@link RejectionHandler} given
 * to the constructor writes its own response instead. In queued mode, the server thread waits in
 * the filter while the exchange is queued, so give the server an executor with more threads than
 * the limit.
 */
public final class AdmissionFilter extends Filter {

  /** Writes the response to a rejected exchange, and closes the exchange. */
  @FunctionalInterface
  public interface RejectionHandler {
    /** Answers {@code exchange}, rejected for {@code rejection}. */
    void reject(HttpExchange exchange, Rejection rejection) throws IOException;
  }

  private final AdmissionControl<HttpExchange> control;
  private final RejectionHandler onRejection;

  /** A filter that answers rejections with {@link #writeRejection(HttpExchange, Rejection)}. */
  public AdmissionFilter(AdmissionControl<HttpExchange> control) {
    this(control, AdmissionFilter::writeRejection);
  }

  /** A filter that answers rejections with {@code onRejection}. */
  public AdmissionFilter(AdmissionControl<HttpExchange> control, RejectionHandler onRejection) {
    this.control = Objects.requireNonNull(control, "control");
    this.onRejection = Objects.requireNonNull(onRejection, "onRejection");
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    Decision decision;
    try {
      decision = control.admit(exchange);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      InterruptedIOException failure = new InterruptedIOException("interrupted while queued");
      failure.initCause(e);
      throw failure;
    }
    if (decision instanceof Rejection rejection) {
      onRejection.reject(exchange, rejection);
      return;
    }
    Ticket ticket = (Ticket) decision;
    boolean completed = false;
    try {
      if (!ticket.exempt()) { // inside the try: a key function that throws abandons the ticket
        control.rateLimitHeaders(exchange).forEach(exchange.getResponseHeaders()::set);
      }
      chain.doFilter(exchange);
      completed = true;
    } finally {
      if (completed) {
        ticket.close();
      } else {
        ticket.abandon();
      }
    }
  }

  /**
   * The default answer to a rejection: its status, {@code Retry-After}, its headers, {@code
   * Content-Type: text/plain; charset=utf-8} and {@link Rejection#message()} as the body (none for
   * {@code HEAD}); then closes the exchange.
   */
  public static void writeRejection(HttpExchange exchange, Rejection rejection) throws IOException {
    try (exchange) {
      exchange.getRequestBody().close();
      byte[] body = rejection.message().getBytes(StandardCharsets.UTF_8);
      String retryAfter = Long.toString(rejection.retryAfterSeconds());
      exchange.getResponseHeaders().set("Retry-After", retryAfter);
      rejection.headers().forEach(exchange.getResponseHeaders()::set);
      exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      boolean head = "HEAD".equalsIgnoreCase(exchange.getRequestMethod());
      exchange.sendResponseHeaders(rejection.status(), head ? -1 : body.length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    }
  }

  @Override
  public String description() {
    return "Jeton admission control: " + control;
  }
}
