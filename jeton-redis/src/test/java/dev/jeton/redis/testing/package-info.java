/**
 * Test fixtures that run real {@code redis-server} processes: a standalone {@link
 * dev.jeton.redis.testing.RedisServer} and a {@link dev.jeton.redis.testing.RedisClusterServers
 * Redis Cluster}. They are in the test jar of jeton-redis for the tests of other modules.
 */
package dev.jeton.redis.testing;
