package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.LeakDetection;
import dev.jeton.contract.LeakLog;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A ticket dropped unclosed (a handler that lost it) is reported through {@code System.Logger},
 * read here through {@code java.util.logging}; its permit stays taken unless the builder asks for
 * it back, and then the control admits again.
 */
class TicketLeakTest {
  private final List<LeakLog.Logged> reports = new CopyOnWriteArrayList<>();
  private Runnable stopListening = () -> {};

  @BeforeEach
  void listen() {
    stopListening = LeakLog.listen("dev.jeton.leak", "a ticket of admission control", reports::add);
  }

  @AfterEach
  void stopListening() {
    stopListening.run();
  }

  @Test
  void aDroppedTicket_isReportedOnce_andItsPermitStaysTakenByDefault() throws Exception {
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().limit(1).leakDetection(LeakDetection.PARANOID).build();
    admitAndDrop(control);

    LeakLog.collectUntil(() -> !reports.isEmpty());
    LeakLog.assertKeptReport(
        reports.get(0), "Jeton: a ticket of admission control was never released: 1 permit held");
    assertEquals(1, control.inFlight(), "still in flight");
    assertInstanceOf(Rejection.class, control.admit("next"), "the limit is still taken");
    assertEquals(1, reports.size(), "one leak, one report (the control's semaphore is unwatched)");
  }

  @Test
  void releaseLeaked_givesThePermitBack_asAbandonWould() throws Exception {
    AdmissionControl<String> control =
        AdmissionControl.<String>builder()
            .limit(1)
            .leakDetection(LeakDetection.PARANOID)
            .releaseLeaked(true)
            .build();
    admitAndDrop(control);

    // the ledger counts the ticket out before the permit goes back: wait for an admission
    LeakLog.collectUntil(
        () -> {
          Decision next = control.admitAsync("next").join(); // best effort: at once
          if (next instanceof Ticket ticket) {
            ticket.close();
            return true;
          }
          return false;
        });
    assertTrue(reports.get(0).message().contains("Its permits are given back now."));
    assertEquals(0, control.inFlight());
  }

  @Test
  void closedTickets_areNeverReported() throws Exception {
    AdmissionControl<String> control =
        AdmissionControl.<String>builder().limit(1).leakDetection(LeakDetection.PARANOID).build();
    for (int i = 0; i < 100; i++) {
      Ticket ticket = (Ticket) control.admit("r" + i);
      if (i % 2 == 0) {
        ticket.close();
      } else {
        ticket.abandon();
      }
    }
    for (int i = 0; i < 5; i++) {
      LeakLog.collectOnce();
    }
    assertTrue(reports.isEmpty(), "no closed ticket is reported: " + reports);
  }

  /** Admits a request and drops its ticket, in a frame of its own so nothing keeps it. */
  private static void admitAndDrop(AdmissionControl<String> control) throws InterruptedException {
    assertInstanceOf(Ticket.class, control.admit("dropped"));
  }
}
