/** Jeton host: a {@link dev.jeton.Semaphore} shared by every process of one machine. */
module dev.jeton.host {
  requires transitive dev.jeton.core;
  requires jdk.security.auth; // the uid and groups of this process, to check directories
  requires static org.jspecify; // annotations only: not needed to compile against this module, nor to run it

  exports dev.jeton.host;
}
