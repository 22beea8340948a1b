/** A user's module that needs the fleet-wide semaphore. */
module demo.redis {
  requires dev.jeton.redis;
}
