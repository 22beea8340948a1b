package dev.jeton.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A permit's fencing token: the slot it occupies (0 to limit - 1) and a number that grows with
 * every grant of that slot. Two leases never hold one slot at once, so of two tokens for a slot the
 * higher is the newer holder.
 *
 * @param slot the slot index
 * @param token the slot's token for this grant
 */
public record FencingToken(int slot, long token) {

  /**
   * Formats tokens as {@code jeton run} passes them to its child.
   *
   * @param tokens the tokens
   * @return them as {@code slot:token,slot:token}
   */
  public static String format(List<FencingToken> tokens) {
    return tokens.stream().map(t -> t.slot + ":" + t.token).collect(Collectors.joining(","));
  }

  /**
   * Parses {@link #format(List)}'s output.
   *
   * @param text tokens as {@code slot:token,slot:token}, or empty
   * @return the tokens
   * @throws IllegalArgumentException if {@code text} is not in that form
   */
  public static List<FencingToken> parse(String text) {
    List<FencingToken> tokens = new ArrayList<>();
    if (text.isEmpty()) {
      return tokens;
    }
    for (String pair : text.split(",", -1)) {
      int colon = pair.indexOf(':');
      try {
        if (colon < 0) {
          throw new NumberFormatException("no colon");
        }
        tokens.add(
            new FencingToken(
                Integer.parseInt(pair.substring(0, colon)),
                Long.parseLong(pair.substring(colon + 1))));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "fencing tokens must look like 'slot:token,slot:token', not '" + text + "'", e);
      }
    }
    return tokens;
  }
}
