package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The function's replies and wake-up messages, decoded without a Redis. */
class ReplyTest {

  @Test
  void reply_readsCountsTimeAndItems() {
    Reply reply =
        new Reply(
            List.of(
                3L,
                2L,
                1L,
                "1700000000123",
                List.of("a", "granted", "1700000010123", "0:41,1:42"),
                List.of("b", "queued")));
    assertEquals(3, reply.limit);
    assertEquals(2, reply.used);
    assertEquals(1, reply.queued);
    assertEquals(1700000000123L, reply.serverMillis);
    assertEquals(2, reply.items.size());
    List<Object> granted = reply.item(0);
    assertEquals("a", Reply.id(granted));
    assertEquals("granted", Reply.status(granted));
    assertEquals(1700000010123L, Reply.expiry(granted));
    assertEquals(List.of(new FencingToken(0, 41), new FencingToken(1, 42)), Reply.tokens(granted));
    assertEquals("queued", Reply.status(reply.item(1)));
  }

  @Test
  void reply_readsTheOneStringTheFunctionAnswersWith() {
    Reply reply =
        new Reply(List.of("3 2 1 1700000000123 a|granted|1700000010123|0:41,1:42 b|queued"));
    assertEquals(3, reply.limit);
    assertEquals(2, reply.used);
    assertEquals(1, reply.queued);
    assertEquals(1700000000123L, reply.serverMillis);
    assertEquals(
        List.of(List.of("a", "granted", "1700000010123", "0:41,1:42"), List.of("b", "queued")),
        reply.items);
    assertEquals(
        List.of(new FencingToken(0, 41), new FencingToken(1, 42)), Reply.tokens(reply.item(0)));

    Reply missing = new Reply(List.of("-1 0 0 5"));
    assertEquals(-1, missing.limit);
    assertEquals(5, missing.serverMillis);
    assertEquals(List.of(), missing.items);
  }

  @Test
  void reply_ofAMissingSemaphore_hasLimitMinusOne() {
    Reply reply = new Reply(List.of(-1L, 0L, 0L, "5"));
    assertEquals(-1, reply.limit);
    assertEquals(List.of(), reply.items);
  }

  @Test
  void leaseInfos_readStatusRows() {
    List<Object> holder = List.of("h", 2L, "1000", "host\t42\tann\tdeploy.sh", "61000", "3:9");
    List<Object> waiter = List.of("w", 1L, "2000", "other\tx", "", "");
    Reply reply = new Reply(List.of(4L, 2L, 1L, "3000", List.of(holder), List.of(waiter)));

    LeaseInfo h = reply.leaseInfos(0).get(0);
    assertEquals("h", h.id());
    assertEquals(2, h.permits());
    assertEquals("host", h.host());
    assertEquals(42, h.pid());
    assertEquals("ann", h.user());
    assertEquals("deploy.sh", h.owner());
    assertEquals(Instant.ofEpochMilli(1000), h.since());
    assertEquals(Instant.ofEpochMilli(61000), h.expiresAt());
    assertEquals(List.of(new FencingToken(3, 9)), h.fencingTokens());

    LeaseInfo w = reply.leaseInfos(1).get(0);
    assertEquals(-1, w.pid(), "a pid that is not a number");
    assertEquals("?", w.user());
    assertNull(w.expiresAt());
    assertEquals(List.of(), w.fencingTokens());
  }

  @Test
  void wake_readsEachEntryAsAnItem() {
    Reply.Wake wake = Reply.Wake.parse("1700000000123 a|granted|1700000010123|0:41 b|cancelled");
    assertNotNull(wake);
    assertEquals(1700000000123L, wake.serverMillis());
    assertEquals(
        List.of(List.of("a", "granted", "1700000010123", "0:41"), List.of("b", "cancelled")),
        wake.items());
    assertEquals(List.of(new FencingToken(0, 41)), Reply.tokens(wake.items().get(0)));
  }

  @Test
  void wake_keepsEmptyFieldsAndSkipsEntriesWithoutABar() {
    Reply.Wake wake = Reply.Wake.parse("7 a|granted|9| junk  b|expired");
    assertNotNull(wake);
    assertEquals(List.of(List.of("a", "granted", "9", ""), List.of("b", "expired")), wake.items());
  }

  @Test
  void wake_fromAnotherVersion_isIgnored() {
    assertNull(Reply.Wake.parse("hello a|granted"));
    assertNull(Reply.Wake.parse(""));
  }

  @Test
  void wake_withNothingSettled_hasNoItems() {
    Reply.Wake wake = Reply.Wake.parse("12");
    assertNotNull(wake);
    assertEquals(List.of(), wake.items());
  }
}
