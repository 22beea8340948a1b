package dev.jeton.http;

import dev.jeton.AdaptiveLimit;
import dev.jeton.Semaphore;
import dev.jeton.internal.engine.Deadlines;
import dev.jeton.internal.engine.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Decides, for each request of type {@code R}, to admit it or reject it, so that a server works on
 * no more requests at once than it can really serve and answers the rest at once. Thread-safe.
 *
 * <pre>{@code
 * AdmissionControl<HttpExchange> control =
 *     AdmissionControl.<HttpExchange>builder()
 *         .limit(64)
 *         .exempt(exchange -> exchange.getRequestURI().getPath().equals("/health"))
 *         .build();
 * }</pre>
 *
 * <p>{@link #admit(Object)} returns a {@link Decision}: a {@link Ticket}, which holds one permit of
 * the limit until it is closed (close it exactly when the response is done), or a {@link
 * Rejection}, with the status to answer (503, or 429 if so configured), a {@code Retry-After} and
 * the {@link Reason}.
 *
 * <h2>Modes</h2>
 *
 * <ul>
 *   <li><b>Best effort</b> (the default): a request is admitted if a permit is free at once, and
 *       rejected with {@link Reason#LIMIT_REACHED} otherwise.
 *   <li><b>Queued</b> ({@link Builder#queue(int, Duration)}): a request that finds no permit free
 *       waits in a bounded queue for at most {@code maxWait}, then is rejected with {@link
 *       Reason#QUEUE_TIMEOUT}; it leaves the queue at once. A full queue rejects with {@link
 *       Reason#QUEUE_FULL}. The queue is served first come first served; {@link Builder#lifo()}
 *       serves the newest first, and then a newcomer to a full queue pushes out the oldest (whose
 *       client has waited longest, and is the likeliest to be gone); {@link
 *       Builder#priority(ToIntFunction, Duration)} serves higher priorities first, with aging, and
 *       a newcomer to a full queue pushes out the lowest-ranked if it ranks higher. The queue is in
 *       front of the semaphore: however many requests wait, the semaphore sees one request at a
 *       time, which suits a remote one.
 *   <li><b>Partitions</b> ({@link Builder#partitionBy(Function, int)}): a limit per key (the client
 *       address, a tenant header), with {@link Builder#limit(int)} as an optional global limit, on
 *       a {@link dev.jeton.KeyedSemaphore}. Queued, each key has a queue of its own of at most
 *       {@code maxQueue}, first come first served (LIFO and priorities are not offered with
 *       partitions), and all keys together at most {@link Builder#maxQueuedTotal(int)
 *       maxQueuedTotal}, 16 times {@code maxQueue} unless set, since the keys come from the client.
 *   <li><b>A rate per key</b> ({@link Builder#rateLimit(Function, dev.jeton.KeyedRateLimiter)}),
 *       checked before the limit: a request over its key's rate is rejected at once with {@link
 *       Reason#RATE_LIMITED} (429, with {@code RateLimit} headers); one the limit then refuses gets
 *       its weight back.
 *   <li><b>Exemptions</b>: requests matching {@link Builder#exempt(Predicate)} are always admitted,
 *       with a ticket that holds nothing, even after {@link #close()}.
 * </ul>
 *
 * <h2>Retry-After</h2>
 *
 * <p>A rejection's {@code Retry-After} is estimated from the observed drain rate, the number of
 * requests completed per second: {@code ceil((queued ahead + 1) / rate)} seconds, clamped to [1 s,
 * {@link Builder#maxRetryAfter(Duration) maxRetryAfter}], where "queued ahead" is the number of
 * requests waiting in front of the rejected one (0 in best-effort mode), and {@code rate = busy /
 * latency}: the permits held now (at least 1) over the smoothed mean time a ticket is held (an
 * exponentially weighted mean of completed tickets, of every outcome, updated at most every 100
 * ms). With no completion observed yet, 1 s. The rate is taken from the latency (by Little's law)
 * rather than by counting completions over a window so that an idle period does not make the first
 * rejections of a spike send clients away for the maximum.
 *
 * <h2>The semaphore</h2>
 *
 * <p>The limit is a {@link Semaphore}: an in-process one made from {@link Builder#limit(int)}, or
 * any one given to {@link Builder#semaphore(Semaphore)}, which may be shared with other users,
 * machine-wide or fleet-wide; each admitted request holds one permit of it. A given semaphore is
 * never closed by this class.
 *
 * <p>A semaphore not made by Jeton's core may be remote, so it is never called on the caller's
 * thread, nor on a thread that waits for it: it is asked through its asynchronous API, {@code
 * acquireAsync(1, Duration.ZERO)} (a try: granted at once if a permit is free, else a {@code
 * TimeoutException}; any number may be in flight), and no request waits longer than a bound for its
 * answer: {@link Builder#semaphoreTimeout(Duration) semaphoreTimeout} (1 s unless set) in
 * best-effort mode, its {@code maxWait} in queued mode. One that does not answer in time (a frozen
 * server) rejects with {@link Reason#UNAVAILABLE}, and while that call stays unanswered new
 * requests are rejected so at once, without asking. A semaphore that fails (a server out of reach:
 * its try fails, or times out with a cause, which says why it could not answer) rejects the request
 * it was for with {@code UNAVAILABLE}. Queued, such a semaphore is asked for each request that
 * finds no one queued, and, while requests wait, at least every semaphore timeout or half {@code
 * maxWait} (whichever is shorter), since its {@code acquireAsync} may retry without end: a failure
 * rejects the request its permit would have gone to, the others one by one while it lasts, and a
 * request that times out while the semaphore fails or is silent is {@code UNAVAILABLE}, not {@code
 * QUEUE_TIMEOUT}. {@code UNAVAILABLE} is always 503, with a {@code Retry-After} as usual. A closed
 * semaphore rejects with {@link Reason#CLOSED}, and one whose limit was lowered below 1 with {@link
 * Reason#LIMIT_REACHED}, its failure unwrapped from any {@code CompletionException} or {@code
 * ExecutionException}. The failures behind {@code UNAVAILABLE} are logged at {@code WARNING}
 * through the {@link System.Logger} named after this class, at most once every 10 seconds, each
 * line with the latest failure and the number of requests rejected since the previous line; {@link
 * #stats()} counts them all.
 */
public final class AdmissionControl<R> implements AutoCloseable {
  /*
   * Overview
   *
   * Each request is, in this order: exempt (a ticket holding nothing); refused if closed; refused
   * by its key's rate limit, if any (RateCheck, which takes back its weight if what follows does
   * not admit it); then admitted or rejected under its semaphore (SemaphoreAdmission: at once, or after waiting in
   * the AdmissionQueue in front of it) or, partitioned, its key's (Partitions). A waiter completes with a permit (a Ticket), a refusal (a Rejection naming the
   * reason), or a cancellation (admitAsync's future cancelled, admit interrupted: no decision).
   * A permit whose caller has gone meanwhile becomes a ticket that is abandoned at once.
   *
   * What is in flight, what was decided and how to answer a rejection are the Ledger's, shared
   * with the queue and the partitions.
   *
   * Invariant A2: every permit granted for a request is in exactly one Ticket, which is handed
   * out or abandoned, or it is released: see AdmissionQueue's Q5 for the queue's hand-over.
   */

  /** How long a request waits at most for a semaphore that may block, unless set. */
  static final Duration DEFAULT_SEMAPHORE_TIMEOUT = Duration.ofSeconds(1);

  /** Partitioned and queued, the requests waiting across keys are at most this many maxQueue. */
  static final int DEFAULT_QUEUES_IN_TOTAL = 16;

  private final @Nullable SemaphoreAdmission single; // not partitioned
  private final @Nullable Partitions partitions;
  private final @Nullable Function<? super R, ?> partitionKey;
  private final @Nullable ToIntFunction<? super R> priority;
  private final @Nullable Duration maxWait; // null: best effort
  private final @Nullable Predicate<? super R> exempt;
  private final @Nullable RateCheck<R, ?> rate;
  private final Ledger ledger;
  private volatile boolean closed;

  private AdmissionControl(Builder<R> b) {
    this.maxWait = b.maxWait;
    this.partitionKey = b.partitionKey;
    this.priority = b.priority;
    this.exempt = b.exempt;
    this.rate = b.rateCheck();
    this.ledger =
        new Ledger(b.adaptive, b.rejectionStatus, b.maxRetryAfterSeconds, b.ticketTracker());
    if (b.partitionKey != null) {
      this.single = null;
      int total =
          b.maxQueuedTotal != 0
              ? b.maxQueuedTotal
              : (int) Math.min(Integer.MAX_VALUE, (long) DEFAULT_QUEUES_IN_TOTAL * b.maxQueue);
      this.partitions = new Partitions(ledger, b.limitPerKey, b.limit, b.maxQueue, total);
    } else {
      AdaptiveLimit a = b.adaptive;
      Semaphore given = a != null ? a.semaphore() : b.semaphore;
      Semaphore s = given != null ? given : LeakOptions.ownSemaphore(b.limit);
      Deadlines timer = b.timeouts;
      this.single =
          new SemaphoreAdmission(ledger, s, b, timer != null ? timer : Timer.shared(), b.aging);
      this.partitions = null;
    }
  }

  /** Returns a builder; a limit or a semaphore is required. */
  public static <R> Builder<R> builder() {
    return new Builder<>();
  }

  // ------------------------------------------------------------------ deciding

  /**
   * Admits or rejects {@code request}. In best-effort mode it returns at once (over a semaphore
   * that may be remote, within its {@code semaphoreTimeout}); in queued mode it waits at most
   * {@code maxWait}.
   *
   * @throws InterruptedException if the thread is interrupted while the request waits in the queue;
   *     the request is withdrawn (a ticket granted at the same moment is given back)
   */
  public Decision admit(R request) throws InterruptedException {
    CompletableFuture<Decision> decision = admitAsync(request);
    if (decision.isDone()) {
      return decision.join();
    }
    try {
      return decision.get();
    } catch (InterruptedException e) {
      if (!decision.cancel(false) && decision.join() instanceof Ticket won) {
        won.abandon(); // admitted as we were interrupted: withdrawn all the same
      }
      throw e;
    } catch (ExecutionException e) {
      throw new IllegalStateException("a decision cannot fail", e.getCause());
    }
  }

  /**
   * Admits or rejects {@code request} without blocking: the future completes when the request is
   * admitted or rejected (at once in best-effort mode, unless the semaphore may be remote: see
   * {@link AdmissionControl}). Cancelling the future withdraws the request; a ticket granted at the
   * same moment is given back. In queued mode, completing it ({@code complete}, {@code
   * completeExceptionally}, and so {@code orTimeout} and {@code completeOnTimeout}) withdraws the
   * request as well, and such a decision is not counted in {@link #stats()}; these and {@code
   * cancel} return false once the request has been taken out of the queue to be decided: its
   * decision is then on its way, and a ticket in it must be closed as usual. The queued future
   * refuses {@code obtrudeValue}, {@code obtrudeException} and {@code completeAsync}, which would
   * bypass that rule.
   *
   * <p>In queued mode the future may be completed by the thread that closed the ticket which freed
   * the permit, or by a timer thread; over a semaphore that may be remote (not Jeton core's), by
   * the thread that completes its future, in either mode: its dependent stages should not block (or
   * should run on an executor of their own). Such a semaphore's future obeys the rules of a queued
   * one above, in best-effort mode too.
   */
  public CompletableFuture<Decision> admitAsync(R request) {
    Objects.requireNonNull(request, "request");
    Predicate<? super R> e = exempt;
    if (e != null && e.test(request)) {
      ledger.exempted();
      return CompletableFuture.completedFuture(Ticket.exemptTicket());
    }
    if (closed) {
      return CompletableFuture.completedFuture(ledger.reject(Reason.CLOSED, 0, 0));
    }
    RateCheck<R, ?> r = rate;
    return r == null ? limit(request) : r.admit(request, ledger, this::limit);
  }

  /** The concurrency limit's decision for {@code request}. */
  private CompletableFuture<Decision> limit(R request) {
    Partitions p = partitions;
    if (p != null) {
      Object key =
          Objects.requireNonNull(
              Objects.requireNonNull(partitionKey).apply(request),
              "the partitionBy key function returned null");
      return p.admit(key, maxWait);
    }
    ToIntFunction<? super R> rank = priority;
    return Objects.requireNonNull(single).admit(rank == null ? 0 : rank.applyAsInt(request));
  }

  /**
   * The {@code RateLimit-Policy} and {@code RateLimit} headers for the response to {@code request},
   * admitted: its key's quota now. Empty without a rate limit, or unless {@link
   * Builder#rateLimitHeaders} asked for them; the adapters add them to every admitted response.
   */
  public Map<String, String> rateLimitHeaders(R request) {
    RateCheck<R, ?> r = rate;
    return r == null ? Map.of() : r.admittedHeaders(request);
  }

  // ------------------------------------------------------------------ inspection and closing

  /** The number of admitted tickets open now, each holding a permit (exempt ones not counted). */
  public int inFlight() {
    return ledger.inFlight();
  }

  /**
   * The limit now: its semaphore's limit (with an adaptive limit, the value the controller set
   * last); with partitions, the global limit, or empty if there is none. For a remote semaphore
   * this may be a round trip.
   */
  public OptionalInt limit() {
    SemaphoreAdmission s = single;
    if (s != null) {
      return OptionalInt.of(s.semaphore().limit());
    }
    return Objects.requireNonNull(partitions).globalLimit();
  }

  /** The number of requests waiting in the queue now; always 0 in best-effort mode. */
  public int queued() {
    SemaphoreAdmission s = single;
    return s != null ? s.queued() : Objects.requireNonNull(partitions).queued();
  }

  /** The partitions, if partitioned; for tests. */
  @Nullable Partitions partitions() {
    return partitions;
  }

  /** What was admitted and rejected, and how tickets ended, since this control was built. */
  public AdmissionStats stats() {
    return ledger.stats();
  }

  /**
   * Rejects queued and new requests with {@link Reason#CLOSED} (exempt ones still pass). Open
   * tickets stay valid and give their permits back when closed. A semaphore given to the builder is
   * not closed. Closing twice does nothing.
   */
  @Override
  public void close() {
    closed = true;
    SemaphoreAdmission s = single;
    if (s != null) {
      s.close();
    }
    Partitions p = partitions;
    if (p != null) {
      p.close();
    }
  }

  @Override
  public String toString() {
    Object limit = partitions != null ? partitions : single;
    return "AdmissionControl["
        + limit
        + ", inFlight="
        + ledger.inFlight()
        + ", queued="
        + queued()
        + (closed ? ", closed" : "")
        + "]";
  }

  /**
   * Builds an {@link AdmissionControl}. Each setter checks its argument at once and throws {@link
   * IllegalArgumentException} naming a bad value; {@link #build()} throws {@link
   * IllegalStateException} for a combination that cannot work.
   */
  public static final class Builder<R> extends RejectionOptions<R, Builder<R>> {
    // Read by BuilderChecks, in this package.
    int limit; // 0: not set
    @Nullable Semaphore semaphore;
    @Nullable AdaptiveLimit adaptive;
    @Nullable Predicate<? super R> exempt;
    int maxQueue; // 0: best effort
    @Nullable Duration maxWait;
    boolean lifo;
    @Nullable ToIntFunction<? super R> priority;
    @Nullable Duration aging;
    @Nullable Function<? super R, ?> partitionKey;
    int limitPerKey;
    int maxQueuedTotal; // 0: the default
    Duration semaphoreTimeout = DEFAULT_SEMAPHORE_TIMEOUT;
    LongSupplier ticker = System::nanoTime;
    @Nullable Deadlines timeouts;

    private Builder() {}

    /**
     * At most {@code limit} requests admitted at once, under an in-process FIFO semaphore of its
     * own. This or {@link #semaphore(Semaphore)} is required, except with {@link
     * #partitionBy(Function, int)}, where it is the optional global limit.
     *
     * @throws IllegalArgumentException if {@code limit} is below 1 or above 2<sup>30</sup>-1, the
     *     largest limit of a semaphore
     */
    public Builder<R> limit(int limit) {
      this.limit = BuilderChecks.checkLimit("limit", limit);
      return this;
    }

    /**
     * Admits requests under {@code semaphore}, each admitted request holding one of its permits. It
     * may be shared (a {@code RedisSemaphore} makes the limit fleet-wide), and is never closed by
     * the control.
     */
    public Builder<R> semaphore(Semaphore semaphore) {
      this.semaphore = Objects.requireNonNull(semaphore, "semaphore");
      return this;
    }

    /**
     * The limit follows {@code adaptive} (jeton-core's {@link AdaptiveLimit}): its semaphore backs
     * the control, in place of {@link #limit(int)} or {@link #semaphore(Semaphore)}, and each
     * admitted request is one of its samples, begun at admission and ended by the ticket: {@link
     * Ticket#close()} as a success (its latency counts), {@link Ticket#dropped()} as a drop, {@link
     * Ticket#abandon()} as no sample. Rejected and exempt requests are never samples, so their
     * near-zero latencies cannot drag the estimate. Not with {@link #partitionBy(Function, int)}.
     */
    public Builder<R> adaptive(AdaptiveLimit adaptive) {
      this.adaptive = Objects.requireNonNull(adaptive, "adaptive");
      return this;
    }

    /**
     * Queued mode: a request that finds no permit free waits at most {@code maxWait} in a queue of
     * at most {@code maxQueue} requests, then is rejected ({@link Reason#QUEUE_TIMEOUT}, {@link
     * Reason#QUEUE_FULL}). The default is best effort: no queue.
     *
     * @throws IllegalArgumentException if {@code maxQueue} is below 1 or {@code maxWait} is not
     *     positive
     */
    public Builder<R> queue(int maxQueue, Duration maxWait) {
      BuilderChecks.checkAtLeastOne("maxQueue", maxQueue);
      BuilderChecks.checkPositive("maxWait", maxWait);
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
     * {@code aging} ranks like one queued now one priority higher (two periods, two higher), so low
     * priorities are not starved.
     *
     * @throws IllegalArgumentException if {@code aging} is not positive
     */
    public Builder<R> priority(ToIntFunction<? super R> priority, Duration aging) {
      this.priority = Objects.requireNonNull(priority, "priority");
      this.aging = BuilderChecks.checkPositive("aging", aging);
      return this;
    }

    /**
     * A limit of {@code limitPerKey} per key, {@code key} a function of the request (the client
     * address, a tenant header); {@link #limit(int)} then becomes an optional global limit across
     * all keys. The key must not be {@code null}.
     *
     * @throws IllegalArgumentException if {@code limitPerKey} is below 1 or above 2<sup>30</sup>-1,
     *     the largest limit of a semaphore
     */
    public Builder<R> partitionBy(Function<? super R, ?> key, int limitPerKey) {
      this.partitionKey = Objects.requireNonNull(key, "key");
      this.limitPerKey = BuilderChecks.checkLimit("limitPerKey", limitPerKey);
      return this;
    }

    /**
     * Partitioned and queued ({@link #partitionBy(Function, int)} and {@link #queue(int,
     * Duration)}): at most {@code maxQueuedTotal} requests wait across all keys, each key still at
     * most {@code maxQueue}; a request beyond either bound is rejected with {@link
     * Reason#QUEUE_FULL}. The keys come from the client, so without this bound the requests waiting
     * would grow with the number of distinct keys. The default is 16 times {@code maxQueue}:
     * sixteen keys can fill their queues at once, and no more.
     *
     * @throws IllegalArgumentException if {@code maxQueuedTotal} is below 1
     */
    public Builder<R> maxQueuedTotal(int maxQueuedTotal) {
      this.maxQueuedTotal = BuilderChecks.checkAtLeastOne("maxQueuedTotal", maxQueuedTotal);
      return this;
    }

    /**
     * How long a request waits at most for a semaphore that may be remote (any not made by Jeton's
     * core, such as a {@code RedisSemaphore}) to answer, before it is rejected with {@link
     * Reason#UNAVAILABLE}; 1 s unless set. Queued, a request waits at most {@code maxWait} in all,
     * and a call unanswered for this long or half {@code maxWait}, whichever is shorter, counts as
     * unanswered. See {@link AdmissionControl} on such semaphores.
     *
     * @throws IllegalArgumentException if {@code timeout} is not positive
     */
    public Builder<R> semaphoreTimeout(Duration timeout) {
      this.semaphoreTimeout = BuilderChecks.checkPositive("timeout", timeout);
      return this;
    }

    /** Requests matching {@code exempt} are never limited (health checks, metrics). */
    public Builder<R> exempt(Predicate<? super R> exempt) {
      this.exempt = Objects.requireNonNull(exempt, "exempt");
      return this;
    }

    /** The clock that aging reads, in nanoseconds; for tests. */
    Builder<R> ticker(LongSupplier nanoTime) {
      this.ticker = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /** What fires a queued request's maxWait (default: a shared timer thread); for tests. */
    Builder<R> timeouts(Deadlines timeouts) {
      this.timeouts = Objects.requireNonNull(timeouts, "timeouts");
      return this;
    }

    /**
     * Builds the control.
     *
     * @throws IllegalStateException for a combination that cannot work: not exactly one of a limit,
     *     a semaphore and an adaptive limit (without partitions); an adaptive limit with
     *     partitions; {@code partitionBy} with a semaphore (its keyed semaphore is in-process;
     *     {@code limit} is the global limit); {@code lifo()} or {@code priority(...)} without a
     *     queue; {@code lifo()} with {@code priority(...)} (aging favours the oldest, LIFO the
     *     newest); {@code lifo()} or {@code priority(...)} with partitions (partitioned requests
     *     wait FIFO in their key's semaphore); {@code maxQueuedTotal(n)} without both partitions
     *     and a queue
     */
    public AdmissionControl<R> build() {
      BuilderChecks.checkCombination(this);
      return new AdmissionControl<>(this);
    }
  }
}
