package dev.jeton.http.servlet;

import dev.jeton.http.Ticket;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Holds an admitted request's ticket until the container is done with the request and every task
 * its application started with {@code AsyncContext.start} has returned, then ends it the way the
 * container ended the request.
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
   * `holders` is 1 for the request until the container is done with it (requestEnded), plus one
   * per task started and not returned. Whoever takes it to 0 ends the ticket, with `ending`, set
   * once by the first requestEnded before its decrement, so it is set when read.
   *
   * Invariants:
   *   H1. holders = (request not ended ? 1 : 0) + tasks running, and never rises from 0: a task
   *       started after the ticket ended is not held for.
   *   H2. The ticket is ended exactly once, when holders reaches 0, the way `ending` says.
   */

  private final Ticket ticket;
  private final AtomicInteger holders = new AtomicInteger(1);
  private final AtomicReference<@Nullable Consumer<Ticket>> ending = new AtomicReference<>();

  TicketHold(Ticket ticket) {
    this.ticket = ticket;
  }

  /**
   * The container is done with the request: the ticket ends {@code how} (close, dropped, abandon)
   * once no task runs. Only the first call counts.
   */
  void requestEnded(Consumer<Ticket> how) {
    if (ending.compareAndSet(null, how)) {
      release();
    }
  }

  /** A task of the request starts; false if the ticket has ended already (it is not held for). */
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

  /** A task for which {@link #taskStarted()} returned true has returned. */
  void taskEnded() {
    release();
  }

  private void release() {
    if (holders.decrementAndGet() == 0) {
      Objects.requireNonNull(ending.get(), "set before the request's holder went").accept(ticket);
    }
  }
}
