package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The instants {@code rate.lua} gives, read from its answers on Redis's clock: exact to the
 * microsecond, and within {@code burst + rate * t} over every window, with calls from several
 * connections at once, give-backs among them.
 */
class RedisRateScheduleIntegrationTest extends RedisServerPerTest {
  private static final String KEY = "{test:schedule}:rate";

  /** One admitted request: its instant on Redis's clock, in microseconds, and weight. */
  private record Instant(long micros, int weight) {}

  private RateReply call(Link link, String... args) {
    return RateReply.parse(
        Calls.join(link.run(Library.RATE_FUNCTION, new String[] {KEY}, args)), KEY);
  }

  private Link link() {
    Link link = LettuceLink.connect(server.uri());
    toClose.add(link);
    return link;
  }

  @Test
  void reservationsFallOnExactThirdsOfASecond() {
    RedisRate rate = RedisRate.of(3, Duration.ofSeconds(1), 1);
    Link link = link();
    long first = -1;
    // 300 requests in a row: a hundred seconds of instants, each at ceil(k/3 s) after the first
    for (int k = 0; k < 300; k++) {
      RateReply reply = call(link, "a", "1", "-1", rate.createArgument(), "0");
      assertEquals('A', reply.code());
      long instant = reply.nowMicros() + reply.waitMicros();
      if (k == 0) {
        first = instant;
        assertEquals(0, reply.waitMicros());
      }
      long exact = (k * 1_000_000L + 2) / 3; // ceil(k * 10^6 / 3)
      assertEquals(first + exact, instant, "request " + k);
    }
  }

  @Test
  void everyWindowHoldsTheBoundWithConcurrentCallsAndGiveBacks() throws Exception {
    int burst = 5;
    long intervalMicros = 500; // 2,000 a second
    RedisRate rate = RedisRate.of(2000, Duration.ofSeconds(1), burst);
    List<CompletableFuture<List<Instant>>> clients = new ArrayList<>();
    for (int c = 0; c < 4; c++) {
      Link link = link();
      long seed = 42 + c;
      clients.add(CompletableFuture.supplyAsync(() -> run(link, rate, new SplittableRandom(seed))));
    }
    List<Instant> admitted = new ArrayList<>();
    for (CompletableFuture<List<Instant>> client : clients) {
      admitted.addAll(client.get(2, TimeUnit.MINUTES));
    }
    admitted.sort(Comparator.comparingLong(Instant::micros));
    assertTrue(admitted.size() > 300, "admitted " + admitted.size());
    for (int i = 0; i < admitted.size(); i++) {
      long weight = 0;
      for (int j = i; j < admitted.size(); j++) {
        weight += admitted.get(j).weight();
        long window = admitted.get(j).micros() - admitted.get(i).micros();
        // weight <= burst + window / T, in integers
        assertTrue(
            (weight - burst) * intervalMicros <= window,
            weight + " passed in " + window + " µs from instant " + i);
      }
    }
  }

  /** A client's calls: waits of every kind, tries, and give-backs of its last reservations. */
  private List<Instant> run(Link link, RedisRate rate, SplittableRandom random) {
    List<Instant> admitted = new ArrayList<>();
    for (int n = 0; n < 700; n++) {
      int weight = 1 + random.nextInt(3);
      String maxWait = List.of("-1", "0", "1000", "3000").get(random.nextInt(4));
      RateReply reply =
          call(link, "a", Integer.toString(weight), maxWait, rate.createArgument(), "0");
      if (reply.code() != 'A') {
        continue;
      }
      Instant instant = new Instant(reply.nowMicros() + reply.waitMicros(), weight);
      if (random.nextInt(10) == 0) {
        String answer =
            RateReply.text(
                Calls.join(
                    link.run(
                        Library.RATE_FUNCTION,
                        new String[] {KEY},
                        new String[] {
                          "g",
                          Integer.toString(weight),
                          Long.toString(reply.tatMicros()),
                          Long.toString(reply.tatFraction())
                        })));
        if (answer.equals("G 1")) {
          continue; // given back: it never passes
        }
      }
      admitted.add(instant);
      if (reply.waitMicros() > 2000) {
        sleepMicros(reply.waitMicros() / 2); // let the backlog drain sometimes
      }
    }
    return admitted;
  }

  private static void sleepMicros(long micros) {
    try {
      TimeUnit.MICROSECONDS.sleep(micros);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
