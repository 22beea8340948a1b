/** Jeton Micrometer: meters for Jeton's semaphores in a Micrometer registry. */
module dev.jeton.micrometer {
  requires transitive dev.jeton.core;
  requires transitive micrometer.core;
  // Nullness annotations only: a user needs them neither to compile nor to run (decision 36).
  requires static org.jspecify;

  exports dev.jeton.micrometer;
}
