package dev.jeton;

import dev.jeton.internal.Arguments;
import dev.jeton.internal.LeakTracker;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * A semaphore per key, with an optional limit across all keys: "at most 4 requests per host, 50 in
 * all".
 *
 * <pre>{@code
 * KeyedSemaphore<String> hosts = KeyedSemaphore.builder().limitPerKey(4).globalLimit(50).build();
 * try (Permit p = hosts.forKey(url.getHost()).acquire(1)) {
 *   fetch(url);
 * }
 * }</pre>
 *
 * <p>{@link #forKey(Object)} returns the key's {@link Semaphore}, with the whole interface:
 * blocking, asynchronous and timed requests, weights, {@code setLimit}, {@code awaitIdle}, {@code
 * close}. Every view of a key shares the key's state; a view is cheap to make and may be kept or
 * thrown away.
 *
 * <h2>Memory</h2>
 *
 * <p>A key has an entry only while it is in use: while some request of it is queued or holds
 * permits (or an operation on it is under way). When the last permit of a key is released and no
 * one waits, its entry is removed, so memory grows with the keys in use, not with every key ever
 * seen. An idle key needs no entry: it is indistinguishable from a new one. Two things make a key
 * differ from a new one, and so keep its entry: a limit set with {@code forKey(k).setLimit(n)}
 * other than the key's configured limit (the entry is kept until the limit is set back), and {@code
 * forKey(k).close()} (the key stays closed). Once the whole keyed semaphore is {@linkplain #close()
 * closed}, no key can be used again, so nothing keeps an entry: each goes when its last permit is
 * released, and an operation after the close ({@code setLimit}, {@code close}) leaves none behind
 * (an idle key then reports its configured limit). Statistics are not kept per key: {@code stats()}
 * is empty.
 *
 * <h2>The global limit</h2>
 *
 * <p>With {@link Builder#globalLimit(int)}, a request of weight {@code w} needs {@code w} permits
 * of its key and {@code w} of the global limit. It takes its key's permits first, in the key's
 * arrival order, then waits for the global permits, in the order requests got that far. Holding the
 * key's share while waiting for the global one keeps a busy key from crowding the global queue (at
 * most its limit's worth of its requests wait there) and cannot deadlock (no one waits for a key
 * while holding global permits). So: requests of one key are served in arrival order; requests of
 * different keys are not ordered with one another except through the global queue. A request
 * waiting for the global limit counts in its key's {@code queueLength()}, and its key permits count
 * as taken in the key's {@code available()}. Cancelling, timing out or interrupting it gives its
 * key permits back; its timeout covers both waits.
 *
 * <p>{@code tryAcquire} with a global limit takes the key's permits, then tries the global ones,
 * and gives the key's back if those are short: two such requests racing for the last global permits
 * may both fail where one after the other, one would have succeeded. Without a global limit, a
 * key's semaphore is exactly the in-process {@link Semaphore}: linearizable, strictly FIFO.
 *
 * <p>{@link #close()} closes every key and the global limit: queued requests fail with {@link
 * SemaphoreClosedException}, new ones are refused, permits already held stay valid.
 */
public final class KeyedSemaphore<K> implements AutoCloseable {
  /*
   * Overview
   *
   * `entries` maps a key to its KeyEntry: an in-process FifoSemaphore and a use count. Every
   * operation on a key takes a use of its entry for as long as it needs it: a request from the
   * call until it fails or its permit is released, an operation such as setLimit for its call.
   * The use count and two "keep" flags live in one atomic int, `KeyEntry.state`:
   *
   *   state = uses << 2 | LIMIT_CHANGED | CLOSED,   or RETIRED (-1)
   *
   * Taking a use is a CAS from any state >= 0; giving the last one back, with no flag set, moves
   * the state from 0 to RETIRED by CAS and then removes the entry from the map. A retired entry is
   * never used again: whoever finds one in the map removes it (the retiring thread may not have
   * got there yet) and puts in a new one. So an entry is removed only when no request is queued
   * or holds permits, and no operation is on it; then its semaphore is idle, at the key's
   * configured limit, and open, exactly like a new one, so removing it loses nothing.
   *
   * Invariants:
   *   K1. An entry in use (state >= 4) is the one in the map for its key: it is removed only
   *       after it retires, and it retires only at state 0.
   *   K2. LIMIT_CHANGED is set exactly when the semaphore's limit differs from the configured
   *       one, once no setLimit is under way (each setLimit re-reads the limit after setting the
   *       flag and goes round again if it changed meanwhile).
   *   K3. CLOSED, once set, stays: a closed key keeps its entry, while the keyed semaphore is
   *       open.
   *
   * After KeyedSemaphore.close() no request can take a key's permits again, so the flags no
   * longer keep an entry: an entry retires once its uses are 0, whatever its flags (close()
   * retires those idle already; unuse() those whose last use ends later, and it reads `closed`
   * after ending its use, so one of the two always sees the other's write). awaitIdle() takes a
   * use only of an entry already in the map: a key without one is idle, and is not given one.
   *
   * With a global limit, a request holds its key permits while it waits for the global ones;
   * that wait is recorded in the entry (`waitingForGlobal`) so that closing the key, or lowering
   * its limit below the request, can fail it as the contract says for queued requests.
   */

