/** Jeton Micrometer: meters for Jeton's semaphores and HTTP admission control. */
module dev.jeton.micrometer {
  requires transitive dev.jeton.core;
  requires transitive micrometer.core;
  // AdmissionMetrics only: an application that measures an AdmissionControl has jeton-http.
  requires static dev.jeton.http;
  // Nullness annotations only: a user needs them neither to compile nor to run (decision 36).
  requires static org.jspecify;

  exports dev.jeton.micrometer;
}
