package dev.jeton.redis;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The check a protected resource runs on each write, to reject a holder whose lease expired while
 * it was paused (a GC pause, SIGSTOP, a slow network) and was granted to someone else.
 *
 * <p>The resource remembers, per slot, the highest token it has accepted. A write carrying a
 * lease's tokens is accepted only if none of them is below what was seen for its slot; accepting it
 * raises the remembered tokens. Once the new holder of a slot has written, the old holder's writes
 * are refused. This class keeps the tokens in memory; a resource elsewhere keeps them where it
 * keeps its data and does the same compare-and-raise atomically with the write, for example in SQL:
 * {@code UPDATE fence SET token = :token WHERE slot = :slot AND token <= :token} (no row updated:
 * reject).
 *
 * <p>Fencing cannot stop a stale holder that writes before the new holder's first write; it makes
 * sure the stale write cannot land after it.
 */
public final class FencingGuard {
  @GuardedBy("this")
  private final Map<Integer, Long> highest = new HashMap<>();

  /**
   * Accepts {@code tokens}, raising the remembered tokens, unless one is stale.
   *
   * @param tokens a holder's fencing tokens
   * @return true if accepted; false if a token is below one seen before for its slot
   */
  public synchronized boolean admit(List<FencingToken> tokens) {
    for (FencingToken t : tokens) {
      if (t.token() < highest.getOrDefault(t.slot(), Long.MIN_VALUE)) {
        return false;
      }
    }
    for (FencingToken t : tokens) {
      highest.merge(t.slot(), t.token(), Math::max);
    }
    return true;
  }

  /**
   * Like {@link #admit(List)}, but throws if a token is stale.
   *
   * @param tokens a holder's fencing tokens
   * @throws Lease.StaleLeaseException naming the stale slot and the token seen
   */
  public synchronized void check(List<FencingToken> tokens) {
    for (FencingToken t : tokens) {
      long seen = highest.getOrDefault(t.slot(), Long.MIN_VALUE);
      if (t.token() < seen) {
        throw new Lease.StaleLeaseException(
            "stale lease: slot "
                + t.slot()
                + " has token "
                + seen
                + ", this holder has "
                + t.token());
      }
    }
    admit(tokens);
  }
}
