package dev.jeton.cli;

import dev.jeton.Permit;
import dev.jeton.RateLimiter;
import dev.jeton.Semaphore;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Where the {@code jeton} commands find semaphores and rate limiters: machine-wide in a directory
 * of lock files ({@link HostBackend}), or fleet-wide in Redis ({@link RedisBackend}). The commands
 * are the same for both.
 */
interface Backend extends AutoCloseable {

  /**
   * Opens semaphore {@code name}: checks it has {@code limit}, or creates it with {@code limit} (or
   * with {@code limitIfNew} when {@code limit} is null, or fails if that is 0 too).
   *
   * @param command what holders and waiters of this process say they run
   */
  Semaphore open(String name, @Nullable Integer limit, int limitIfNew, String command)
      throws IOException;

  /** The names of every semaphore here. */
  List<String> names() throws IOException;

  /** A snapshot of an open semaphore. */
  View status(Semaphore semaphore) throws IOException;

  /** What {@code jeton status} says when there is nothing: "no semaphores in ...". */
  String where();

  /** The variables the command run under {@code permit} gets, besides the name and weight. */
  Map<String, String> environment(Semaphore semaphore, Permit permit);

  /** Gives the permit back, and waits until it is back (so that this process may exit). */
  void release(Permit permit);

  /**
   * Makes the permit stay held while any process of the session {@code leader} leads runs, even if
   * this process dies (on this machine; a lease cannot outlive its renewals).
   */
  void holdWhileRuns(Semaphore semaphore, Permit permit, ProcessHandle leader) throws IOException;

  /**
   * How long the watchdog gives the command between SIGTERM and SIGKILL if {@code jeton} dies: with
   * a lease, short enough that the command is gone before the lease could run out.
   */
  java.time.Duration stopGrace();

  /**
   * Whether the permit is kept by this process's renewals (a lease), so that this process must keep
   * running while it holds it; false if it stays held while this process is stopped.
   */
  boolean renews();

  /** Calls {@code onLost} with a reason if the permit is lost while held (leases only). */
  void whenLost(Permit permit, Consumer<String> onLost);

  /**
   * Opens rate limiter {@code name}: checks it has {@code rate}, and {@code burst} unless 0, or
   * creates it with them (the burst defaulting to the rate's permits); with {@code rate} null,
   * opens an existing one only.
   *
   * @param command what waiters of this process say they run
   */
  RateLimiter openRate(String name, Rates.@Nullable Rate rate, int burst, String command)
      throws IOException;

  /** The variables the command run in a slot of {@code limiter} gets, besides its rate. */
  Map<String, String> environment(RateLimiter limiter);

  /** The names of every rate limiter here. */
  List<String> rateNames() throws IOException;

  /** A snapshot of an open rate limiter. */
  RateView rateStatus(RateLimiter limiter) throws IOException;

  @Override
  void close();

  /**
   * A snapshot of one rate limiter, whichever backend.
   *
   * @param name its name
   * @param rate its rate
   * @param burst its burst
   * @param nextFree how long a start of weight 1 asked for now would wait (zero: none)
   * @param waiters who waits for a slot, first in line first
   */
  record RateView(
      String name, Rates.Rate rate, int burst, java.time.Duration nextFree, List<Entry> waiters) {}

  /**
   * A snapshot of one semaphore, whichever backend.
   *
   * @param name its name
   * @param limit its limit
   * @param held the permits held in all
   * @param holders who holds them
   * @param waiters who waits, first in line first
   */
  record View(String name, int limit, int held, List<Entry> holders, List<Entry> waiters) {}

  /**
   * A holder or waiter.
   *
   * @param pid its process id
   * @param permits the permits it holds or asks for
   * @param user the user it runs as
   * @param host the host it runs on
   * @param since when it started holding or waiting
   * @param command what it runs
   * @param lease its lease id (Redis only)
   * @param expiresAt when its lease expires unless renewed (Redis holders only)
   * @param fencingTokens its fencing tokens, {@code slot:token,...} (Redis holders only)
   */
  record Entry(
      long pid,
      int permits,
      String user,
      String host,
      Instant since,
      String command,
      @Nullable String lease,
      @Nullable Instant expiresAt,
      @Nullable String fencingTokens) {}
}
