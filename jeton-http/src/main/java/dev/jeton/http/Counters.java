package dev.jeton.http;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** The counts behind {@link AdmissionStats}: each one updated without a lock. */
final class Counters {
  private final LongAdder admitted = new LongAdder();
  private final LongAdder exempted = new LongAdder();
  private final LongAdder[] rejected = new LongAdder[Reason.values().length];
  private final LongAdder[] ended = new LongAdder[Ticket.Outcome.values().length];
  private final LongAdder dequeued = new LongAdder();
  private final LongAdder queueWaitNanos = new LongAdder();
  private final AtomicLong maxQueueWaitNanos = new AtomicLong();

  Counters() {
    for (int i = 0; i < rejected.length; i++) {
      rejected[i] = new LongAdder();
    }
    for (int i = 0; i < ended.length; i++) {
      ended[i] = new LongAdder();
    }
  }

  void admitted() {
    admitted.increment();
  }

  void exempted() {
    exempted.increment();
  }

  void rejected(Reason reason) {
    rejected[reason.ordinal()].increment();
  }

  /** A ticket holding a permit ended, the first of its endings. */
  void ended(Ticket.Outcome outcome) {
    ended[outcome.ordinal()].increment();
  }

  /** A request left the queue after waiting {@code nanos}. */
  void dequeued(long nanos) {
    long wait = Math.max(0, nanos);
    dequeued.increment();
    queueWaitNanos.add(wait);
    maxQueueWaitNanos.accumulateAndGet(wait, Math::max);
  }

  AdmissionStats snapshot() {
    Map<Reason, Long> byReason = new EnumMap<>(Reason.class);
    for (Reason reason : Reason.values()) {
      byReason.put(reason, rejected[reason.ordinal()].sum());
    }
    return new AdmissionStats(
        admitted.sum(),
        exempted.sum(),
        byReason,
        dequeued.sum(),
        Duration.ofNanos(queueWaitNanos.sum()),
        Duration.ofNanos(maxQueueWaitNanos.get()),
        ended[Ticket.Outcome.SUCCESS.ordinal()].sum(),
        ended[Ticket.Outcome.DROPPED.ordinal()].sum(),
        ended[Ticket.Outcome.ABANDONED.ordinal()].sum());
  }
}
