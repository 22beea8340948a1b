package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.jeton.Permit;
import dev.jeton.Semaphore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

/**
 * A ticket ends once by its own flag, not by its permit's: a permit can end without the ticket (a
 * Redis lease is lost, and its release then does nothing), and the ticket's close must still be
 * counted and lower the requests in flight. Guards against making the ticket share its permit's
 * release-once flag (decision 9X, the release-once base).
 */
class TicketEndsOnItsOwnTest {

  @Test
  void aPermitEndedUnderTheTicket_stillLetsTheTicketCloseAndCount() throws Exception {
    Semaphore real = Semaphore.create(1);
    ConcurrentLinkedQueue<Permit> granted = new ConcurrentLinkedQueue<>();
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().semaphore(recording(real, granted)).build();

    Ticket ticket = assertInstanceOf(Ticket.class, control.admit("/a"));
    Permit permit = granted.remove();
    permit.release(); // the grant ends on its own, as a lost lease does
    ticket.close();
    ticket.dropped();

    assertEquals(0, control.inFlight());
    assertEquals(1, control.stats().ticketsClosed());
    assertEquals(0, control.stats().ticketsDropped());
    assertEquals(1, real.available());
  }

  /** {@code real}, seen through another class, adding every permit it grants to {@code granted}. */
  private static Semaphore recording(Semaphore real, ConcurrentLinkedQueue<Permit> granted) {
    return (Semaphore)
        Proxy.newProxyInstance(
            Semaphore.class.getClassLoader(),
            new Class<?>[] {Semaphore.class},
            (proxy, method, args) -> {
              Object result;
              try {
                result = method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (result instanceof Optional<?> maybe && maybe.orElse(null) instanceof Permit p) {
                granted.add(p);
              } else if (result instanceof CompletableFuture<?> future) {
                // recorded before the caller's own stages see the permit
                return future.thenApply(
                    value -> {
                      if (value instanceof Permit p) {
                        granted.add(p);
                      }
                      return value;
                    });
              }
              return result;
            });
  }
}
