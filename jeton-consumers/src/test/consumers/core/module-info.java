/** A user's module that needs only the in-process semaphore. */
module demo.core {
  requires dev.jeton.core;
}
