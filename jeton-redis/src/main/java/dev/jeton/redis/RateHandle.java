package dev.jeton.redis;

import io.lettuce.core.RedisCommandExecutionException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link RedisRateLimiter} handle does under its API: the calls of {@code rate.lua} through
 * its {@link Link}, the rate as last heard from Redis, and its requests that wait.
 *
 * <p>Fields: {@code rate} and {@code seenTat} are updated from every answer, on Lettuce's threads
 * (or Jedis's); {@code waiting} holds the requests that wait, added on submission and removed when
 * they leave ({@link RateRequest}, R2). Every call of one handle travels on one connection, so
 * Redis sees them in the order they were sent.
 */
final class RateHandle {
  final String name;
  final Executor executor;
  final ReplySpin spin = new ReplySpin();
  final RateCounters stats;
  private final String[] keys;
  private final Link link;
  private final Set<RateRequest> waiting = ConcurrentHashMap.newKeySet();
  private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();

  /** The latest theoretical arrival time heard from Redis, in its microseconds; 0: none yet. */
  private final AtomicLong seenTat = new AtomicLong();

  private volatile RedisRate rate;
  private volatile boolean closed;

  private RateHandle(
      String name, String key, Link link, Executor executor, RateCounters stats, RedisRate rate) {
    this.name = name;
    this.keys = new String[] {key};
    this.link = link;
    this.executor = executor;
    this.stats = stats;
    this.rate = rate;
  }

  /**
   * Opens the limiter {@code key}: creates it with {@code wanted} if it does not exist; if it does,
   * checks that it has that rate (and burst, if {@code burstGiven}).
   *
   * @throws IllegalArgumentException if it exists with another rate, or does not and no rate was
   *     given
   */
  static RateHandle open(
      String name,
      String key,
      Link link,
      Executor executor,
      RateCounters stats,
      @Nullable RedisRate wanted,
      boolean burstGiven) {
    String create = wanted == null ? "" : wanted.createArgument();
    RateReply reply;
    try {
      reply =
          RateReply.parse(
              Calls.join(
                  link.run(Library.RATE_FUNCTION, keyArray(key), new String[] {"o", create, "0"})),
              key);
    } catch (IllegalStateException missing) {
      throw new IllegalArgumentException(
          "there is no rate limiter '" + name + "' in Redis: give the builder a rate to create it",
          missing);
    }
    RedisRate found = reply.rate();
    if (wanted != null
        && (!found.sameRate(wanted) || (burstGiven && found.burst() != wanted.burst()))) {
      throw new IllegalArgumentException(
          "the rate limiter '"
              + name
              + "' exists with "
              + found
              + ", not "
              + wanted
              + ": open it without a rate to use it as it is, or change its rate with setRate");
    }
    RateHandle handle = new RateHandle(name, key, link, executor, stats, found);
    handle.heard(reply);
    return handle;
  }

  private static String[] keyArray(String key) {
    return new String[] {key};
  }

  RedisRate rate() {
    return rate;
  }

  /** Sends a request of {@code weight} that waits at most {@code timeout} (null: any time). */
  RateRequest submit(int weight, @Nullable Duration timeout) {
    checkOpen();
    checkWeight(weight);
    RateRequest request = new RateRequest(this, weight, timeout);
    waiting.add(request);
    stats.queued(waiting.size());
    request.startTimer();
    CompletableFuture<List<Object>> handled =
        call("a", Integer.toString(weight), Long.toString(maxWaitMicros(timeout)))
            .whenComplete(
                (reply, failure) -> {
                  if (failure != null) {
                    request.failed(explain(failure));
                    return;
                  }
                  RateReply read;
                  try {
                    read = RateReply.parse(reply, keys[0]);
                  } catch (RuntimeException e) {
                    request.failed(e);
                    return;
                  }
                  heard(read);
                  request.answered(read);
                });
    track(handled); // until the answer is handled: a give-back it sends is tracked before it
    return request;
  }

  /** Whether {@code weight} passed now; one round trip. */
  boolean tryAcquire(int weight) {
    checkOpen();
    checkWeight(weight);
    RateReply reply = answer(call("a", Integer.toString(weight), "0"));
    if (reply.code() == 'A') {
      stats.admitted(0);
      return true;
    }
    stats.rejected();
    return false;
  }

  /** How long a request of {@code weight} made now would wait, by Redis's clock. */
  Duration timeToAdmit(int weight) {
    checkOpen();
    checkWeight(weight);
    RateReply reply = answer(call("p", Integer.toString(weight), "-1"));
    return Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(reply.waitMicros()));
  }

  void setRate(long permits, Duration period) {
    checkOpen();
    RedisRate next = rate.withRate(permits, period);
    answer(
        run(
            new String[] {
              "r", next.rateArgument(), next.createArgument(), Long.toString(seenTat.get())
            }));
  }

  /** Gives back the instant of a request that gave up; see {@code rate.lua}. */
  void giveBack(int weight, long tatMicros, long tatFraction) {
    var unused =
        run(
            new String[] {
              "g", Integer.toString(weight), Long.toString(tatMicros), Long.toString(tatFraction)
            });
  }

  /** Calls the function, keeping the call in {@code inFlight} until it is answered. */
  private CompletableFuture<List<Object>> run(String[] args) {
    return track(link.run(Library.RATE_FUNCTION, keys, args));
  }

  /** Keeps {@code call} in {@code inFlight}, which {@link #close} waits for, until it is done. */
  private <T> CompletableFuture<T> track(CompletableFuture<T> call) {
    inFlight.add(call);
    var unused = call.whenComplete((reply, failure) -> inFlight.remove(call));
    return call;
  }

  /** {@code request} no longer waits. */
  void left(RateRequest request) {
    waiting.remove(request);
  }

  int queueLength() {
    return waiting.size();
  }

  /** Fails the waiting requests (each gives back what it reserved), then closes the link. */
  void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (RateRequest request : waiting) {
      request.closed();
    }
    // Calls still in flight may answer with an instant for a request just failed, which its
    // answer then gives back: wait for those too, 5 s at most.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!inFlight.isEmpty() && deadline - System.nanoTime() > 0) {
      Calls.awaitQuietly(
          CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0])),
          Duration.ofNanos(deadline - System.nanoTime()));
    }
    link.close();
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the rate limiter handle '" + name + "' is closed");
    }
  }

  private void checkWeight(int weight) {
    int burst = rate.burst();
    if (weight < 1 || weight > burst) {
      throw new IllegalArgumentException(
          "the weight must be 1 to the burst, "
              + burst
              + ", of rate limiter '"
              + name
              + "': was "
              + weight);
    }
  }

  /** The operation with this handle's rate to recreate the limiter if Redis lost it. */
  private CompletableFuture<List<Object>> call(String op, String weight, String maxWait) {
    return run(
        new String[] {op, weight, maxWait, rate.createArgument(), Long.toString(seenTat.get())});
  }

  private RateReply answer(CompletableFuture<List<Object>> call) {
    RateReply reply;
    try {
      reply = RateReply.parse(Calls.join(call), keys[0]);
    } catch (RuntimeException e) {
      Throwable explained = explain(e);
      if (explained instanceof RuntimeException) {
        throw (RuntimeException) explained;
      }
      throw e;
    }
    heard(reply);
    return reply;
  }

  private void heard(RateReply reply) {
    rate = reply.rate();
    seenTat.accumulateAndGet(reply.tatMicros(), Math::max);
  }

  /** An error of Redis's that is the caller's: a weight above the burst set by another handle. */
  private static Throwable explain(Throwable failure) {
    Throwable cause =
        failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    if (cause instanceof RedisCommandExecutionException
        && String.valueOf(cause.getMessage()).contains("is above the burst")) {
      return new IllegalArgumentException(cause.getMessage(), cause);
    }
    return cause;
  }

  /** A timeout as {@code rate.lua} takes it: whole microseconds, -1 for none or a huge one. */
  private static long maxWaitMicros(@Nullable Duration timeout) {
    if (timeout == null || timeout.getSeconds() >= RedisRateLimiter.UNBOUNDED_SECONDS) {
      return -1;
    }
    return TimeUnit.SECONDS.toMicros(timeout.getSeconds()) + timeout.getNano() / 1000;
  }
}
