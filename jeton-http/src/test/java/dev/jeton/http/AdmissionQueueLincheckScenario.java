package dev.jeton.http;

import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * An {@link AdmissionControl} in queued mode with priorities (limit 2, a queue of 2, under a
 * semaphore the test can inspect): requests are admitted, their tickets closed, their futures
 * cancelled and their waits timed out (by the test, through the timeout hook), from several threads
 * in every interleaving the model checker tries. The results must be linearizable, and after each
 * run the state must be one no sequence of operations could leave leaky or stuck: every permit is
 * free or in an open ticket, never more tickets than the limit, and a request is queued only while
 * every permit is taken and the queue's one pump waits at the semaphore.
 *
 * <p>No operation reads a decision without acting on it: between the moment a request is taken out
 * of the queue to be decided (its timeout) and the moment its future completes, its place is free
 * but its decision not yet visible, so a bare read could see it undecided after an operation that
 * relied on the free place: not linearizable, and harmless. {@code closeTicket} acts on it, and is.
 *
 * <p>{@code close()} is checked apart, in {@link AdmissionQueueCloseLincheckTest}: it rejects the
 * queued requests one after the other, outside the lock (their futures' callbacks must not run
 * under it), so a cancellation racing with it may withdraw a request that, were close atomic, would
 * have been rejected: not linearizable, and harmless (the request gets no ticket either way).
 */
@Param(name = "priority", gen = IntGen.class, conf = "0:2")
@Param(name = "request", gen = IntGen.class, conf = "0:5")
@Param(name = "later", gen = IntGen.class, conf = "2:5") // a request made by an operation
public abstract class AdmissionQueueLincheckScenario {
  private static final int LIMIT = 2;
  private static final int REQUESTS = 32; // more than any scenario makes

  private static final Duration MAX_WAIT = Duration.ofHours(1);

  private final Semaphore semaphore;
  private final AtomicReferenceArray<Runnable> armed = new AtomicReferenceArray<>(REQUESTS);
  private final AtomicInteger made = new AtomicInteger();
  private final AtomicReferenceArray<CompletableFuture<Decision>> decisions =
      new AtomicReferenceArray<>(REQUESTS);
  private final AdmissionControl<Integer> control;
  private int arming = -1; // the request whose timeout is being armed; under `this`

  /**
   * With {@code mayBlock}, over a semaphore not of Jeton's core, asked through the control's calls
   * (made inline here: answered at once) rather than directly; their timers never fire.
   */
  protected AdmissionQueueLincheckScenario(boolean mayBlock) {
    semaphore = mayBlock ? new FailingSemaphore(LIMIT) : Semaphore.create(LIMIT);
    AdmissionControl.Builder<Integer> builder =
        AdmissionControl.<Integer>builder()
            .semaphore(semaphore)
            .queue(2, MAX_WAIT)
            .priority(p -> p, Duration.ofSeconds(1))
            .ticker(() -> 0) // priorities without aging: a deterministic order
            .timeouts(
                (expire, nanos) -> {
                  if (nanos == MAX_WAIT.toNanos()) {
                    armed.set(arming, expire);
                  }
                  return new CompletableFuture<>();
                });
    control = builder.build();
    // Requests 0 and 1 take both permits, so that the scenarios start where queueing,
    // withdrawal and hand-over happen.
    admit(0);
    admit(0);
  }

  /** Makes the next request; its index. One at a time, so index order is arrival order. */
  @Operation
  public synchronized int admit(@Param(name = "priority") int priority) {
    int request = made.getAndIncrement();
    arming = request;
    decisions.set(request, control.admitAsync(priority));
    return request;
  }

  /** Closes the request's ticket, if it has one; whether it did. */
  @Operation
  public boolean closeTicket(@Param(name = "request") int request) {
    CompletableFuture<Decision> f = decisions.get(request);
    if (f != null && f.isDone() && !f.isCancelled() && f.join() instanceof Ticket t) {
      t.close();
      return true;
    }
    return false;
  }

  /**
   * Cancels the request's future. Its result is not compared: the test publishes a request's future
   * only once admit returns, while admit's effects (pushing out an older request) are visible
   * before, so a cancel could find no future for a request already in the queue.
   */
  @Operation
  public void cancel(@Param(name = "later") int request) {
    CompletableFuture<Decision> f = decisions.get(request);
    if (f != null) {
      f.cancel(false);
    }
  }

  /** Fires the request's maxWait, if it queued. */
  @Operation
  public void timeOut(@Param(name = "later") int request) {
    Runnable expire = armed.get(request);
    if (expire != null) {
      expire.run();
    }
  }

  @Validate
  public void check() {
    checkState(control, semaphore, decisions);
  }

  /** Model-checks {@code scenario} as both tests do. */
  static void modelCheck(Class<? extends AdmissionQueueLincheckScenario> scenario) {
    new ModelCheckingOptions()
        .iterations(25)
        .invocationsPerIteration(40)
        .threads(3)
        .actorsPerThread(2)
        .check(scenario);
  }

  /** The state after a run: see the class comment. */
  static void checkState(
      AdmissionControl<Integer> control,
      Semaphore semaphore,
      AtomicReferenceArray<CompletableFuture<Decision>> decisions) {
    int inFlight = control.inFlight();
    int queued = control.queued();
    if (inFlight > LIMIT) {
      throw new IllegalStateException(inFlight + " tickets open, above the limit " + LIMIT);
    }
    if (semaphore.available() + inFlight != LIMIT) {
      throw new IllegalStateException(
          "permits lost or double-counted: "
              + semaphore.available()
              + " free, "
              + inFlight
              + " in flight, "
              + control);
    }
    if (queued > 0 && (inFlight != LIMIT || semaphore.queueLength() != 1)) {
      throw new IllegalStateException(
          "a request is queued but no permit is awaited: "
              + control
              + ", semaphore queue "
              + semaphore.queueLength());
    }
    if (queued == 0 && semaphore.queueLength() != 0) {
      throw new IllegalStateException("nothing queued but the semaphore is still asked");
    }
    int undecided = 0;
    for (int i = 0; i < decisions.length(); i++) {
      CompletableFuture<Decision> f = decisions.get(i);
      if (f != null && !f.isDone()) {
        undecided++;
      }
    }
    if (undecided != queued) {
      throw new IllegalStateException(undecided + " undecided but " + queued + " queued");
    }
  }
}
