package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RedisPing}: the hosts it reads from a URI, and the ends where nothing answers. Its answer
 * from a real Redis, running and stopped, is tested with the command, in
 * JetonRedisCommandIntegrationTest.
 */
class RedisPingTest {
  @Test
  void addresses_areTheHostsOfTheAuthority_withTheirPortsOrTheDefault() {
    assertEquals(
        List.of(at("h1", 26379), at("h2", 26380)),
        RedisPing.addresses("user:p@ss:w@h1,h2:26380/0#mymaster", 26379));
    assertEquals(List.of(at("::1", 6380)), RedisPing.addresses("[::1]:6380?timeout=1s", 6379));
    assertEquals(List.of(at("redis.example", 6379)), RedisPing.addresses("redis.example", 6379));
  }

  @Test
  void aServerThatAcceptsButNeverAnswers_orAUriItCannotRead_isNotAnAnswer() throws Exception {
    try (ServerSocket silent = new ServerSocket(0)) { // the kernel accepts; no one reads
      assertFalse(
          RedisPing.answers("redis://127.0.0.1:" + silent.getLocalPort(), Duration.ofMillis(300)));
    }
    assertFalse(RedisPing.answers("no scheme", Duration.ofMillis(300)));
    assertFalse(RedisPing.answers("redis://host:notaport", Duration.ofMillis(300)));
    assertFalse(
        RedisPing.answers("redis-socket:///nonexistent/redis.sock", Duration.ofMillis(300)));
  }

  private static InetSocketAddress at(String host, int port) {
    return InetSocketAddress.createUnresolved(host, port);
  }
}
