/**
 * Jeton Redis: a {@link dev.jeton.Semaphore} and a {@link dev.jeton.RateLimiter} shared by a fleet
 * of machines through Redis.
 */
module dev.jeton.redis {
  requires transitive dev.jeton.core;
  requires transitive lettuce.core;
  // Lettuce is an automatic module, so it cannot say that it needs Netty, whose modules are
  // explicit since 4.2 and so are not resolved unless a module requires them: without these, a
  // modular application fails at run time (NoClassDefFoundError: io/netty/...).
  requires io.netty.handler; // and through it transport, buffer, codec, resolver, common
  requires io.netty.common; // ThreadExecutorMap: is this thread an event loop?
  requires io.netty.resolver.dns; // Lettuce's default resolver when present, as on the class path
  // The client of Builder.jedis(), which a user adds when they want it (decision 62).
  requires static redis.clients.jedis;
  // Nullness annotations only: a user needs them neither to compile nor to run (decision 36).
  requires static org.jspecify;
  // @GuardedBy only, checked when compiling (decision 91).
  requires static com.google.errorprone.annotations;

  exports dev.jeton.redis;
}
