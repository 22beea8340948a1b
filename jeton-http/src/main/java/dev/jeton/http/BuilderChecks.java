package dev.jeton.http;

import dev.jeton.Semaphore;
import java.time.Duration;
import java.util.Objects;

/**
 * The checks of {@link AdmissionControl.Builder}: each setter's value, which fails with an {@link
 * IllegalArgumentException} naming it, and the combinations that {@code build()} refuses with an
 * {@link IllegalStateException} naming them.
 */
final class BuilderChecks {
  /**
   * The largest limit of Jeton's in-process semaphores, plain and keyed (2<sup>30</sup>-1, as
   * {@code Semaphore.Builder.limit} documents; the constant itself is not exported by jeton-core).
   */
  static final int MAX_LIMIT = (1 << 30) - 1;

  private BuilderChecks() {}

  /** Throws if {@code b}'s settings cannot work together; see {@code Builder.build()}. */
  static void checkCombination(AdmissionControl.Builder<?> b) {
    Semaphore given = b.semaphore;
    if (b.adaptive != null) {
      if (b.partitionKey != null) {
        throw new IllegalStateException(
            "adaptive(...) cannot be combined with partitionBy(...): the adaptive limit moves"
                + " one semaphore's limit, and partitions have one per key");
      }
      if (b.limit != 0 || given != null) {
        throw new IllegalStateException(
            "adaptive(...) brings its own semaphore: do not set "
                + (b.limit != 0 ? "limit(int)" : "semaphore(Semaphore)")
                + " as well");
      }
    } else if (b.partitionKey != null) {
      if (given != null) {
        throw new IllegalStateException(
            "partitionBy(...) limits with its own in-process keyed semaphore; use limit(int)"
                + " for a global limit, not semaphore(Semaphore)");
      }
    } else if ((b.limit == 0) == (given == null)) {
      throw new IllegalStateException(
          "set exactly one of limit(int) and semaphore(Semaphore) before build(), "
              + (given == null ? "neither was set" : "both were set"));
    }
    String order = b.lifo ? "lifo()" : b.priority != null ? "priority(...)" : null;
    if (order != null && b.maxWait == null) {
      throw new IllegalStateException(
          order + " orders the queue: set queue(maxQueue, maxWait) too");
    }
    if (b.lifo && b.priority != null) {
      throw new IllegalStateException(
          "lifo() and priority(...) cannot be combined: aging favours the oldest request,"
              + " LIFO the newest");
    }
    if (order != null && b.partitionKey != null) {
      throw new IllegalStateException(
          order
              + " cannot be combined with partitionBy(...): partitioned requests wait in"
              + " their key's semaphore, first come first served");
    }
    if (b.maxQueuedTotal != 0 && (b.partitionKey == null || b.maxWait == null)) {
      throw new IllegalStateException(
          "maxQueuedTotal(n) bounds the queues of all keys together: set partitionBy(...) and"
              + " queue(maxQueue, maxWait) too");
    }
  }

  /** A limit of a semaphore: from 1 to the largest that Jeton's semaphores take. */
  static int checkLimit(String name, int value) {
    checkAtLeastOne(name, value);
    if (value > MAX_LIMIT) {
      throw new IllegalArgumentException(
          name
              + " must be at most "
              + MAX_LIMIT
              + " (the largest limit of a semaphore), was "
              + value);
    }
    return value;
  }

  static int checkAtLeastOne(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, was " + value);
    }
    return value;
  }

  static Duration checkPositive(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, was " + value);
    }
    return value;
  }
}
