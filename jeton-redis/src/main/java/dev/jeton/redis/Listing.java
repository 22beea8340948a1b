package dev.jeton.redis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The semaphores (or rate limiters) in a Redis: the keys of their states, under one key prefix. */
final class Listing {
  private Listing() {}

  /**
   * The names of the semaphores that {@code opened} reaches under {@code options}' key prefix,
   * sorted, less any no semaphore can have (a key someone else made); closes the link.
   */
  static List<String> names(Link opened, RedisSemaphoreOptions options) {
    return names(opened, options.keyPrefix(), "}:state");
  }

  /**
   * The names in the keys {@code {<keyPrefix>:<name><suffix>} that {@code opened} reaches ({@code
   * suffix} {@code "}:state"} for semaphores, {@code "}:rate"} for rate limiters), sorted, less any
   * that is no name; closes the link.
   */
  static List<String> names(Link opened, String keyPrefix, String suffix) {
    String prefix = "{" + keyPrefix + ":";
    try (Link link = opened) {
      List<String> names = new ArrayList<>();
      for (String key : link.keys(prefix + "*" + suffix)) {
        String name = key.substring(prefix.length(), key.length() - suffix.length());
        if (isName(name)) { // not a key someone else made, which no handle could open
          names.add(name);
        }
      }
      Collections.sort(names);
      return names;
    }
  }

  private static boolean isName(String text) {
    try {
      RedisSemaphoreOptions.checkKeyPart("name", text);
      return true;
    } catch (IllegalArgumentException notAName) {
      return false;
    }
  }
}
