package dev.jeton;

/**
 * Named priorities for a {@link PriorityScheduler}: a small fixed set over its integer priorities,
 * where a higher value runs first. Any {@code int} is a valid priority; these are the usual ones.
 */
public enum Priority {
  /** Runs after everything else: -1. */
  LOW(-1),
  /** The default: 0. */
  NORMAL(0),
  /** Runs before normal work: 1. */
  HIGH(1),
  /** Runs before everything else: 2. */
  CRITICAL(2);

  private final int value;

  Priority(int value) {
    this.value = value;
  }

  /** The integer priority this name stands for; higher runs first. */
  public int value() {
    return value;
  }
}
