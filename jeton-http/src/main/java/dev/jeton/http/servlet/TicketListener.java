package dev.jeton.http.servlet;

import dev.jeton.http.Ticket;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Tells an asynchronous request's {@link TicketHold} when the container is done with it.
 *
 * <p>The container calls a listener from its own threads, and may call it more than once for one
 * request: {@code onTimeout} and then {@code onComplete} (the container completes a request that
 * timed out, after any dispatch its application made), {@code onError} and then {@code onComplete},
 * or an application's {@code complete()} racing a timeout. The first event decides how the ticket
 * ends; {@code onComplete} lets it end (once the request's tasks and dispatches have returned);
 * this class needs no state of its own for that, because the hold takes the first of each and
 * ignores the later calls.
 *
 * <p>Each {@code startAsync} begins a new asynchronous cycle whose context starts with no listeners
 * and tells the old ones through {@code onStartAsync} (Servlet 6.1, 2.3.3.3): the listener adds
 * itself to the new context there, so a request that is dispatched and started again keeps its one
 * ticket until its last cycle ends.
 */
final class TicketListener implements AsyncListener {
  private final TicketHold hold;

  private TicketListener(TicketHold hold) {
    this.hold = hold;
  }

  /**
   * Leaves {@code hold} to a listener on {@code request}'s async context, which the caller saw
   * started; returns false, the hold untouched, if the request left async mode in the meantime
   * (another thread completed or dispatched it before the listener could be added).
   *
   * <p>Called on the thread of the request's original dispatch, before it returns to the container:
   * the container defers the effect of {@code complete()} and {@code dispatch()} until then, so no
   * event can be missed once the listener is added.
   */
  static boolean holdUntilDone(HttpServletRequest request, TicketHold hold) {
    try {
      request.getAsyncContext().addListener(new TicketListener(hold));
      return true;
    } catch (IllegalStateException e) {
      return false;
    }
  }

  /** The response is done: the work completed. */
  @Override
  public void onComplete(AsyncEvent event) {
    hold.requestEnded(Ticket::close);
  }

  /**
   * The async work took too long: most often an overloaded backend, a congestion signal. The ticket
   * is held still: the application's onTimeout may dispatch, or start tasks.
   */
  @Override
  public void onTimeout(AsyncEvent event) {
    hold.endsAs(Ticket::dropped);
  }

  /** The connection failed (the client went away) or the work did: says nothing of capacity. */
  @Override
  public void onError(AsyncEvent event) {
    hold.endsAs(Ticket::abandon);
  }

  /** A new async cycle of the same request: follow it, or the ticket would never come back. */
  @Override
  public void onStartAsync(AsyncEvent event) {
    event.getAsyncContext().addListener(this);
  }
}
