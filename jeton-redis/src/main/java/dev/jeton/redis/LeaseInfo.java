package dev.jeton.redis;

import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A holder or a waiter of a {@link RedisSemaphore}, as {@link RedisSemaphore#status()} shows it.
 *
 * @param id the request id (for a holder, its lease id)
 * @param permits how many permits it holds or asks for (0: an {@code awaitIdle} waiter)
 * @param host the host it runs on
 * @param pid its process id
 * @param user the user it runs as
 * @param owner what it says it is (by default its command line)
 * @param since when it was granted its lease, or queued, by the Redis server's clock
 * @param expiresAt for a holder, when its lease expires unless renewed; null for a waiter
 * @param fencingTokens for a holder, its fencing tokens; empty for a waiter
 */
public record LeaseInfo(
    String id,
    int permits,
    String host,
    long pid,
    String user,
    String owner,
    Instant since,
    @Nullable Instant expiresAt,
    List<FencingToken> fencingTokens) {

  /** Reads {id, weight, since ms, "host\tpid\tuser\towner", expiry ms or '', tokens or ''}. */
  static LeaseInfo of(List<?> entry) {
    String[] who = ((String) entry.get(3)).split("\t", 4);
    long pid;
    try {
      pid = who.length > 1 ? Long.parseLong(who[1]) : -1;
    } catch (NumberFormatException e) {
      pid = -1;
    }
    String expiry = (String) entry.get(4);
    return new LeaseInfo(
        (String) entry.get(0),
        ((Long) entry.get(1)).intValue(),
        who[0],
        pid,
        who.length > 2 ? who[2] : "?",
        who.length > 3 ? who[3] : "?",
        Instant.ofEpochMilli(Long.parseLong((String) entry.get(2))),
        expiry.isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(expiry)),
        FencingToken.parse((String) entry.get(5)));
  }
}
