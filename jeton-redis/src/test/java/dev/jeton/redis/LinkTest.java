package dev.jeton.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisCommandExecutionException;
import org.junit.jupiter.api.Test;

/** What a caller sees when Redis cannot run the semaphore's function. */
class LinkTest {
  @Test
  void redisWithoutFunctions_isToldToUpgrade() {
    // What Redis 6 answers to FCALL; no Redis 6 runs here, so its reply is given as Redis sends it.
    RedisCommandExecutionException old =
        new RedisCommandExecutionException(
            "ERR unknown command 'FCALL', with args beginning with: 'jeton_0123' ");
    Throwable explained = Library.explain(old);
    assertTrue(
        explained.getMessage().startsWith("Jeton needs Redis 7.0 or later"),
        explained.getMessage());
    assertSame(old, explained.getCause());
  }

  @Test
  void otherFailures_passThroughUnchanged() {
    RedisCommandExecutionException other = new RedisCommandExecutionException("ERR something");
    assertSame(other, Library.explain(other));
    assertSame(null, Library.explain(null));
  }

  @Test
  void theLibraryRegistersTheFunctionItIsNamedAfter_andTheRateLimiters() {
    assertTrue(Library.LIBRARY.startsWith("#!lua name=" + Library.FUNCTION + "\n"));
    assertTrue(
        Library.LIBRARY.endsWith(
            "redis.register_function('"
                + Library.FUNCTION
                + "', semaphore)\nredis.register_function('"
                + Library.RATE_FUNCTION
                + "', rate)\n"));
    assertEquals(Library.FUNCTION + "_rate", Library.RATE_FUNCTION);
    assertTrue(Library.FUNCTION.matches("jeton_[0-9a-f]{16}"), Library.FUNCTION);
  }

  @Test
  void digest_isSixteenHexDigits_andChangesWithAnyCharacter() {
    assertEquals("0000000000000000", Library.digest(""));
    String code = "local x = 1\nreturn x\n";
    java.util.Set<String> seen = new java.util.HashSet<>();
    seen.add(Library.digest(code));
    for (int i = 0; i < code.length(); i++) {
      String changed = code.substring(0, i) + (char) (code.charAt(i) + 1) + code.substring(i + 1);
      String digest = Library.digest(changed);
      assertTrue(digest.matches("[0-9a-f]{16}"), digest);
      assertTrue(seen.add(digest), "a change at " + i + " gave a digest seen before");
    }
  }
}
