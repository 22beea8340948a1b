package dev.jeton.http.servlet;

import dev.jeton.http.Ticket;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Holds the ticket of an asynchronous request until the request ends, and ends the ticket once.
 *
 * <p>The container calls a listener's methods from its own threads, possibly more than one of
 * them for the same request: {@code onTimeout} and then {@code onComplete} (the container
 * completes a request that timed out), {@code onError} and then {@code onComplete}, or a
 * completion racing a timeout. The first event decides how the ticket ends ({@code ended} is set
 * by one compare-and-set, and only its winner touches the ticket); the others do nothing.
 *
 * <p>Each {@code startAsync} begins a new asynchronous cycle whose context starts with no
 * listeners, and tells the old ones through {@code onStartAsync}: the listener adds itself to the
 * new context there, so a request that is dispatched and started again keeps its one ticket.
 */
final class TicketListener implements AsyncListener {
  private final Ticket ticket;
  private final AtomicBoolean ended = new AtomicBoolean();

  private TicketListener(Ticket ticket) {
    this.ticket = ticket;
  }

  /**
   * Leaves {@code ticket} to a listener on {@code request}'s async context, which the caller saw
   * started; returns false, the ticket untouched, if the request left async mode in the meantime
   * (another thread completed or dispatched it before the listener could be added).
   *
   * <p>Called on the thread of the request's original dispatch, before it returns to the
   * container: the container defers the effect of {@code complete()} and {@code dispatch()} until
   * then (Servlet 6.1, 2.3.3.3), so no event can be missed once the listener is added.
   */
  static boolean holdUntilDone(HttpServletRequest request, Ticket ticket) {
    try {
      request.getAsyncContext().addListener(new TicketListener(ticket));
      return true;
    } catch (IllegalStateException e) {
      return false;
    }
  }

  @Override
  public void onComplete(AsyncEvent event) {
    if (ended.compareAndSet(false, true)) {
      ticket.close();
    }
  }

  @Override
  public void onTimeout(AsyncEvent event) {
    if (ended.compareAndSet(false, true)) {
      ticket.dropped();
    }
  }

  @Override
  public void onError(AsyncEvent event) {
    if (ended.compareAndSet(false, true)) {
      ticket.abandon();
    }
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    if (!ended.get()) {
      event.getAsyncContext().addListener(this);
    }
  }
}
