package dev.jeton.bench;

/** Sanity checks run after a benchmark, so that a broken run fails instead of reporting. */
final class Checks {
  private Checks() {}

  /** Fails unless all {@code limit} permits of {@code limiter} are free again. */
  static void allFree(Limiter limiter, int limit) {
    int available = limiter.available();
    if (available != limit) {
      throw new IllegalStateException(
          "permits leaked: "
              + available
              + " of "
              + limit
              + " free after the run, "
              + limiter.unwrap());
    }
  }
}
