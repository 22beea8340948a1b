package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.Await;
import dev.jeton.redis.testing.RedisClusterServers;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Redis semaphore passes the contract on a local Redis Cluster of three primaries: every
 * semaphore's keys share a hash tag, so each script runs on the one node that owns them.
 */
class RedisClusterContractIntegrationTest extends RedisContractTestBase {
  private static RedisClusterServers cluster;
  private static String uri;

  @BeforeAll
  static void startCluster() {
    cluster = RedisClusterServers.start(3);
    List<String> seeds = new ArrayList<>();
    for (String node : cluster.uris()) {
      seeds.add(node.substring("redis://".length()));
    }
    uri = "redis-cluster://" + String.join(",", seeds);
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  @Override
  String uri() {
    return uri;
  }

  @Test
  void semaphoresSpreadOverTheNodes() throws Exception {
    for (int i = 0; i < 12; i++) {
      newSemaphore(1).acquire(1).release();
    }
    int nodesWithKeys = 0;
    for (var node : cluster.nodes()) {
      if (!node.command("DBSIZE").equals("0")) {
        nodesWithKeys++;
      }
    }
    assertEquals(3, nodesWithKeys, "twelve semaphores land on all three primaries");
    List<String> names = RedisSemaphore.list(uri, RedisSemaphoreOptions.defaults());
    assertTrue(names.size() >= 12, "list scans every primary: " + names);
  }

  @Test
  void wakeUpsReachWaitersWhateverNodeTheyListenOn() throws Exception {
    // With the fallback poll a minute away, only the published wake-up can hand the permit
    // over within the test's wait: PUBLISH inside a script reaches every node's subscribers.
    RedisSemaphoreOptions noPolling =
        RedisSemaphoreOptions.defaults().withPollInterval(java.time.Duration.ofSeconds(60));
    for (int i = 0; i < 6; i++) {
      try (RedisSemaphore holder =
              RedisSemaphore.builder("wake-" + i).uri(uri).limitIfNew(1).options(noPolling).open();
          RedisSemaphore waiter =
              RedisSemaphore.builder("wake-" + i).uri(uri).options(noPolling).open()) {
        Lease held = holder.acquire(1);
        java.util.concurrent.CompletableFuture<Lease> next = waiter.acquireLeaseAsync(1);
        while (waiter.queueLength() == 0) {
          Thread.sleep(5);
        }
        held.release();
        next.get(Await.HANG_GUARD.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)
            .releaseAsync()
            .get();
      }
    }
  }
}
