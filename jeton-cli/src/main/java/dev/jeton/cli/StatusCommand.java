package dev.jeton.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code jeton status}: limits, holders and waiters. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description =
        "Shows the limit, who holds permits and who waits, for one semaphore or all; and the"
            + " rate, burst, next free slot and who waits, for each rate limiter (--rate).",
    footer = {
      "",
      "Examples:",
      "  jeton status",
      "  jeton status --name deploy --json",
      "  jeton status --redis redis://redis:6379"
    })
final class StatusCommand implements Callable<Integer> {
  @ParentCommand Jeton jeton;

  @Option(names = "--name", paramLabel = "NAME", description = "One semaphore (default: all).")
  @Nullable String name;

  @Option(names = "--json", description = "Print JSON instead of text.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    List<Backend.View> all = new ArrayList<>();
    List<Backend.RateView> rates = new ArrayList<>();
    try (Backend backend = jeton.backend(null)) {
      String one = name;
      List<String> names = one != null ? List.of(one) : backend.names();
      List<String> rateNames = backend.rateNames();
      if (one != null) {
        boolean rateOnly = rateNames.contains(one) && !backend.names().contains(one);
        names = rateOnly ? List.of() : names; // neither: the semaphore's error says so
        rateNames = rateNames.contains(one) ? List.of(one) : List.of();
      }
      for (String n : names) {
        all.add(backend.status(backend.open(n, null, 0, "jeton status")));
      }
      for (String n : rateNames) {
        rates.add(backend.rateStatus(backend.openRate(n, null, 0, "jeton status")));
      }
      PrintWriter out = jeton.out();
      Instant now = Instant.now();
      out.print(json ? toJson(all, rates, now) : toText(all, rates, backend.where(), now));
      out.flush();
    }
    return 0;
  }

  /**
   * The human form: one line per semaphore, holder and waiter. Every text a record holds is shown
   * through {@link Escapes}, since another user or host may have written it.
   */
  static String toText(List<Backend.View> all, String where) {
    return toText(all, where, Instant.now());
  }

  /** As {@link #toText(List, String)}, with how long each has held or waited until {@code now}. */
  static String toText(List<Backend.View> all, String where, Instant now) {
    return toText(all, List.of(), where, now);
  }

  /** As {@link #toText(List, String, Instant)}, and the rate limiters after the semaphores. */
  static String toText(
      List<Backend.View> all, List<Backend.RateView> rates, String where, Instant now) {
    if (all.isEmpty() && rates.isEmpty()) {
      return "no semaphores " + Escapes.visible(where) + "\n";
    }
    StringBuilder text = new StringBuilder();
    for (Backend.View s : all) {
      text.append(Escapes.visible(s.name()))
          .append(": limit ")
          .append(s.limit())
          .append(", held ")
          .append(s.held())
          .append(", waiting ")
          .append(s.waiters().size())
          .append('\n');
      for (Backend.Entry h : s.holders()) {
        text.append("  holds ").append(describe(h, now)).append('\n');
      }
      for (Backend.Entry h : s.waiters()) {
        text.append("  waits ").append(describe(h, now)).append('\n');
      }
    }
    for (Backend.RateView r : rates) {
      text.append(Escapes.visible(r.name()))
          .append(": rate ")
          .append(r.rate())
          .append(", burst ")
          .append(r.burst())
          .append(", next free slot ")
          .append(r.nextFree().isZero() ? "now" : "in " + RateWait.forHuman(r.nextFree()))
          .append(", waiting ")
          .append(r.waiters().size())
          .append('\n');
      for (Backend.Entry h : r.waiters()) {
        text.append("  waits ").append(describe(h, now)).append('\n');
      }
    }
    return text.toString();
  }

  private static String describe(Backend.Entry h, Instant now) {
    Instant expiry = h.expiresAt();
    String tokens = h.fencingTokens();
    return h.permits()
        + " pid "
        + h.pid()
        + " "
        + Escapes.visible(h.user())
        + "@"
        + Escapes.visible(h.host())
        + " since "
        + h.since()
        + " (for "
        + forHuman(secondsSince(h.since(), now))
        + ")"
        + (expiry == null
            ? ""
            : " until " + expiry + " tokens " + Escapes.visible(String.valueOf(tokens)))
        + ": "
        + Escapes.visible(h.command());
  }

  /**
   * Whole seconds from {@code since} to {@code now}; 0 if {@code since} is later, as a record
   * written on a host whose clock runs ahead can be.
   */
  static long secondsSince(Instant since, Instant now) {
    return Math.max(0, Duration.between(since, now).getSeconds());
  }

