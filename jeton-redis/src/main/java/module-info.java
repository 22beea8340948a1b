/** Jeton Redis: a {@link dev.jeton.Semaphore} shared by a fleet of machines through Redis. */
module dev.jeton.redis {
  requires transitive dev.jeton.core;
  requires transitive lettuce.core;
  requires io.netty.common; // ThreadExecutorMap: is this thread an event loop?
  requires static transitive org.jspecify;

  exports dev.jeton.redis;
}
