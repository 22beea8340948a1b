package dev.jeton.http;

import dev.jeton.Semaphore;
import dev.jeton.contract.LincheckRun;
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
 * As {@link AdmissionQueueLincheckScenario}, with {@link AdmissionControl#close()} racing the other
 * operations, in LIFO order (so that newcomers push out the oldest). The operations return nothing
 * (see that class for why close is not linearizable with cancel); what is checked is the state each
 * interleaving leaves: nothing leaked or stuck, and once closed, nothing queued and every request
 * decided.
 */
@Param(name = "request", gen = IntGen.class, conf = "0:5")
@Param(name = "later", gen = IntGen.class, conf = "2:5")
public class AdmissionQueueCloseLincheckTest {
  private static final int LIMIT = 2;
  private static final int REQUESTS = 32; // more than any scenario makes

  private final Semaphore semaphore = Semaphore.create(LIMIT);
  private final AtomicReferenceArray<Runnable> armed = new AtomicReferenceArray<>(REQUESTS);
  private final AtomicInteger made = new AtomicInteger();
  private final AtomicReferenceArray<CompletableFuture<Decision>> decisions =
      new AtomicReferenceArray<>(REQUESTS);
  private final AdmissionControl<Integer> control;
  private volatile boolean closed;
  private int arming = -1; // under `this`

  public AdmissionQueueCloseLincheckTest() {
    control =
        AdmissionControl.<Integer>builder()
            .semaphore(semaphore)
            .queue(2, Duration.ofHours(1))
            .lifo()
            .timeouts(
                (expire, nanos) -> {
                  armed.set(arming, expire);
                  return CompletableFuture.completedFuture(null);
                })
            .build();
    admit();
    admit();
  }

  @Operation
  public synchronized void admit() {
    int request = made.getAndIncrement();
    arming = request;
    decisions.set(request, control.admitAsync(request));
  }

  @Operation
  public void closeTicket(@Param(name = "request") int request) {
    CompletableFuture<Decision> f = decisions.get(request);
    if (f != null && f.isDone() && !f.isCancelled() && f.join() instanceof Ticket t) {
      t.close();
    }
  }

  @Operation
  public void cancel(@Param(name = "later") int request) {
    CompletableFuture<Decision> f = decisions.get(request);
    if (f != null) {
      f.cancel(false);
    }
  }

  @Operation
  public void timeOut(@Param(name = "later") int request) {
    Runnable expire = armed.get(request);
    if (expire != null) {
      expire.run();
    }
  }

  @Operation
  public void close() {
    control.close();
    closed = true;
  }

  @Validate
  public void check() {
    AdmissionQueueLincheckScenario.checkState(control, semaphore, decisions);
    if (closed && control.queued() != 0) {
      throw new IllegalStateException("closed, but " + control.queued() + " still queued");
    }
  }

  @LincheckRun
  void modelCheck() {
    new ModelCheckingOptions()
        .iterations(25)
        .invocationsPerIteration(40)
        .threads(3)
        .actorsPerThread(2)
        .check(AdmissionQueueCloseLincheckTest.class);
  }
}
