package dev.jeton.micrometer;

import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;

/** What the binders share: the tags every meter of one measured object carries. */
final class Meters {
  private Meters() {}

  /**
   * {@code tags} and {@code name=<name>}.
   *
   * @param what what is measured, for the message ("a semaphore")
   * @throws IllegalArgumentException if {@code name} is blank
   */
  static Tags tags(String name, String what, Tag... tags) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException(
          "the name tag of " + what + "'s meters is blank: '" + name + "'");
    }
    return Tags.of(Objects.requireNonNull(tags, "tags")).and("name", name);
  }
}
