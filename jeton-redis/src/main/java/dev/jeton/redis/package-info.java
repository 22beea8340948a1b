/** A semaphore shared by a fleet of machines through Redis: {@link dev.jeton.redis.RedisSemaphore}. */
@NullMarked
package dev.jeton.redis;

import org.jspecify.annotations.NullMarked;
