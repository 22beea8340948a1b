package dev.jeton.http;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * Counts of what an {@link AdmissionControl} decided since it was built, and of how its tickets
 * ended, taken by {@link AdmissionControl#stats()}. Each count is exact, but the snapshot as a
 * whole is not atomic. Every admitted ticket ends once, so {@code admitted} is the sum of the three
 * ticket counts and the tickets open ({@link AdmissionControl#inFlight()}), at rest.
 *
 * @param admitted requests admitted with a ticket that holds a permit (exempt ones not counted)
 * @param exempted requests let through by the exemption predicate
 * @param rejected rejections per reason; every reason is present
 * @param dequeued requests that waited in the queue and left it, admitted or rejected
 * @param totalQueueWait the time those {@code dequeued} requests spent in the queue, in all
 * @param maxQueueWait the longest time one of them spent in the queue
 * @param ticketsClosed admitted tickets ended by {@link Ticket#close()} (the work completed)
 * @param ticketsDropped admitted tickets ended by {@link Ticket#dropped()} (failed from overload)
 * @param ticketsAbandoned admitted tickets ended by {@link Ticket#abandon()} (no word on capacity)
 */
public record AdmissionStats(
    long admitted,
    long exempted,
    Map<Reason, Long> rejected,
    long dequeued,
    Duration totalQueueWait,
    Duration maxQueueWait,
    long ticketsClosed,
    long ticketsDropped,
    long ticketsAbandoned) {

  /** Copies {@code rejected}, adding 0 for reasons it lacks. */
  public AdmissionStats {
    Map<Reason, Long> all = new EnumMap<>(Reason.class);
    for (Reason reason : Reason.values()) {
      all.put(reason, Objects.requireNonNull(rejected, "rejected").getOrDefault(reason, 0L));
    }
    rejected = Map.copyOf(all);
    Objects.requireNonNull(totalQueueWait, "totalQueueWait");
    Objects.requireNonNull(maxQueueWait, "maxQueueWait");
  }

  /** The number of requests rejected for {@code reason}. */
  public long rejected(Reason reason) {
    return rejected.getOrDefault(Objects.requireNonNull(reason, "reason"), 0L);
  }

  /** The number of requests rejected, for any reason. */
  public long rejectedTotal() {
    return rejected.values().stream().mapToLong(Long::longValue).sum();
  }

  /** The mean time a request that waited spent in the queue; zero if none did. */
  public Duration meanQueueWait() {
    return dequeued == 0 ? Duration.ZERO : totalQueueWait.dividedBy(dequeued);
  }
}
