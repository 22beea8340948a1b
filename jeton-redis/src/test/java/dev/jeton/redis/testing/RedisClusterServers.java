package dev.jeton.redis.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A local Redis Cluster of real {@code redis-server} processes, all primaries, no replicas, for
 * tests.
 *
 * <pre>{@code
 * try (RedisClusterServers cluster = RedisClusterServers.start(3)) {
 *   RedisClusterClient client = RedisClusterClient.create(cluster.uri());
 *   ...
 * }
 * }</pre>
 *
 * <p>The 16384 slots are split into even ranges, the first range to the first node. The cluster is
 * formed with plain cluster commands rather than {@code redis-cli --cluster create}, so only {@code
 * redis-server} is needed. Each node is a {@link RedisServer} with its own directory and the same
 * lack of persistence; {@link RedisServer#restart() restarting} one empties it but keeps its node
 * id and slots, and it reports {@code cluster_state:ok} again about two seconds later.
 */
public final class RedisClusterServers implements AutoCloseable {
  private static final int SLOTS = 16384;
  private static final Duration FORM_TIMEOUT = Duration.ofMinutes(2); // a hang guard

  private final List<RedisServer> nodes;

  private RedisClusterServers(List<RedisServer> nodes) {
    this.nodes = List.copyOf(nodes);
  }

  /**
   * Starts {@code primaries} nodes, forms them into a cluster, and returns once every node sees the
   * cluster as {@code ok}, with all nodes and all slots known.
   *
   * @throws IllegalStateException if there is no {@code redis-server}, or the cluster does not form
   *     within 30 seconds; the message then tells what each node sees
   */
  public static RedisClusterServers start(int primaries) {
    if (primaries < 1 || primaries > SLOTS) {
      throw new IllegalArgumentException("primaries must be in [1, " + SLOTS + "]: " + primaries);
    }
    List<RedisServer> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < primaries; i++) {
        nodes.add(RedisServer.start(true));
      }
      RedisClusterServers cluster = new RedisClusterServers(nodes);
      cluster.form();
      return cluster;
    } catch (RuntimeException e) {
      for (RedisServer node : nodes) {
        try {
          node.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  /** Starts a cluster of three primaries, the fewest {@code redis-cli --cluster create} allows. */
  public static RedisClusterServers start() {
    return start(3);
  }

  /** The nodes, the first owning the lowest slots. */
  public List<RedisServer> nodes() {
    return nodes;
  }

  /** The URI of every node, in the order of {@link #nodes()}. */
  public List<String> uris() {
    return nodes.stream().map(RedisServer::uri).toList();
  }

  /** The URI of the first node, from which a cluster client discovers the others. */
  public String uri() {
    return nodes.get(0).uri();
  }

  /** Kills every node and deletes their directories. */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (RedisServer node : nodes) {
      try {
        node.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void form() {
    int count = nodes.size();
    for (int i = 0; i < count; i++) {
      RedisServer node = nodes.get(i);
      // Distinct epochs from the start, as redis-cli gives them, spare the nodes resolving a
      // collision before they agree on who owns what.
      expectOk(node, "CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1));
      // ADDSLOTS with every slot listed, not ADDSLOTSRANGE, which Redis before 7.0 lacks.
      int first = (int) ((long) i * SLOTS / count);
      int end = (int) ((long) (i + 1) * SLOTS / count);
      List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
      for (int slot = first; slot < end; slot++) {
        command.add(Integer.toString(slot));
      }
      expectOk(node, command.toArray(String[]::new));
    }
    // Meeting the first node is enough: gossip introduces the others to each other.
    for (int i = 1; i < count; i++) {
      expectOk(nodes.get(0), "CLUSTER", "MEET", "127.0.0.1", Integer.toString(nodes.get(i).port()));
    }
    awaitFormed();
  }

  private void awaitFormed() {
    long deadline = System.nanoTime() + FORM_TIMEOUT.toNanos();
    while (true) {
      List<String> views = new ArrayList<>();
      boolean formed = true;
      for (RedisServer node : nodes) {
        Map<String, String> info = clusterInfo(node);
        formed &=
            "ok".equals(info.get("cluster_state"))
                && Integer.toString(SLOTS).equals(info.get("cluster_slots_assigned"))
                && Integer.toString(nodes.size()).equals(info.get("cluster_known_nodes"));
        views.add(node + ": " + info);
      }
      if (formed) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        StringBuilder message =
            new StringBuilder(
                "the Redis Cluster did not form within " + FORM_TIMEOUT.toSeconds() + " s:");
        for (int i = 0; i < nodes.size(); i++) {
          message.append('\n').append(views.get(i)).append(nodes.get(i).logTail());
        }
        throw new IllegalStateException(message.toString());
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while the Redis Cluster was forming", e);
      }
    }
  }

  /** The fields of {@code CLUSTER INFO}, or the reason there are none. */
  private static Map<String, String> clusterInfo(RedisServer node) {
    Map<String, String> fields = new HashMap<>();
    Object reply;
    try {
      reply = node.call("CLUSTER", "INFO");
    } catch (RuntimeException e) {
      fields.put("error", e.getMessage());
      return fields;
    }
    for (String line : Resp.render(reply).lines().toList()) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        fields.put(line.substring(0, colon), line.substring(colon + 1));
      }
    }
    return fields;
  }

  private static void expectOk(RedisServer node, String... command) {
    Object reply = node.call(command);
    if (!"OK".equals(reply)) {
      throw new IllegalStateException(
          String.join(" ", List.of(command).subList(0, Math.min(command.length, 4)))
              + (command.length > 4 ? " ..." : "")
              + " on "
              + node
              + " replied "
              + Resp.render(reply)
              + node.logTail());
    }
  }
}
