package dev.jeton.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * A Lettuce client that a handle opened itself (from a URI), with resources of its own, and the
 * threads those resources started, so that closing it can wait until they have ended.
 *
 * <p>Why wait for the threads: Lettuce's shutdown completes while its threads are still on their
 * way out, and a JVM that exits while one of its threads is in native code (an I/O thread still in
 * its selector) waits 300 ms first. A short program, such as {@code jeton run --redis}, that exits
 * right after closing paid that a third of the time (decision 60).
 */
final class OwnClient {
  private final AbstractRedisClient client;
  private final ClientResources resources;
  private final List<Thread> threads;

  private OwnClient(AbstractRedisClient client, ClientResources resources, List<Thread> threads) {
    this.client = client;
    this.resources = resources;
    this.threads = threads;
  }

  /** A client of one server, or of a server found through Sentinel. */
  static OwnClient standalone(RedisURI uri, ClientOptions options) {
    List<Thread> threads = new CopyOnWriteArrayList<>();
    ClientResources resources = resources(threads);
    LeanRedisClient client = new LeanRedisClient(resources, uri);
    client.setOptions(options);
    return new OwnClient(client, resources, threads);
  }

  /** A client of a Redis Cluster, which it finds from {@code seeds}. */
  static OwnClient cluster(List<RedisURI> seeds, ClusterClientOptions options) {
    List<Thread> threads = new CopyOnWriteArrayList<>();
    ClientResources resources = resources(threads);
    RedisClusterClient client = RedisClusterClient.create(resources, seeds);
    client.setOptions(options);
    return new OwnClient(client, resources, threads);
  }

  /**
   * Lettuce's default resources, but one I/O thread and one event thread (a handle has two
   * connections, one of them all but idle, where the defaults start one of each per core), whose
   * threads (daemons, named as Lettuce names them) are kept.
   */
  private static ClientResources resources(List<Thread> threads) {
    return DefaultClientResources.builder()
        .ioThreadPoolSize(1)
        .computationThreadPoolSize(1)
        .threadFactoryProvider(
            poolName -> {
              ThreadFactory netty = new DefaultThreadFactory(poolName, true);
              return task -> {
                Thread thread = netty.newThread(task);
                threads.add(thread);
                return thread;
              };
            })
        .build();
  }

  AbstractRedisClient client() {
    return client;
  }

  /** Closes the client's connections, then its resources; completes when both are done. */
  CompletableFuture<Void> shutdownAsync() {
    CompletableFuture<Void> done = new CompletableFuture<>();
    client
        .shutdownAsync(0, 2, TimeUnit.SECONDS)
        .whenComplete(
            (closed, failure) ->
                resources
                    .shutdown(0, 2, TimeUnit.SECONDS)
                    .addListener(stopped -> done.complete(null)));
    return done;
  }

  /**
   * Waits until every thread the resources started has ended, for at most {@code limit}; the caller
   * must not be one of them.
   */
  void awaitThreadsEnded(Duration limit) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    for (Thread thread : threads) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      TimeUnit.NANOSECONDS.timedJoin(thread, left);
    }
  }
}
