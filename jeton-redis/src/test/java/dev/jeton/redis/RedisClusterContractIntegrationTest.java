package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
  }
}