  /** {@code seconds} as "42s", "3m 07s", "2h 03m 07s" or "4d 02h 03m". */
  static String forHuman(long seconds) {
    long m = seconds / 60;
    long h = m / 60;
    long d = h / 24;
    if (d > 0) {
      return String.format(Locale.ROOT, "%dd %02dh %02dm", d, h % 24, m % 60);
    }
    if (h > 0) {
      return String.format(Locale.ROOT, "%dh %02dm %02ds", h, m % 60, seconds % 60);
    }
    return m > 0 ? String.format(Locale.ROOT, "%dm %02ds", m, seconds % 60) : seconds + "s";
  }

  static String toJson(List<Backend.View> all) {
    return toJson(all, Instant.now());
  }

  /**
   * As {@link #toJson(List)}, each holder with {@code heldSeconds} and each waiter with {@code
   * waitingSeconds} until {@code now}.
   */
  static String toJson(List<Backend.View> all, Instant now) {
    return toJson(all, List.of(), now);
  }

  /**
   * As {@link #toJson(List, Instant)}, and the rate limiters after the semaphores: each with {@code
   * rate} (as {@code --rate} takes it), {@code permits}, {@code periodMillis}, {@code burst},
   * {@code nextFreeMillis} (0: a start would pass now) and {@code waiters}; no {@code limit}.
   */
  static String toJson(List<Backend.View> all, List<Backend.RateView> rates, Instant now) {
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < all.size(); i++) {
      Backend.View s = all.get(i);
      json.append(i == 0 ? "\n  " : ",\n  ")
          .append("{\"name\": ")
          .append(quote(s.name()))
          .append(", \"limit\": ")
          .append(s.limit())
          .append(", \"held\": ")
          .append(s.held())
          .append(", \"holders\": ")
          .append(holders(s.holders(), "heldSeconds", now))
          .append(", \"waiters\": ")
          .append(holders(s.waiters(), "waitingSeconds", now))
          .append('}');
    }
    for (int i = 0; i < rates.size(); i++) {
      Backend.RateView r = rates.get(i);
      json.append(i == 0 && all.isEmpty() ? "\n  " : ",\n  ")
          .append("{\"name\": ")
          .append(quote(r.name()))
          .append(", \"rate\": ")
          .append(quote(r.rate().toString()))
          .append(", \"permits\": ")
          .append(r.rate().permits())
          .append(", \"periodMillis\": ")
          .append(r.rate().period().toMillis())
          .append(", \"burst\": ")
          .append(r.burst())
          .append(", \"nextFreeMillis\": ")
          .append(r.nextFree().plusNanos(999_999).toMillis())
          .append(", \"waiters\": ")
          .append(holders(r.waiters(), "waitingSeconds", now))
          .append('}');
    }
    return json.append(all.isEmpty() && rates.isEmpty() ? "]\n" : "\n]\n").toString();
  }

  private static String holders(List<Backend.Entry> holders, String forField, Instant now) {
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < holders.size(); i++) {
      Backend.Entry h = holders.get(i);
      json.append(i == 0 ? "" : ", ")
          .append("{\"pid\": ")
          .append(h.pid())
          .append(", \"permits\": ")
          .append(h.permits())
          .append(", \"user\": ")
          .append(quote(h.user()))
          .append(", \"host\": ")
          .append(quote(h.host()))
          .append(", \"since\": ")
          .append(quote(h.since().toString()))
          .append(", \"")
          .append(forField)
          .append("\": ")
          .append(secondsSince(h.since(), now))
          .append(", \"command\": ")
          .append(quote(h.command()));
      String lease = h.lease();
      Instant expiry = h.expiresAt();
      String tokens = h.fencingTokens();
      if (lease != null) {
        json.append(", \"lease\": ").append(quote(lease));
      }
      if (expiry != null) {
        json.append(", \"expiresAt\": ").append(quote(expiry.toString()));
      }
      if (tokens != null) {
        json.append(", \"fencingTokens\": ").append(quote(tokens));
      }
      json.append('}');
    }
    return json.append(']').toString();
  }

  /**
   * A JSON string literal. Besides what JSON requires, DEL, the C1 controls and Unicode's format
   * characters and separators ({@link Escapes#isControl}) are written as <code>&#92;uHHHH</code>,
   * so that the JSON is safe to read on a terminal too, and means the same to a parser.
   */
  static String quote(String text) {
    StringBuilder quoted = new StringBuilder("\"");
    for (int i = 0; i < text.length(); ) {
      int c = text.codePointAt(i);
      int next = i + Character.charCount(c);
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\r' -> quoted.append("\\r");
        case '\t' -> quoted.append("\\t");
        default -> {
          if (Escapes.isControl(c)) { // every character below 0x20 is one
            for (int unit = i; unit < next; unit++) {
              quoted.append(String.format("\\u%04x", (int) text.charAt(unit)));
            }
          } else {
            quoted.append(text, i, next);
          }
        }
      }
      i = next;
    }
    return quoted.append('"').toString();
  }
}
