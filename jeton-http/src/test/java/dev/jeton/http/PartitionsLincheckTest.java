package dev.jeton.http;

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
 * An {@link AdmissionControl} partitioned by key (limit 1 per key, 2 in all, a queue of 1 per key):
 * requests of two keys are admitted, their tickets closed, their futures cancelled and the control
 * closed, from several threads in every interleaving the model checker tries. What is checked is
 * the state each interleaving leaves (the operations return nothing: a partitioned request's
 * decision is a future of its own, completed after the key's semaphore decides, so a bare read of
 * it is not linearizable): never more tickets than the limits, every waiting request counted
 * exactly once in {@code queued()}, and nothing queued once closed.
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
@Param(name = "request", gen = IntGen.class, conf = "0:5")
public class PartitionsLincheckTest {
  private static final int REQUESTS = 32; // more than any scenario makes

  /** A request of a key. */
  record Req(int key) {}

  private final AdmissionControl<Req> control =
      AdmissionControl.<Req>builder()
          .partitionBy(Req::key, 1)
          .limit(2)
          .queue(1, Duration.ofHours(1))
          .build();
  private final AtomicInteger made = new AtomicInteger();
  private final AtomicReferenceArray<CompletableFuture<Decision>> decisions =
      new AtomicReferenceArray<>(REQUESTS);
  private final AtomicReferenceArray<Req> requests = new AtomicReferenceArray<>(REQUESTS);
  private volatile boolean closed;

  @Operation
  public synchronized void admit(@Param(name = "key") int key) {
    int request = made.getAndIncrement();
    requests.set(request, new Req(key));
    decisions.set(request, control.admitAsync(new Req(key)));
  }

  @Operation
  public void closeTicket(@Param(name = "request") int request) {
    CompletableFuture<Decision> f = decisions.get(request);
    if (f != null && f.isDone() && !f.isCancelled() && f.join() instanceof Ticket t) {
      t.close();
    }
  }

  @Operation
  public void cancel(@Param(name = "request") int request) {
    CompletableFuture<Decision> f = decisions.get(request);
    if (f != null) {
      f.cancel(false);
    }
  }

  @Operation
  public void close() {
    control.close();
    closed = true;
  }

  @Validate
  public void check() {
    int[] open = new int[2];
    int undecided = 0;
    int tickets = 0;
    for (int i = 0; i < REQUESTS; i++) {
      CompletableFuture<Decision> f = decisions.get(i);
      if (f == null) {
        continue;
      }
      if (!f.isDone()) {
        undecided++;
      } else if (!f.isCancelled() && f.join() instanceof Ticket t && !t.isClosed()) {
        open[requests.get(i).key()]++;
        tickets++;
      }
    }
    if (open[0] > 1 || open[1] > 1) {
      throw new IllegalStateException("more than 1 ticket of a key: " + open[0] + ", " + open[1]);
    }
    if (control.inFlight() != tickets) {
      throw new IllegalStateException(control.inFlight() + " in flight, " + tickets + " open");
    }
    if (control.queued() != undecided) {
      throw new IllegalStateException(undecided + " undecided but " + control.queued() + " queued");
    }
    if (closed && undecided != 0) {
      throw new IllegalStateException("closed, but " + undecided + " undecided");
    }
  }

  @LincheckRun
  void modelCheck() {
    new ModelCheckingOptions()
        .iterations(25)
        .invocationsPerIteration(40)
        .threads(3)
        .actorsPerThread(2)
        .check(PartitionsLincheckTest.class);
  }
}
