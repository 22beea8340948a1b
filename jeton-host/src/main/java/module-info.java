/**
 * Jeton host: a {@link dev.jeton.Semaphore} and a {@link dev.jeton.RateLimiter} shared by every
 * process of one machine.
 */
module dev.jeton.host {
  requires transitive dev.jeton.core;
  requires jdk.security.auth; // the uid and groups of this process, to check directories
  // Nullness annotations only: a user needs them neither to compile nor to run (decision 36).
  requires static org.jspecify;
  // @GuardedBy only, checked when compiling (decision 91).
  requires static com.google.errorprone.annotations;

  exports dev.jeton.host;
}
