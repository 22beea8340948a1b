package dev.jeton.redis;

import dev.jeton.internal.Arguments;
import io.lettuce.core.RedisException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The calls of one handle to the semaphore's Redis function: the keys, the arguments every call
 * carries, the limit last seen, and the calls still in flight. Also the withdrawals (cancels) that
 * must reach Redis even if sending them failed: the poll sends them again.
 */
final class Calls {
  /*
   * Overview
   *
   * Every call is FCALL <function> 4 <state> <queue> <timers> <spare> <op> <create> <channel>
   * <replay> <waiter> <args...>:
   *   - create is the limit to create the semaphore with if its state is gone: the limit last
   *     seen ("L"), or "L/lease ms" once a reply has shown the state (seen), which makes Redis
   *     recreate it in quarantine (semaphore.lua, Recreation): leases of the lost state may still
   *     be believed held. -1 (no limit known) makes a call on a missing semaphore fail instead;
   *   - channel is this handle's own wake-up channel, where grants of the requests this call
   *     queues are announced;
   *   - replay is how long Redis remembers a finished request id;
   *   - waiter is how long a waiter of this handle stays queued after its last poll (its own
   *     requests' entries, and anyone's that a repair of damaged state must time anew).
   * All calls of a handle go over the link's one command connection, so Redis runs them in the
   * order they were sent.
   *
   * Fields: knownLimit and seen are volatile, written by every reply that shows the state (any
   * recent value will do: the limit is a hint for argument checks and the create argument);
   * inFlight and unsentWithdrawals are concurrent sets, changed by any thread.
   */

  private final Link link;
  private final RedisSemaphoreOptions options;
  private final String[] keys;
  private final String channel;
  private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
  private final Map<String, Boolean> unsentWithdrawals = new ConcurrentHashMap<>();

  /** How the handle's threads wait for the outcomes of its calls. */
  final ReplySpin spin = new ReplySpin();

  private volatile int knownLimit;

  /**
   * Whether a reply has shown the semaphore's state: from then on a call that finds no state
   * recreates it in quarantine (see {@code semaphore.lua}, Recreation), since leases of the lost
   * state may still be believed held.
   */
  private volatile boolean seen;

  Calls(String name, RedisSemaphoreOptions options, Link link, int limit) {
    this.link = link;
    this.options = options;
    String base = "{" + options.keyPrefix() + ":" + name + "}:";
    this.keys = new String[] {base + "state", base + "queue", base + "timers", base + "spare"};
    // Its own channel: a grant is announced to the handle that queued the request, not to all.
    this.channel = base + "wake:" + Ids.newId();
    this.knownLimit = limit;
  }

  /** {@return the channel this handle's wake-ups come on} */
  String channel() {
    return channel;
  }

  /** {@return the limit the last reply showed (or the one the handle was opened with)} */
  int knownLimit() {
    return knownLimit;
  }

  CompletableFuture<Reply> call(String op, String... args) {
    String[] argv = new String[5 + args.length];
    argv[0] = op;
    int createLimit = knownLimit;
    argv[1] =
        seen && createLimit >= 0
            ? createLimit + "/" + options.leaseTime().toMillis()
            : Integer.toString(createLimit);
    argv[2] = channel; // where grants of requests this call queues are announced
    argv[3] = Long.toString(options.replayWindow().toMillis());
    argv[4] = Long.toString(options.waiterExpiry().toMillis());
    System.arraycopy(args, 0, argv, 5, args.length);
    CompletableFuture<List<Object>> sent = link.run(keys, argv);
    inFlight.add(sent);
    var unused = sent.whenComplete((r, failure) -> inFlight.remove(sent));
    return sent.thenApply(
        raw -> {
          Reply reply = new Reply(raw);
          if (reply.limit >= 0) {
            knownLimit = reply.limit;
            seen = true;
          }
          return reply;
        });
  }

  /** A call that creates the semaphore with {@code createLimit} if it is gone. */
  CompletableFuture<Reply> callCreating(String op, int createLimit, String... args) {
    int previous = knownLimit;
    knownLimit = createLimit; // creates the semaphore with the new limit if it is gone
    CompletableFuture<Reply> reply = call(op, args);
    var unused =
        reply.whenComplete(
            (r, failure) -> {
              if (failure != null) {
                knownLimit = previous;
              }
            });
    return reply;
  }

  /** Sends cancels of {@code ids}; those that could not be sent go again with the next poll. */
  void withdraw(List<String> ids) {
    var unused =
        call("cancel", ids.toArray(new String[0]))
            .whenComplete(
                (reply, failure) -> {
                  if (failure != null) {
                    ids.forEach(id -> unsentWithdrawals.put(id, Boolean.TRUE));
                  }
                });
  }

  /** Sends again the withdrawals that could not be sent. */
  void resendWithdrawals() {
    if (!unsentWithdrawals.isEmpty()) {
      List<String> ids = new ArrayList<>(unsentWithdrawals.keySet());
      ids.forEach(unsentWithdrawals::remove);
      withdraw(ids);
    }
  }

  /** {@return a future of when every call sent so far has its answer (or failed)} */
  CompletableFuture<Void> inFlight() {
    return CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]));
  }

  /** Waits up to 5 seconds, interruptibly, for the calls sent so far to be answered. */
  void awaitInFlight() {
    // if Redis did not answer, what was not withdrawn or released expires on its own
    awaitQuietly(inFlight(), java.time.Duration.ofSeconds(5));
  }

  /** Waits up to {@code limit} for {@code future}, whatever its outcome. */
  static void awaitQuietly(CompletableFuture<?> future, java.time.Duration limit) {
    try {
      future.get(limit.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // the caller goes on either way
    }
  }

  /**
   * A call that failed in this process, not in Redis: {@code e} is an Error (out of memory reading
   * a reply that someone made huge), as a Redis failure that says so, which callers report as such
   * rather than as a crash.
   */
  static RedisException failedInThisProcess(Error e) {
    return new RedisException("the call to Redis failed in this process: " + e, e);
  }

  /** Waits for a reply without being interruptible, and rethrows its failure unwrapped. */
  /** Checks a limit as Redis takes it: 0 to 2^30-1. */
  static int checkLimit(int limit) {
    Arguments.checkLimit(limit);
    if (limit > (1 << 30) - 1) {
      throw new IllegalArgumentException("limit must not exceed 2^30-1, was " + limit);
    }
    return limit;
  }

  /** Waits for a call's reply as {@link #join} does, spinning first as {@link #spin} says. */
  <T> T await(CompletableFuture<T> reply) {
    long began = spin.spin(() -> !reply.isDone(), Long.MAX_VALUE);
    try {
      return join(reply);
    } finally {
      spin.waited(began);
    }
  }

  static <T> T join(CompletableFuture<T> future) {
    try {
      return future.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw e;
    }
  }
}
