package dev.jeton.redis;

import dev.jeton.internal.LeakTracker;
import dev.jeton.internal.ThisProcess;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The parts of one {@link RedisSemaphore} handle, and its life: builds the parts on the handle's
 * link, makes the first contact with the semaphore, runs the poll and renewal rounds, and shuts the
 * handle down once it is closed and nothing is held or waiting.
 */
final class Handle {
  /*
   * Overview: a map of the parts (each package-private, each with its own overview)
   *
   *   RedisSemaphore  the public API and the builder
   *   Handle          the parts of a handle and its life (open, close, shut down)
   *   Calls           the calls to the Redis function: keys, common arguments, the limit last
   *                   seen, quarantine recreation (seen), calls in flight, withdrawals to resend
   *   Reply           the codec: replies and wake-up messages, decoded
   *   Requests        waiting requests: send, batch, poll, settle from replies and wake-ups,
   *                   resubmit under a new id; RedisRequest (one request's future and state)
   *   Leases          held leases: made from grants, renewed together, released, given back;
   *                   RedisLease (one lease, its watch and its loss)
   *   ReplicaAcks     WAIT for replicas before a grant or renewal is relied on
   *   Link            the two connections (commands, wake-ups) and loading the function
   *   Handoff         how a future given to users leaves Lettuce's I/O thread: to a thread
   *                   waiting in get/join, else to the completion executor
   *   Listing         the semaphores in a Redis
   *   RedisTimer, Ids the Redis handles' own timer (and why it is theirs); request ids
   *
   * Who calls whom: the API calls Requests (acquires), Leases (through the leases it returns)
   * and Calls (counts, limit, status). Requests and Leases call Calls and ReplicaAcks; Requests
   * hands grants to Leases. RedisRequest and RedisLease call back into Requests and Leases, and
   * both call finishIfClosed here when a request or lease leaves, so that a closed handle shuts
   * down (timers cancelled, connections closed) once nothing is held or waiting.
   *
   * Fields: the parts are final. shutDown is set once (CAS), so the shutdown runs once, whoever
   * calls finishIfClosed (close, or the last request or lease to leave, on any thread);
   * linkClosed completes once the connections (and a client of the handle's own) have closed.
   */

  /** How much of an owner's description is kept (see {@link RedisSemaphore.Builder#owner}). */
  private static final int OWNER_CHARS = 120;

  final Link link;
  final Calls calls;
  final Leases leases;
  final Requests requests;
  private final String name;
  private final ScheduledFuture<?> poller;
  private final ScheduledFuture<?> renewer;
  private final CompletableFuture<@Nullable Void> linkClosed = new CompletableFuture<>();
  private final AtomicBoolean shutDown = new AtomicBoolean();

  /**
   * The parts of a handle on the semaphore {@code name} through {@code link}, which it closes when
   * it shuts down; {@code limit} is the limit to create the semaphore with if it is lost (or -1),
   * {@code leakTracker} watches its leases (null: none), {@code replicaWaiter} answers the replica
   * acknowledgement waits instead of Redis (tests) if not null.
   */
  Handle(
      String name,
      RedisSemaphoreOptions options,
      Link link,
      int limit,
      String ownerDescription,
      Executor completionExecutor,
      @Nullable LeakTracker leakTracker,
      ReplicaAcks.@Nullable Waiter replicaWaiter) {
    this.name = name;
    this.link = link;
    this.calls = new Calls(name, options, link, limit);
    ReplicaAcks replicaAcks =
        new ReplicaAcks(replicaWaiter != null ? replicaWaiter : link::waitForReplicas, options);
    String owner =
        String.join(
            "\t",
            ThisProcess.hostName(),
            Long.toString(ThisProcess.pid()),
            oneLine(System.getProperty("user.name", "?")),
            oneLine(ownerDescription));
    this.leases =
        new Leases(
            name,
            options,
            calls,
            replicaAcks,
            completionExecutor,
            leakTracker,
            this::finishIfClosed);
    this.requests =
        new Requests(
            name,
            options,
            owner,
            calls,
            leases,
            replicaAcks,
            completionExecutor,
            this::finishIfClosed);
    this.poller = RedisTimer.TIMER.every(requests::pollAll, options.pollInterval().toNanos());
    this.renewer = RedisTimer.TIMER.every(leases::renewAll, options.renewInterval().toNanos());
  }

  /**
   * The first contact: subscribes to the wake-ups and checks that the semaphore exists, with {@code
   * requiredLimit} if that is not negative. Shuts the handle down if it fails.
   */
  void start(int requiredLimit) {
    try {
      checkSemaphore(requiredLimit);
    } catch (RuntimeException e) {
      shutDown();
      throw e;
    }
  }

  private void checkSemaphore(int requiredLimit) {
    Calls.join(link.subscribe(calls.channel(), requests::onWake));
    Reply reply;
    try {
      reply = calls.await(calls.call("counts"));
    } catch (RuntimeException e) {
      if (Library.isDamagedLimit(e)) {
        return; // open, so that setLimit can repair it; every other call says it is damaged
      }
      throw e;
    }
    if (reply.limit < 0) {
      throw new IllegalArgumentException("there is no semaphore '" + name + "' in Redis");
    }
    if (requiredLimit >= 0 && reply.limit != requiredLimit) {
      throw new IllegalArgumentException(
          "semaphore '"
              + name
              + "' exists with limit "
              + reply.limit
              + ", not "
              + requiredLimit
              + ": change the limit explicitly (setLimit, or jeton limit)");
    }
  }

  /** As {@link RedisSemaphore#close()} says. */
  void close() {
    requests.close();
    finishIfClosed();
    if (!link.onItsThread()) {
      calls.awaitInFlight();
      if (shutDown.get()) {
        link.awaitClosed(linkClosed); // so that a program may exit at once (see OwnClient)
      }
    }
  }

  private void finishIfClosed() {
    if (requests.isClosed() && leases.isEmpty() && requests.isEmpty()) {
      shutDown();
    }
  }

  private void shutDown() {
    if (!shutDown.compareAndSet(false, true)) {
      return;
    }
    poller.cancel(false);
    renewer.cancel(false);
    // Let the withdrawals and releases already sent reach Redis first. The handle's own
    // connections close either way; a client passed in with client(...) stays open.
    var unused =
        calls
            .inFlight()
            .orTimeout(5, TimeUnit.SECONDS)
            .whenComplete(
                (done, failure) ->
                    link.closeAsync()
                        .whenComplete((closed, closeFailure) -> linkClosed.complete(null)));
  }

  /**
   * The owner's description as sent with every acquire and kept in each record: on one line, and at
   * most {@value #OWNER_CHARS} characters, since Redis copies it on every grant.
   */
  private static String oneLine(String text) {
    String line = text.replaceAll("[\\t\\r\\n]+", " ");
    return line.length() > OWNER_CHARS ? line.substring(0, OWNER_CHARS) + "..." : line;
  }
}
