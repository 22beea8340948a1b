/**
 * A semaphore shared by a fleet of machines through Redis: {@link dev.jeton.redis.RedisSemaphore},
 * whose permits are {@link dev.jeton.redis.Lease leases} with fencing tokens.
 */
@NullMarked
package dev.jeton.redis;

import org.jspecify.annotations.NullMarked;
