package dev.jeton.http.servlet;

import dev.jeton.http.Ticket;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Holds an admitted request's ticket until the request really completes (its last async cycle's
 * {@code onComplete}, or its only dispatch's return), every later dispatch of it has returned and
 * every task its application started with {@code AsyncContext.start} has returned; then ends it the
 * way its first ending event said (a timeout, an error, or completion).
 */
final class TicketHold {
  /*
   * Why the tasks: a container that times an async request out answers the client and completes
   * the request, but cannot stop the work the application started for it, which goes on. Ending
   * the ticket there let new requests in beside the old work: 9 at work under a limit of 2. The
   * tasks given to AsyncContext.start are the work the Servlet API lets a filter see end (the
   * container runs them), so the ticket waits for them. Work on the application's own threads is
   * not seen; a late complete() from it is not waited for either, as it may never come (a task
   * that threw before its complete() would keep the permit for ever).
   *
   * Why onComplete and not the timeout: an application's onTimeout may dispatch the request, and
   * the ASYNC dispatch then does work, or start tasks on the event's context: ending the ticket at
   * the timeout let 3 work under a limit of 2. The container always completes a request after its
   * timeout or error (the application completes or dispatches it, or the container does), so
   * onComplete comes, after every dispatch it makes; onTimeout and onError only say how the ticket
   * ends (dropped, abandon), and the first event to say so decides.
   *
   * `holders` is 1 for the request until it completes (requestEnded), plus one per task or later
   * dispatch running. Whoever takes it to 0 ends the ticket, with `ending`, set by the first of
   * endsAs and requestEnded before the request's holder goes, so it is set when read.
   *
   * Invariants:
   *   H1. holders = (request not completed ? 1 : 0) + tasks and dispatches running, and never
   *       rises from 0: work started after the ticket ended is not held for.
   *   H2. The ticket is ended exactly once, when holders reaches 0, the way `ending` says.
   */

  private final Ticket ticket;
  private final AtomicInteger holders = new AtomicInteger(1);
  private final AtomicReference<@Nullable Consumer<Ticket>> ending = new AtomicReference<>();
  private final AtomicBoolean completed = new AtomicBoolean();

  TicketHold(Ticket ticket) {
    this.ticket = ticket;
  }

  /** How the ticket is to end ({@code dropped}, {@code abandon}), unless an earlier event said. */
  void endsAs(Consumer<Ticket> how) {
    var unused = ending.compareAndSet(null, how);
  }

  /**
   * The request has completed: the ticket ends as the first event said, else {@code how}, once no
   * task or dispatch runs. Only the first call counts.
   */
  void requestEnded(Consumer<Ticket> how) {
    endsAs(how);
    if (completed.compareAndSet(false, true)) {
      release();
    }
  }

  /**
   * A task or a later dispatch of the request starts; false if the ticket has ended already (it is
   * not held for).
   */
  boolean taskStarted() {
    while (true) {
      int h = holders.get();
      if (h == 0) {
        return false;
      }
      if (holders.compareAndSet(h, h + 1)) {
        return true;
      }
    }
  }

  /** A task or dispatch for which {@link #taskStarted()} returned true has returned. */
  void taskEnded() {
    release();
  }

  private void release() {
    if (holders.decrementAndGet() == 0) {
      Objects.requireNonNull(ending.get(), "set before the request's holder went").accept(ticket);
    }
  }
}
