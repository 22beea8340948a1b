package dev.jeton.http;

import dev.jeton.AdaptiveLimit;
import dev.jeton.Permit;
import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.ReleaseOnce;
import org.jspecify.annotations.Nullable;

/**
 * An admitted request: it holds a permit of its {@link AdmissionControl} until it is closed. Close
 * it exactly when the response is done, with one of {@link #close()} (the work completed), {@link
 * #dropped()} (it failed from overload) or {@link #abandon()} (it says nothing about the server's
 * capacity). The first of the three gives the permit back; later calls, from any thread, do
 * nothing.
 *
 * <p>An exempt request gets a ticket too, which holds nothing: {@link #exempt()} is true and
 * closing it does nothing.
 */
public final class Ticket extends ReleaseOnce implements Decision, AutoCloseable {
  // The ticket ends once (ReleaseOnce). The permit under it keeps its own once: it comes from any
  // Semaphore and can end without the ticket (a Redis lease lost), and the ticket must still count
  // how it was closed and end its sample.

  /** How a ticket ended; the adaptive limit takes the first as a latency sample. */
  enum Outcome {
    SUCCESS,
    DROPPED,
    ABANDONED
  }

  private static final Ticket EXEMPT = new Ticket(null, null, 0, null);

  private final @Nullable Permit permit; // null: exempt
  private final @Nullable Ledger ledger;
  private final long admittedNanos;
  private final AdaptiveLimit.@Nullable Sample sample; // null: no adaptive limit, or exempt

  private Ticket(
      @Nullable Permit permit,
      @Nullable Ledger ledger,
      long admittedNanos,
      AdaptiveLimit.@Nullable Sample sample) {
    super(permit == null ? 0 : permit.permits());
    this.permit = permit;
    this.ledger = ledger;
    this.admittedNanos = admittedNanos;
    this.sample = sample;
  }

  /**
   * A ticket holding {@code permit}, recorded in {@code ledger}, admitted now; with an adaptive
   * limit, the sample of its work begins now.
   */
  static Ticket admitted(
      Permit permit,
      Ledger ledger,
      AdaptiveLimit.@Nullable Sample sample,
      @Nullable LeakTracker leaks) {
    long admittedNanos = System.nanoTime();
    Ticket ticket = new Ticket(permit, ledger, admittedNanos, sample);
    if (leaks != null && leaks.watches()) {
      // the give-back holds what the ticket holds, not the ticket, which must become unreachable
      leaks.watch(
          ticket,
          "ticket",
          ticket.held(),
          leaks.releasesLeaked()
              ? () -> giveBack(permit, ledger, admittedNanos, sample, Outcome.ABANDONED)
              : null);
    }
    return ticket;
  }

  /** The ticket of exempt requests: holds nothing, so one serves them all. */
  static Ticket exemptTicket() {
    return EXEMPT;
  }

  /** The work completed: gives the permit back; its latency is a sample for an adaptive limit. */
  @Override
  public void close() {
    finish(Outcome.SUCCESS);
  }

  /**
   * The work failed because of overload (an async timeout, a 503 from downstream): gives the permit
   * back, and tells an adaptive limit that the server is congested.
   */
  public void dropped() {
    finish(Outcome.DROPPED);
  }

  /**
   * The request ended without saying anything about capacity (the handler threw, the client went
   * away): gives the permit back, and is not a sample for an adaptive limit.
   */
  public void abandon() {
    finish(Outcome.ABANDONED);
  }

  /** Whether the request was exempt from the limit; such a ticket holds nothing. */
  public boolean exempt() {
    return permit == null;
  }

  /** Whether the ticket was closed, by any of the three ways. */
  boolean isClosed() {
    return isEnded();
  }

  private void finish(Outcome outcome) {
    Permit p = permit;
    Ledger c = ledger;
    if (p == null || c == null || !end()) {
      return;
    }
    giveBack(p, c, admittedNanos, sample, outcome);
  }

  /**
   * Ends the sample, then gives the permit back: the controller never counts fewer in flight than
   * the semaphore holds. Whatever happens to the sample, the permit goes back.
   */
  private static void giveBack(
      Permit permit,
      Ledger ledger,
      long admittedNanos,
      AdaptiveLimit.@Nullable Sample sample,
      Outcome outcome) {
    try {
      endSample(sample, outcome);
    } finally {
      ledger.finished(permit, System.nanoTime() - admittedNanos, outcome);
    }
  }

  private static void endSample(AdaptiveLimit.@Nullable Sample s, Outcome outcome) {
    if (s == null) {
      return;
    }
    switch (outcome) {
      case SUCCESS -> s.success();
      case DROPPED -> s.dropped();
      case ABANDONED -> s.ignore();
    }
  }

  @Override
  public String toString() {
    return exempt() ? "Ticket[exempt]" : "Ticket[" + (isEnded() ? "closed" : "open") + "]";
  }
}