  private final @Nullable String name;
  private final ToIntFunction<? super K> limitPerKey;
  private final @Nullable FifoSemaphore global;
  private final @Nullable Executor completionExecutor;
  private final ConcurrentHashMap<K, KeyEntry> entries = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Watches the keys' permits for leaks (PerKeySemaphore.KeyedPermit.of); null: not watched. */
  final @Nullable LeakTracker leaks;

  private KeyedSemaphore(Builder<? super K> builder, ToIntFunction<? super K> limitPerKey) {
    this.name = builder.name;
    this.leaks =
        builder.leakTracker(name != null ? "keyed semaphore '" + name + "'" : "keyed semaphore");
    this.limitPerKey = limitPerKey;
    this.completionExecutor = builder.completionExecutor;
    this.global =
        builder.globalLimit < 0
            ? null
            : new FifoSemaphore(
                name != null ? name + "[global]" : "global limit",
                builder.globalLimit,
                Fairness.strictFifo(),
                completionExecutor,
                false);
  }

  /**
   * A semaphore per key, each with limit {@code limitPerKey}, and no global limit.
   *
   * @throws IllegalArgumentException if {@code limitPerKey} is negative
   */
  public static <K> KeyedSemaphore<K> create(int limitPerKey) {
    return builder().limitPerKey(limitPerKey).build();
  }

  /** Returns a builder. */
  public static Builder<Object> builder() {
    return new Builder<>();
  }

  /** The semaphore of {@code key}; see the class comment. */
  public Semaphore forKey(K key) {
    return new PerKeySemaphore<>(this, Objects.requireNonNull(key, "key"));
  }

  /**
   * The number of keys that have an entry now: those in use, plus those kept for a changed limit or
   * because they were closed. A key whose last use has just ended may still be counted for a
   * moment.
   */
  public int keyCount() {
    return entries.size();
  }

  /** The limit across all keys, if there is one. */
  public OptionalInt globalLimit() {
    FifoSemaphore g = global;
    return g == null ? OptionalInt.empty() : OptionalInt.of(g.limit());
  }

  /** The permits of the global limit free now (negative while a lowered limit takes effect). */
  public OptionalInt globalAvailable() {
    FifoSemaphore g = global;
    return g == null ? OptionalInt.empty() : OptionalInt.of(g.available());
  }

  /**
   * Changes the global limit, without blocking, as {@link Semaphore#setLimit(int)} does: growing it
   * admits requests waiting for it; requests waiting for it that are larger than the new limit fail
   * with {@link IllegalArgumentException} and give their key permits back.
   *
   * @throws IllegalStateException if there is no global limit
   * @throws IllegalArgumentException if {@code limit} is negative
   */
  public void setGlobalLimit(int limit) {
    FifoSemaphore g = global;
    if (g == null) {
      throw new IllegalStateException(
          "no global limit: set one with KeyedSemaphore.builder().globalLimit(int)");
    }
    g.setLimit(limit);
  }

  /**
   * Closes every key and the global limit: queued requests fail with {@link
   * SemaphoreClosedException}, new requests for any key are refused, and permits already held stay
   * valid. Closing twice does nothing.
   */
  @Override
  public void close() {
    closed = true;
    FifoSemaphore g = global;
    if (g != null) {
      g.close();
    }
    for (Map.Entry<K, KeyEntry> mapping : entries.entrySet()) {
      KeyEntry entry = mapping.getValue();
      entry.semaphore.close();
      if (entry.tryRetire(true)) {
        entries.remove(mapping.getKey(), entry);
      }
    }
  }

  @Override
  public String toString() {
    OptionalInt g = globalLimit();
    return "KeyedSemaphore["
        + (name != null ? "name=" + name + ", " : "")
        + "keys="
        + keyCount()
        + (g.isPresent()
            ? ", global limit=" + g.getAsInt() + ", available=" + globalAvailable().getAsInt()
            : "")
        + (closed ? ", closed]" : "]");
  }

  // ------------------------------------------------------------------ for PerKeySemaphore

  boolean isClosed() {
    return closed;
  }

  @Nullable FifoSemaphore global() {
    return global;
  }

  /** Checks a request's weight against the global limit, if there is one. */
  void checkGlobalWeight(int permits) {
    FifoSemaphore g = global;
    if (g != null && permits > g.limit()) {
      throw new IllegalArgumentException(
          "permits must not exceed the global limit " + g.limit() + ", was " + permits);
    }
  }

