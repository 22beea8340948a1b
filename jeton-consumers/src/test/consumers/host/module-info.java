/** A user's module that needs the machine-wide semaphore. */
module demo.host {
  requires dev.jeton.host;
}
