package dev.jeton.redis;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What the semaphore's Redis function says, decoded: a reply to a call (the counts, the server's
 * time, then one item per request or lease the call named) and a wake-up message (grants and other
 * outcomes announced to the handle that queued them). The codec between {@code semaphore.lua} and
 * the rest of this package: nothing else reads the function's formats.
 *
 * <p>An item is {@code [id, status]}, followed for a grant or a renewal by the lease's expiry
 * (server milliseconds) and, for a grant, its fencing tokens ({@code slot:token,...}); for a
 * request refused ({@code quarantined}) or queued in quarantine, by when the quarantine ends.
 *
 * <p>A reply comes as one string, {@code limit used queued server-ms item...} with each item {@code
 * id|status|...}, as a wake-up's items come (a list of lists cost Redis more to send than the rest
 * of the call's reply); {@code status}'s reply comes as a list, {@code [limit, used, queued,
 * server-ms, holders, waiters]}.
 */
final class Reply {
  final int limit;
  final int used;
  final int queued;
  final long serverMillis;
  final List<Object> items;

  /**
   * Decodes a reply as Lettuce renders it: {@code ["limit used queued server-ms item..."]} (one
   * string), or {@code [limit, used, queued, server-ms, item...]} (status).
   */
  Reply(List<Object> raw) {
    if (raw.size() == 1 && raw.get(0) instanceof String text) {
      String[] parts = text.split(" ", -1);
      this.limit = Integer.parseInt(parts[0]);
      this.used = Integer.parseInt(parts[1]);
      this.queued = Integer.parseInt(parts[2]);
      this.serverMillis = Long.parseLong(parts[3]);
      List<Object> decoded = new ArrayList<>(parts.length - 4);
      for (int i = 4; i < parts.length; i++) {
        decoded.add(item(parts[i]));
      }
      this.items = decoded;
      return;
    }
    this.limit = ((Long) raw.get(0)).intValue();
    this.used = ((Long) raw.get(1)).intValue();
    this.queued = ((Long) raw.get(2)).intValue();
    this.serverMillis = Long.parseLong((String) raw.get(3));
    this.items = raw.subList(4, raw.size());
  }

  /** An item as the function writes it in a reply or a wake-up, {@code id|status|...}. */
  private static List<Object> item(String text) {
    return List.of((Object[]) text.split("\\|", -1));
  }

  @SuppressWarnings("unchecked")
  List<Object> item(int index) {
    return (List<Object>) items.get(index);
  }

  /** {@code status}'s item {@code index}: its holders (0) or its waiters (1). */
  List<LeaseInfo> leaseInfos(int index) {
    List<LeaseInfo> rows = new ArrayList<>();
    for (Object entry : (List<?>) items.get(index)) {
      rows.add(LeaseInfo.of((List<?>) entry));
    }
    return rows;
  }

  static String id(List<Object> item) {
    return (String) item.get(0);
  }

  static String status(List<Object> item) {
    return (String) item.get(1);
  }

  /** A granted or renewed item's lease expiry, in the server's milliseconds. */
  static long expiry(List<Object> item) {
    return Long.parseLong((String) item.get(2));
  }

  /**
   * When the quarantine that a queued or quarantined item names ends, in the server's milliseconds;
   * -1 if it names none.
   */
  static long quarantineEnd(List<Object> item) {
    return item.size() > 2 ? Long.parseLong((String) item.get(2)) : -1;
  }

  /** A granted item's fencing tokens. */
  static List<FencingToken> tokens(List<Object> item) {
    return FencingToken.parse((String) item.get(3));
  }

  /**
   * A wake-up: the server's time, then for each request settled by another client's call {@code
   * id|granted|expiry|slot:token,...} or {@code id|outcome}, as items of a reply.
   *
   * @param serverMillis the server's time when the message was sent
   * @param items the items, in the order of the message
   */
  record Wake(long serverMillis, List<List<Object>> items) {

    /** Decodes {@code message}; null if it is not a message of this version of the function. */
    static @Nullable Wake parse(String message) {
      String[] entries = message.split(" ", -1);
      long serverMillis;
      try {
        serverMillis = Long.parseLong(entries[0]);
      } catch (NumberFormatException foreign) {
        return null;
      }
      List<List<Object>> items = new ArrayList<>();
      for (int i = 1; i < entries.length; i++) {
        if (entries[i].indexOf('|') >= 0) {
          items.add(item(entries[i]));
        }
      }
      return new Wake(serverMillis, items);
    }
  }
}
