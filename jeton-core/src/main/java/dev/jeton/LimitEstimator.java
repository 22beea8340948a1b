package dev.jeton;

/**
 * The decision of an {@link AdaptiveLimit}: after each window of samples, the next estimate of the
 * limit, from the window's mean latency, its drops and how much was in flight. {@link
 * AdaptiveLimit} does the sampling and sets the limit; this holds the algorithm and its state.
 */
final class LimitEstimator {
  /*
   * Algorithm
   *
   * Given a window's mean latency R and its standard error E, the mean in-flight N, the drops,
   * and whether the largest in-flight count M reached the window's limit:
   *
   *   1. drops > 0: estimate *= backoff. A drop is congestion, and carries no latency.
   *   2. baseline B: the lowest R + 2E seen (a mean, not one lucky sample; and the margin keeps the
   *      lowest of thousands of noisy means from drifting below the true one). It moves up only
   *      on evidence that the latency is not queueing: a run of cuts (step 3) took the mean
   *      in-flight count below 30% of what it was in the run's first window (N <= 0.3 N0), and
   *      R fell by less than half of what queueing predicts (R > R0 (1 + N / N0) / 2). Then B = R,
   *      and growth is capped at the estimate from before the cuts (`cap`) until latency is back
   *      within tolerance of the lowest B ever, or well below B (R * tolerance < B): then B
   *      returns to that lowest and the cap goes.
   *   3. R > tolerance * B: estimate *= max(0.5, T * B / R), where T = sqrt(tolerance), half
   *      the tolerance in ratio (1.118 for 1.25). If the excess is queueing, latency grows with
   *      in-flight work (Little's law), and T * B / R of the limit is where latency would be back
   *      at T * B: the bottom of the band (T * B, tolerance * B] in which the limit holds. (A cut
   *      to B / R, all queueing gone, fell below the capacity whenever B was a little low, and
   *      goodput went with it.)
   *   4. R <= T * B, and M reached the window's limit: estimate += sqrt(estimate), up to `cap`;
   *      only += 1 if the last window that decided cut (the cut found the band: probe above it
   *      gently rather than overshoot by sqrt and cut again). If M did not reach the limit, the
   *      limit was not what held the work back: nothing is learnt about more.
   *   5. Within the band (T * B < R <= tolerance * B) the limit holds: a little queueing, which
   *      keeps the server busy, and no more than the tolerance accepts.
   *
   * Why (docs/decisions.md, decision 45): a baseline that follows latency up (Gradient2's
   * long-term average, an expiring minimum) lets the limit creep under steady overload, and
   * steady queueing never shows the evidence of step 2. No probe drops the limit to a minimum
   * (Vegas, Envoy): the controller's own cuts are the experiment. ignore() and drops never enter
   * a mean, so near-zero latencies cannot drag it; a window without a success or a drop decides
   * nothing.
   * Known limit: a service already queueing in the very first window teaches an inflated B; the
   * limit then holds near the initial one (never creeping) until a window runs below capacity.
   *
   * Invariant: minLimit <= estimate <= maxLimit.
   *
   * Field access: not thread-safe, and needs not be: only the thread closing a window calls it,
   * one close at a time, each happening-after the previous one (AdaptiveLimit's A2). baseline is
   * volatile for readers on other threads (tests).
   */

  /** How far a run of cuts must take in-flight work down before its latency can move B up. */
  private static final double SHIFT_LOAD = 0.3;

  /**
   * How many standard errors above its mean a window's latency is taken as, for the baseline: the
   * lowest of many noisy means is below the true no-load latency, further the more windows were
   * seen; this margin keeps it from drifting down with the count (decision 45).
   */
  private static final double NOISE = 2;

  private final int minLimit;
  private final int maxLimit;
  private final double tolerance;
  private final double backoff;

  private volatile double baseline; // ns, 0 until measured
  private double estimate;
  private double runLoad; // mean in-flight in the window that began the current run of cuts, or 0
  private double runLatency; // and its mean latency
  private double lowest; // the lowest window mean latency ever, ns (0 until measured)
  private double beforeCuts; // the estimate before the current run of cuts began
  private boolean cutLast; // the last window that decided cut the limit
  private double cap = Double.POSITIVE_INFINITY; // no growth above it, after a latency shift

  LimitEstimator(int minLimit, int maxLimit, double tolerance, double backoff, int initialLimit) {
    this.minLimit = minLimit;
    this.maxLimit = maxLimit;
    this.tolerance = tolerance;
    this.backoff = backoff;
    this.estimate = initialLimit;
    this.beforeCuts = initialLimit;
  }

  /**
   * The estimate after a window (steps 1 to 4 of the algorithm), clamped to the floor and ceiling,
   * which becomes the current one. An empty window (no success, no drop) changes nothing.
   */
  double decide(
      int successes, int drops, double latency, double error, double load, boolean reached) {
    double next = estimate;
    if (drops > 0) {
      runLoad = 0; // the windows after it cannot be compared with the ones before
      next = estimate * backoff;
      cutLast = true;
    } else if (successes > 0) {
      updateBaseline(latency, error, load);
      double b = baseline;
      if (latency > tolerance * b) {
        if (runLoad == 0) {
          runLoad = load; // a run of cuts begins: the reference for step 2
          runLatency = latency;
        }
        next = estimate * Math.max(0.5, Math.sqrt(tolerance) * b / latency);
        cutLast = true;
      } else {
        runLoad = 0;
        if (latency <= Math.sqrt(tolerance) * b) {
          if (reached) {
            double step = cutLast ? 1 : Math.sqrt(estimate);
            next = Math.max(estimate, Math.min(cap, estimate + step));
          }
          cutLast = false;
        }
      }
    }
    if (next >= estimate) {
      beforeCuts = next; // so after a run of cuts it is the estimate from before the first
    }
    estimate = Math.max(minLimit, Math.min(maxLimit, next));
    return estimate;
  }

  /** The limit could not be set: the estimate goes back to {@code limit}, which stays. */
  void keep(int limit) {
    estimate = limit;
  }

  /** The no-load latency estimate in nanoseconds, 0 until the first window decided. */
  double baseline() {
    return baseline;
  }

  /**
   * Step 2: the baseline after a window of mean {@code latency}, with standard error {@code error},
   * at mean in-flight {@code load}.
   */
  private void updateBaseline(double latency, double error, double load) {
    double b = baseline;
    double high = latency + NOISE * error;
    if (b == 0 || high < b) {
      b = high;
    } else if (runLoad > 0
        && load <= SHIFT_LOAD * runLoad
        && latency > runLatency * (1 + load / runLoad) / 2) {
      // The cuts took in-flight work below 30% of where they began, and latency fell by less
      // than half of what queueing predicts: it is not queueing.
      b = latency;
      cap = Math.min(cap, beforeCuts); // but admit no more than before it rose
    }
    lowest = lowest == 0 ? b : Math.min(lowest, b);
    if (latency <= tolerance * lowest || latency * tolerance < baseline) {
      // Latency is back near the old no-load level, or well below the shifted one: a shift,
      // if there was one, is over.
      b = lowest;
      cap = Double.POSITIVE_INFINITY;
    }
    baseline = b;
  }
}