  static long nanosLeft(long deadline) {
    return deadline == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0L, deadline - System.nanoTime());
  }

  static long deadline(@Nullable Duration timeout) {
    if (timeout == null) {
      return Long.MAX_VALUE;
    }
    long nanos = Arguments.toNanos(timeout);
    return nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
  }

  /** The entry of {@code key} if it has one, for inspection; it may be retired. */
  @Nullable KeyEntry peek(K key) {
    return entries.get(key);
  }

  /** The limit {@code key} has when it has no entry. */
  int configuredLimit(K key) {
    int limit = limitPerKey.applyAsInt(key);
    if (limit < 0 || limit > FifoSemaphore.MAX_LIMIT) {
      throw new IllegalArgumentException(
          "the limit for key '"
              + key
              + "' must be 0 to "
              + FifoSemaphore.MAX_LIMIT
              + ", was "
              + limit);
    }
    return limit;
  }

  /** Takes a use of the entry of {@code key}, making one if it has none; see the overview. */
  KeyEntry use(K key) {
    for (; ; ) {
      KeyEntry entry = entries.get(key);
      if (entry == null) {
        KeyEntry fresh =
            new KeyEntry(
                semaphoreName(key), configuredLimit(key), completionExecutor, global != null);
        entry = entries.putIfAbsent(key, fresh);
        if (entry == null) {
          return fresh;
        }
      }
      if (entry.tryUse()) {
        return entry;
      }
      entries.remove(key, entry); // retired, and perhaps not removed yet
    }
  }

  /**
   * Gives back a use taken by {@link #use}; the last one removes an entry that is like new, or,
   * once the keyed semaphore is closed, any entry.
   */
  void unuse(Object key, KeyEntry entry) {
    if (entry.endUse() && entry.tryRetire(closed)) {
      entries.remove(key, entry);
    }
  }

  private String semaphoreName(K key) {
    return name != null ? name + "[" + key + "]" : String.valueOf(key);
  }

  /**
   * Builds a {@link KeyedSemaphore}. Each setter checks its argument at once. A key's semaphore
   * shows as {@code name[key]} if a name is set.
   *
   * <pre>{@code
   * KeyedSemaphore<String> tenants =
   *     KeyedSemaphore.builder().limitPerKey(tenant -> plans.limitOf(tenant)).globalLimit(200).build();
   * }</pre>
   *
   * @param <K> the type of keys, fixed by {@link #limitPerKey(ToIntFunction)} or by {@link
   *     #build()}
   */
  public static final class Builder<K> extends GrantingBuilder<Builder<K>> {
    private @Nullable ToIntFunction<? super K> limitPerKey;
    private int globalLimit = -1;

    private Builder() {}

    /**
     * Every key's limit. This or {@link #limitPerKey(ToIntFunction)} is required.
     *
     * @throws IllegalArgumentException if {@code limit} is negative or above 2<sup>30</sup>-1
     */
    public Builder<K> limitPerKey(int limit) {
      FifoSemaphore.checkLimit(limit);
      this.limitPerKey = key -> limit;
      return this;
    }

    /**
     * Each key's limit, asked when the key gets an entry (and when an idle key is inspected). It
     * must give the same answer for the same key; to change a key's limit while it is in use, use
     * {@code forKey(key).setLimit(n)}. A limit out of range fails the request that asked for it
     * with {@link IllegalArgumentException}.
     */
    @SuppressWarnings("unchecked") // the builder holds nothing else typed by K
    public <K1 extends K> Builder<K1> limitPerKey(ToIntFunction<? super K1> limit) {
      Builder<K1> self = (Builder<K1>) this;
      self.limitPerKey = Objects.requireNonNull(limit, "limit");
      return self;
    }

    /**
     * A limit across all keys at once; none by default.
     *
     * @throws IllegalArgumentException if {@code limit} is negative or above 2<sup>30</sup>-1
     */
    public Builder<K> globalLimit(int limit) {
      FifoSemaphore.checkLimit(limit);
      this.globalLimit = limit;
      return this;
    }

    /**
     * Builds the keyed semaphore.
     *
     * @throws IllegalStateException if no limit per key was set
     */
    @SuppressWarnings("unchecked") // a limit per key set without a type accepts any key
    public <K1 extends K> KeyedSemaphore<K1> build() {
      ToIntFunction<? super K> limit = limitPerKey;
      if (limit == null) {
        throw new IllegalStateException(
            "a limit per key is required: call limitPerKey(...) before build()");
      }
      return new KeyedSemaphore<K1>((Builder<? super K1>) this, (ToIntFunction<? super K1>) limit);
    }
  }
}
