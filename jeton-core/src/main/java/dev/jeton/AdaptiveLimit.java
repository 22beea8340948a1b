package dev.jeton;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Moves a {@link Semaphore}'s limit to follow what the work behind it can take, judged from the
 * latency of completed work and from how much was in flight: a concurrency controller in the family
 * of TCP Vegas and the gradient controllers.
 *
 * <p>Acquire a permit from {@link #semaphore()}, call {@link #begin()} when the work starts, and
 * end the sample with {@link Sample#success()}, {@link Sample#dropped()} or {@link Sample#ignore()}
 * (a {@code finally} that calls {@code ignore()} is safe: only the first ending counts). The README
 * has a complete example.
 *
 * <p>Work is observed in windows of at least {@link Builder#windowSamples(int)} samples (and at
 * least the limit's worth), the first to begin while the window is open; a window closes when they
 * have ended. After each window the limit is cut when the mean latency is above {@link
 * Builder#tolerance(double)} times the no-load latency (to the concurrency at which latency would
 * be back within half of the tolerance) or when work was {@linkplain Sample#dropped() dropped},
 * grows when latency is within half of the tolerance and the in-flight count reached the limit, and
 * otherwise stays. It never leaves [{@link Builder#minLimit(int)}, {@link Builder#maxLimit(int)}].
 * The controller owns the semaphore's limit: it calls {@link Semaphore#setLimit(int)} from the
 * thread that ends a window's last sample (for an in-process semaphore that never blocks; for a
 * machine-wide or Redis one it is a file update or a round trip). If {@code setLimit} throws, the
 * limit stays where it was and the next window decides again; the failure never reaches the caller
 * ending the sample.
 *
 * <p>Thread-safe; {@link #begin()} and the sample's methods take no lock. Only work that called
 * {@link #begin()} is counted as in flight.
 */
public final class AdaptiveLimit {
  /*
   * Algorithm
   *
   * A window holds `size` slots, size = clamp(limit, windowSamples, MAX_WINDOW), and its samples
   * are the first `size` to BEGIN while it is open (begin() takes a slot with one getAndAdd while
   * there are slots left). A sampled ending writes its slot: the latency, or DROPPED, or IGNORED,
   * and the in-flight count the sample saw when it began. Samples begun after the slots ran out
   * are not sampled. The ending that writes the last slot closes the window. (The first `size` to
   * END would be biased: the short ones end first, and the lowest of such means is far below the
   * true no-load latency; a window that waits for its slowest sample is not.) A sampled piece of
   * work that never ends must not stop the controller: once 3 * size unsampled samples of the
   * window ended, it closes without the slots still open. The closer computes, over the written
   * slots, the mean latency R and its standard error E, the mean in-flight N, the drops, and
   * (from begin()) whether the largest in-flight count M reached the window's limit, and hands
   * them to the LimitEstimator, which decides the next limit (its algorithm is explained there),
   * then sets it on the semaphore.
   *
   * Invariants:
   *   A1. minLimit <= limit <= maxLimit, and limit = floor(the estimator's estimate), once
   *       build() returns.
   *   A2. One window closes at a time: a window is closed once (CAS on `closing`), the next one
   *       is installed only after the close finished, and only samples begun in a window end in
   *       it. So the estimator (the closer's state) needs no lock: each close happens-after the
   *       previous one, through the volatile write of `window`, a begin() that read it, and the
   *       getAndAdd chains on `done` and `late`.
   *   A3. A sample ends once (CAS on `ended`); inFlight counts samples begun and not ended.
   *   A4. A slot is written once, its load before its latency (a release store); the closer
   *       reads the latency with acquire, and 0 means not written yet (a success is >= 1 ns):
   *       the slot is skipped.
   *
   * Field access follows package-info.java: atomics through VarHandles, other reads volatile.
   */

  private static final long OPEN = 0;
  private static final long DROPPED = -1;
  private static final long IGNORED = -2;

  /** How many unsampled endings close a window whose sampled work has not all ended. */
  private static final int LATE_WINDOWS = 3;

  /** The largest window, so that a huge limit does not make a huge array. */
  static final int MAX_WINDOW = 4096;

  private static final VarHandle IN_FLIGHT;
  private static final VarHandle BEGUN;
  private static final VarHandle DONE;
  private static final VarHandle LATE;
  private static final VarHandle CLOSING;
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle MAX_IN_FLIGHT;
  private static final VarHandle ENDED;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      IN_FLIGHT = lookup.findVarHandle(AdaptiveLimit.class, "inFlight", int.class);
      BEGUN = lookup.findVarHandle(Window.class, "begun", int.class);
      DONE = lookup.findVarHandle(Window.class, "done", int.class);
      LATE = lookup.findVarHandle(Window.class, "late", int.class);
      CLOSING = lookup.findVarHandle(Window.class, "closing", boolean.class);
      MAX_IN_FLIGHT = lookup.findVarHandle(Window.class, "maxInFlight", int.class);
      ENDED = lookup.findVarHandle(Run.class, "ended", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Semaphore target;
  private final LongSupplier clock;
  private final int windowSamples;
  private final LimitEstimator estimator; // the closer's state (A2)

  private volatile int inFlight;
  private volatile Window window; // written only by the closer of the previous window
  private volatile int limit; // written only by closers; read by limit()
  private volatile long windows; // closed windows that decided (a success or a drop); by tests

  AdaptiveLimit(Semaphore target, Builder b, LongSupplier clock) {
    this.target = target;
    this.clock = clock;
    this.windowSamples = b.windowSamples;
    this.estimator =
        new LimitEstimator(b.minLimit, b.maxLimit, b.tolerance, b.backoff, b.initialLimit);
    this.limit = b.initialLimit;
    target.setLimit(b.initialLimit);
    this.window = new Window(b.initialLimit, windowSize(b.initialLimit));
  }

  /** Returns a builder; every setter checks its value at once. */
  public static Builder builder() {
    return new Builder();
  }

  /** The controlled semaphore: acquire from it, then {@link #begin()} the work. */
  public Semaphore semaphore() {
    return target;
  }

  /** The current limit, the one last set on the semaphore. */
  public int limit() {
    return limit;
  }

  /** The number of samples begun and not yet ended. */
  public int inFlight() {
    return inFlight;
  }

  /**
   * Starts a sample: call it when a unit of work starts, after it was admitted. End the sample with
   * exactly one of {@link Sample#success()}, {@link Sample#dropped()} or {@link Sample#ignore()};
   * later calls do nothing. A sample never ended stays in flight for good.
   */
  public Sample begin() {
    int load = (int) IN_FLIGHT.getAndAdd(this, 1) + 1;
    Window w = window;
    int seen;
    while (load > (seen = w.maxInFlight) && !MAX_IN_FLIGHT.weakCompareAndSet(w, seen, load)) {
      // another begin raised it meanwhile: read again
    }
    int slot = -1;
    if (w.begun < w.latency.length) {
      slot = (int) BEGUN.getAndAdd(w, 1);
      if (slot >= w.latency.length) {
        slot = -1; // another begin took the last slot meanwhile
      }
    }
    return new Run(w, clock.getAsLong(), load, slot);
  }

  /** One unit of work, from {@link #begin()} to the first of its three endings. */
  public interface Sample {
    /** The work completed normally: its latency is a sample. */
    void success();

    /**
     * The work failed because of overload (a timeout, a 503 from downstream): a congestion signal,
     * which cuts the limit; its latency is not used.
     */
    void dropped();

    /** Not a sample: the client went away, the handler failed, the work never really ran. */
    void ignore();
  }

  private final class Run implements Sample {
    final Window window;
    final long start;
    final int load;
    final int slot; // in the window, or -1: not sampled
    volatile boolean ended;

    Run(Window window, long start, int load, int slot) {
      this.window = window;
      this.start = start;
      this.load = load;
      this.slot = slot;
    }

    @Override
    public void success() {
      // At least 1 ns: a clock that did not move must not make a zero baseline.
      end(this, Math.max(1, clock.getAsLong() - start));
    }

    @Override
    public void dropped() {
      end(this, DROPPED);
    }

    @Override
    public void ignore() {
      end(this, IGNORED);
    }
  }

  private void end(Run run, long latency) {
    if (run.ended || !ENDED.compareAndSet(run, false, true)) {
      return;
    }
    IN_FLIGHT.getAndAdd(this, -1);
    Window w = run.window;
    int size = w.latency.length;
    if (run.slot >= 0) {
      w.load[run.slot] = run.load;
      SLOT.setRelease(w.latency, run.slot, latency);
      if ((int) DONE.getAndAdd(w, 1) + 1 == size) {
        close(w);
      }
    } else if (latency != IGNORED
        && !w.closing
        && (int) LATE.getAndAdd(w, 1) + 1 == LATE_WINDOWS * size) {
      close(w); // a sampled piece of work is very slow or was never ended: go on without it
    }
  }

  /** Runs on the thread that wrote {@code w}'s last slot, or its last late ending (A2). */
  private void close(Window w) {
    if (!CLOSING.compareAndSet(w, false, true)) {
      return;
    }
    int successes = 0;
    double latencySum = 0;
    double squareSum = 0;
    double loadSum = 0;
    int drops = 0;
    for (int i = 0; i < w.latency.length; i++) {
      long latency = (long) SLOT.getAcquire(w.latency, i);
      if (latency == DROPPED) {
        drops++;
      } else if (latency != IGNORED && latency != OPEN) {
        successes++;
        latencySum += latency;
        squareSum += (double) latency * latency;
        loadSum += w.load[i];
      }
    }
    double mean = successes == 0 ? 0 : latencySum / successes;
    // The standard error of that mean: how far chance alone moves it from window to window.
    double error =
        successes < 2
            ? 0
            : Math.sqrt(Math.max(0, squareSum / successes - mean * mean) / (successes - 1));
    int next = limit;
    try {
      double estimate =
          estimator.decide(
              successes,
              drops,
              mean,
              error,
              successes == 0 ? 0 : loadSum / successes,
              w.maxInFlight >= w.limit);
      next = (int) estimate;
      if (next != limit) {
        try {
          target.setLimit(next);
          limit = next;
        } catch (RuntimeException unreachable) {
          // A remote semaphore that cannot be reached now: its limit stays, and so does ours,
          // so the two agree and the next window decides again. The failure is the semaphore's
          // to report; it must not reach the caller ending a sample (a response being closed).
          next = limit;
          estimator.keep(limit);
        }
      }
    } finally {
      if (successes + drops > 0) {
        windows = windows + 1;
      }
      window = new Window(next, windowSize(next)); // opens the next window: last (A2)
    }
  }

  /** The estimator's decision after a window, for tests (A2: no window may be closing). */
  double decide(
      int successes, int drops, double latency, double error, double load, boolean reached) {
    return estimator.decide(successes, drops, latency, error, load, reached);
  }

  private int windowSize(int forLimit) {
    return Math.min(MAX_WINDOW, Math.max(windowSamples, forLimit));
  }

  /** The no-load latency estimate in nanoseconds, 0 until the first window closed. */
  double baselineNanos() {
    return estimator.baseline();
  }

  /** The number of windows closed so far with a success or a drop in them. */
  long windows() {
    return windows;
  }

  @Override
  public String toString() {
    return "AdaptiveLimit[limit=" + limit + ", inFlight=" + inFlight + ", " + target + "]";
  }

  /** The samples begun while it was open, each in a slot of its own once ended. */
  private static final class Window {
    final int limit; // the limit in force while this window is open
    final long[] latency; // per slot: OPEN, nanoseconds of a success, DROPPED or IGNORED
    final int[] load; // per slot: the in-flight count when that sample began
    volatile int begun; // slots taken by begin(); may run past the size
    volatile int done; // slots written
    volatile int late; // unsampled endings (not ignored) of samples begun in this window
    volatile boolean closing;
    volatile int maxInFlight;

    Window(int limit, int size) {
      this.limit = limit;
      this.latency = new long[size];
      this.load = new int[size];
    }
  }

  /** Builds an {@link AdaptiveLimit}. Every setter fails at once on a bad value, naming it. */
  public static final class Builder {
    private int initialLimit = 10;
    private int minLimit = 1;
    private int maxLimit = 1000;
    private int windowSamples = 50;
    private double tolerance = 1.25;
    private double backoff = 0.9;

    private Builder() {}

    /** The limit to start from, within [minLimit, maxLimit]; default 10. */
    public Builder initialLimit(int limit) {
      this.initialLimit = checkLimit("initialLimit", limit);
      return this;
    }

    /** The floor: the limit never goes below it; at least 1, default 1. */
    public Builder minLimit(int limit) {
      this.minLimit = checkLimit("minLimit", limit);
      return this;
    }

    /** The ceiling: the limit never goes above it; default 1000. */
    public Builder maxLimit(int limit) {
      this.maxLimit = checkLimit("maxLimit", limit);
      return this;
    }

    /**
     * How much above the no-load latency the mean latency of a window may be before the limit is
     * cut: a ratio above 1 and at most 10, default 1.25. Lower keeps latency lower and reacts to
     * noise; higher lets more work queue.
     */
    public Builder tolerance(double ratio) {
      check(ratio > 1 && ratio <= 10, "tolerance must be above 1 and at most 10, was " + ratio);
      this.tolerance = ratio;
      return this;
    }

    /** What the limit is multiplied by after a window with drops: in [0.5, 1), default 0.9. */
    public Builder backoff(double ratio) {
      check(ratio >= 0.5 && ratio < 1, "backoff must be in [0.5, 1), was " + ratio);
      this.backoff = ratio;
      return this;
    }

    /**
     * The fewest samples in a window, default 50 (fewer react sooner, but the lowest of noisier
     * means makes a lower no-load estimate); a window holds at least the limit's worth of samples
     * too, and at most {@value AdaptiveLimit#MAX_WINDOW}.
     */
    public Builder windowSamples(int samples) {
      check(
          samples >= 1 && samples <= MAX_WINDOW,
          "windowSamples must be from 1 to " + MAX_WINDOW + ", was " + samples);
      this.windowSamples = samples;
      return this;
    }

    /**
     * Builds the controller, which sets {@code target}'s limit to the initial limit at once and
     * owns it from now on: do not call {@code setLimit} on it yourself.
     *
     * @throws IllegalArgumentException if minLimit exceeds maxLimit, or the initial limit is
     *     outside [minLimit, maxLimit]
     */
    public AdaptiveLimit build(Semaphore target) {
      return build(target, System::nanoTime);
    }

    /** As {@link #build(Semaphore)}, with a clock of nanoseconds (tests). */
    AdaptiveLimit build(Semaphore target, LongSupplier clock) {
      Objects.requireNonNull(target, "target");
      Objects.requireNonNull(clock, "clock");
      check(minLimit <= maxLimit, "minLimit " + minLimit + " must not exceed maxLimit " + maxLimit);
      check(
          initialLimit >= minLimit && initialLimit <= maxLimit,
          String.format(
              "initialLimit must be within [minLimit, maxLimit] = [%d, %d], was %d",
              minLimit, maxLimit, initialLimit));
      return new AdaptiveLimit(target, this, clock);
    }

    private static int checkLimit(String what, int limit) {
      check(
          limit >= 1 && limit <= FifoSemaphore.MAX_LIMIT,
          what + " must be from 1 to " + FifoSemaphore.MAX_LIMIT + ", was " + limit);
      return limit;
    }

    private static void check(boolean valid, String message) {
      if (!valid) {
        throw new IllegalArgumentException(message);
      }
    }
  }
}
