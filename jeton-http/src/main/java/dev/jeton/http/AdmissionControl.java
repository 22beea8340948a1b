package dev.jeton.http;

import dev.jeton.KeyedSemaphore;
import dev.jeton.Permit;
import dev.jeton.Semaphore;
import dev.jeton.SemaphoreClosedException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Decides, for each request of type {@code R}, to admit it or reject it, so that a server works
 * on no more requests at once than it can really serve and answers the rest at once. Thread-safe.
 *
 * <pre>{@code
 * AdmissionControl<HttpExchange> control =
 *     AdmissionControl.<HttpExchange>builder()
 *         .limit(64)
 *         .exempt(exchange -> exchange.getRequestURI().getPath().equals("/health"))
 *         .build();
 * }</pre>
 *
 * <p>{@link #admit(Object)} returns a {@link Decision}: a {@link Ticket}, which holds one permit
 * of the limit until it is closed (close it exactly when the response is done), or a {@link
 * Rejection}, with the status to answer (503, or 429 if so configured), a {@code Retry-After} and
 * the {@link Reason}.
 *
 * <h2>Modes</h2>
 *
 * <ul>
 *   <li><b>Best effort</b> (the default): a request is admitted if a permit is free at once, and
 *       rejected with {@link Reason#LIMIT_REACHED} otherwise.
 *   <li><b>Exemptions</b>: requests matching {@link Builder#exempt(Predicate)} are always
 *       admitted, with a ticket that holds nothing, even after {@link #close()}.
 * </ul>
 *
 * <h2>Retry-After</h2>
 *
 * <p>A rejection's {@code Retry-After} is estimated from the observed drain rate, the number of
 * requests completed per second: {@code ceil((queued ahead + 1) / rate)} seconds, clamped to [1
 * s, {@link Builder#maxRetryAfter(Duration) maxRetryAfter}], where "queued ahead" is the number
 * of requests waiting in front of the rejected one (0 in best-effort mode), and {@code rate =
 * busy / latency}: the permits held now (at least 1) over the smoothed mean time a ticket is
 * held (an exponentially weighted mean of completed tickets, of every outcome, updated at most
 * every 100 ms). With no completion observed yet, 1 s. The rate is taken from the latency (by
 * Little's law) rather than by counting completions over a window so that an idle period does
 * not make the first rejections of a spike send clients away for the maximum.
 *
 * <h2>The semaphore</h2>
 *
 * <p>The limit is a {@link Semaphore}: an in-process one made from {@link Builder#limit(int)}, or
 * any one given to {@link Builder#semaphore(Semaphore)}, which may be shared with other users,
 * machine-wide or fleet-wide; each admitted request holds one permit of it. A given semaphore is
 * never closed by this class.
 */
public final class AdmissionControl<R> implements AutoCloseable {
  /*
   * Overview
   *
   * Best effort: admit = tryAcquire(1) on the semaphore (a key's semaphore when partitioned); a
   * permit makes a Ticket, no permit a Rejection. A ticket gives its permit back through
   * finished(), exactly once (the Ticket's CAS), which first lowers `inFlight` and records the
   * time the permit was held for the Retry-After estimate, and only then releases the permit, so
   * that inFlight never shows more tickets than permits are held.
   *
   * Invariants:
   *   A1. inFlight = tickets admitted with a permit and not yet finished (exempt ones hold
   *       nothing and are not counted).
   *   A2. Every permit taken for a request is either in a Ticket handed out, or released.
   */

  private final Semaphore semaphore;
  private final @Nullable Predicate<? super R> exempt;
  private final int rejectionStatus;
  private final long maxRetryAfterSeconds;
  private final DrainEstimate drain = new DrainEstimate(System::nanoTime);
  private final Counters counters = new Counters();
  private final AtomicInteger inFlight = new AtomicInteger();
  private volatile boolean closed;

  private AdmissionControl(Builder<R> b, Semaphore semaphore) {
    this.semaphore = semaphore;
    this.exempt = b.exempt;
    this.rejectionStatus = b.rejectionStatus;
    this.maxRetryAfterSeconds = b.maxRetryAfterSeconds;
  }

  /** Returns a builder; a limit or a semaphore is required. */
  public static <R> Builder<R> builder() {
    return new Builder<>();
  }

  // ------------------------------------------------------------------ deciding

  /**
   * Admits or rejects {@code request}. In best-effort mode it returns at once.
   *
   * @throws InterruptedException if the thread is interrupted while the request waits in the
   *     queue; the request is withdrawn
   */
  public Decision admit(R request) throws InterruptedException {
    Objects.requireNonNull(request, "request");
    if (isExempt(request)) {
      counters.exempted();
      return Ticket.exemptTicket();
    }
    return tryAdmit();
  }

  /**
   * Admits or rejects {@code request} without blocking: the future completes when the request is
   * admitted or rejected (at once in best-effort mode). Cancelling the future withdraws the
   * request; a ticket granted at the same moment is given back.
   */
  public CompletableFuture<Decision> admitAsync(R request) {
    Objects.requireNonNull(request, "request");
    if (isExempt(request)) {
      counters.exempted();
      return CompletableFuture.completedFuture(Ticket.exemptTicket());
    }
    return CompletableFuture.completedFuture(tryAdmit());
  }

  private boolean isExempt(R request) {
    Predicate<? super R> e = exempt;
    return e != null && e.test(request);
  }

  /** Best effort: a ticket if a permit is free now, else a rejection. */
  private Decision tryAdmit() {
    if (closed) {
      return reject(Reason.CLOSED, 0);
    }
    Optional<Permit> permit;
    try {
      permit = semaphore.tryAcquire(1);
    } catch (SemaphoreClosedException e) {
      return reject(Reason.CLOSED, 0);
    } catch (IllegalArgumentException limitZero) { // a given semaphore's limit set to 0
      permit = Optional.empty();
    }
    return permit.isPresent() ? admitted(permit.get()) : reject(Reason.LIMIT_REACHED, 0);
  }

  private Ticket admitted(Permit permit) {
    inFlight.incrementAndGet();
    counters.admitted();
    return Ticket.admitted(permit, this);
  }

  private Rejection reject(Reason reason, int ahead) {
    counters.rejected(reason);
    long seconds = drain.retryAfterSeconds(inFlight.get(), ahead, maxRetryAfterSeconds);
    return new Rejection(rejectionStatus, Duration.ofSeconds(seconds), reason);
  }

  /** Called once per ticket that holds a permit, by the first of its close methods. */
  void finished(Permit permit, long heldNanos, Ticket.Outcome outcome) {
    inFlight.decrementAndGet();
    drain.completed(heldNanos);
    permit.release();
  }

  // ------------------------------------------------------------------ inspection and closing

  /** The number of admitted tickets open now, each holding a permit (exempt ones not counted). */
  public int inFlight() {
    return inFlight.get();
  }

  /** The number of requests waiting in the queue now; always 0 in best-effort mode. */
  public int queued() {
    return 0;
  }

  /** What was admitted and rejected since this control was built. */
  public AdmissionStats stats() {
    return counters.snapshot();
  }

  /**
   * Rejects queued and new requests with {@link Reason#CLOSED} (exempt ones still pass). Open
   * tickets stay valid and give their permits back when closed. Closing twice does nothing.
   */
  @Override
  public void close() {
    closed = true;
  }

  @Override
  public String toString() {
    return "AdmissionControl[semaphore=" + semaphore + ", inFlight=" + inFlight.get()
        + (closed ? ", closed" : "") + "]";
  }

  /**
   * Builds an {@link AdmissionControl}. Each setter checks its argument at once and throws
   * {@link IllegalArgumentException} naming a bad value; {@link #build()} throws {@link
   * IllegalStateException} for a combination that cannot work.
   */
  public static final class Builder<R> {
    private int limit; // 0: not set
    private @Nullable Semaphore semaphore;
    private @Nullable Predicate<? super R> exempt;
    private int rejectionStatus = 503;
    private long maxRetryAfterSeconds = 30;
    private int maxQueue; // 0: best effort
    private @Nullable Duration maxWait;
    private boolean lifo;
    private @Nullable ToIntFunction<? super R> priority;
    private @Nullable Duration aging;
    private @Nullable Function<? super R, ?> partitionKey;
    private int limitPerKey;

    private Builder() {}

    /**
     * At most {@code limit} requests admitted at once, under an in-process FIFO semaphore of its
     * own. This or {@link #semaphore(Semaphore)} is required, except with {@link
     * #partitionBy(Function, int)}, where it is the optional global limit.
     *
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    public Builder<R> limit(int limit) {
      this.limit = checkAtLeastOne("limit", limit);
      return this;
    }

    /**
     * Admits requests under {@code semaphore}, each admitted request holding one of its permits.
     * It may be shared (a {@code RedisSemaphore} makes the limit fleet-wide), and is never closed
     * by the control.
     */
    public Builder<R> semaphore(Semaphore semaphore) {
      this.semaphore = Objects.requireNonNull(semaphore, "semaphore");
      return this;
    }

    /**
     * Queued mode: a request that finds no permit free waits at most {@code maxWait} in a queue
     * of at most {@code maxQueue} requests, then is rejected ({@link Reason#QUEUE_TIMEOUT},
     * {@link Reason#QUEUE_FULL}). The default is best effort: no queue.
     *
     * @throws IllegalArgumentException if {@code maxQueue} is below 1 or {@code maxWait} is not
     *     positive
     */
    public Builder<R> queue(int maxQueue, Duration maxWait) {
      checkAtLeastOne("maxQueue", maxQueue);
      checkPositive("maxWait", maxWait);
      this.maxQueue = maxQueue;
      this.maxWait = maxWait;
      return this;
    }

    /** Queued mode serves the newest request first (the default is the oldest first). */
    public Builder<R> lifo() {
      this.lifo = true;
      return this;
    }

    /**
     * When requests queue, higher {@code priority} values go first; a request that has waited
     * {@code aging} ranks like one queued now one priority higher (two periods, two higher), so
     * low priorities are not starved.
     *
     * @throws IllegalArgumentException if {@code aging} is not positive
     */
    public Builder<R> priority(ToIntFunction<? super R> priority, Duration aging) {
      this.priority = Objects.requireNonNull(priority, "priority");
      this.aging = checkPositive("aging", aging);
      return this;
    }

    /**
     * A limit of {@code limitPerKey} per key, {@code key} a function of the request (the client
     * address, a tenant header); {@link #limit(int)} then becomes an optional global limit across
     * all keys. The key must not be {@code null}.
     *
     * @throws IllegalArgumentException if {@code limitPerKey} is below 1
     */
    public Builder<R> partitionBy(Function<? super R, ?> key, int limitPerKey) {
      this.partitionKey = Objects.requireNonNull(key, "key");
      this.limitPerKey = checkAtLeastOne("limitPerKey", limitPerKey);
      return this;
    }

    /** Requests matching {@code exempt} are never limited (health checks, metrics). */
    public Builder<R> exempt(Predicate<? super R> exempt) {
      this.exempt = Objects.requireNonNull(exempt, "exempt");
      return this;
    }

    /**
     * The status of rejections: 503 Service Unavailable (the default) or 429 Too Many Requests.
     *
     * @throws IllegalArgumentException for any other status
     */
    public Builder<R> rejectionStatus(int status) {
      if (status != 503 && status != 429) {
        throw new IllegalArgumentException("rejectionStatus must be 503 or 429, was " + status);
      }
      this.rejectionStatus = status;
      return this;
    }

    /**
     * The cap of the Retry-After estimate (default 30 s), rounded up to whole seconds.
     *
     * @throws IllegalArgumentException if {@code max} is below 1 second
     */
    public Builder<R> maxRetryAfter(Duration max) {
      Objects.requireNonNull(max, "max");
      if (max.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException("maxRetryAfter must be at least 1 s, was " + max);
      }
      this.maxRetryAfterSeconds = new Rejection(503, max, Reason.CLOSED).retryAfterSeconds();
      return this;
    }

    /**
     * Builds the control.
     *
     * @throws IllegalStateException unless exactly one of a limit and a semaphore was set
     */
    public AdmissionControl<R> build() {
      Semaphore given = semaphore;
      if ((limit == 0) == (given == null)) {
        throw new IllegalStateException(
            "set exactly one of limit(int) and semaphore(Semaphore) before build(), "
                + (given == null ? "neither was set" : "both were set"));
      }
      if (maxQueue > 0 || partitionKey != null) {
        throw new IllegalStateException("queued mode and partitions are not built yet");
      }
      if (lifo || priority != null) {
        throw new IllegalStateException(
            (lifo ? "lifo()" : "priority(...)")
                + " orders the queue: set queue(maxQueue, maxWait) too");
      }
      return new AdmissionControl<>(this, given != null ? given : Semaphore.create(limit));
    }

    private static int checkAtLeastOne(String name, int value) {
      if (value < 1) {
        throw new IllegalArgumentException(name + " must be at least 1, was " + value);
      }
      return value;
    }

    private static Duration checkPositive(String name, Duration value) {
      Objects.requireNonNull(value, name);
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + value);
      }
      return value;
    }
  }
}
