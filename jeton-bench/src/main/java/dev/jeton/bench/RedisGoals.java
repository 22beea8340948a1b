package dev.jeton.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Checks issue 16's Redis goals against a {@link RedisBenchmark} run: reads JMH's JSON results
 * ({@code -rf json}) and the trials' Redis statistics ({@link RedisTrial#STATS_FILE}), and prints
 * each goal with PASS, FAIL or MISSING (no result to judge by). A plain program.
 *
 * <pre>
 * java -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.RedisGoals \
 *     redis.json redis-contended.json target/redis-stats.csv
 * </pre>
 *
 * <p>Arguments ending in {@code .csv} are statistics files, the others JMH JSON files. Where a
 * result appears twice, the later file, and the later line of a file, counts. Only the means are
 * compared: read the error bars JMH printed beside them. Exits with 1 unless every goal passed.
 *
 * <ul>
 *   <li>{@code latency} (average time), 10 holders: Jeton within 1.6 times the floor;
 *   <li>Jeton at 3,000 holders within 1.2 times Jeton at 10, in {@code latency} and in Redis's µs
 *       per function call during {@code latency};
 *   <li>Jeton ahead of both Redisson semaphores in {@code latency}, at each number of holders
 *       measured, and in {@code contended} (Jeton with a handle per thread; with one shared handle
 *       shown for information).
 * </ul>
 *
 * <p>With {@code latency} run in sample mode too ({@code -bm sample}), each one's 99.9th percentile
 * is listed after the goals.
 */
public final class RedisGoals {
  private static final String JETON = RedisFleet.JETON;
  private static final List<String> REDISSON =
      List.of(RedisFleet.REDISSON_SEMAPHORE, RedisFleet.REDISSON_EXPIRABLE);
  private static final List<String> HOLDERS = List.of("10", "3000");

  /** One JMH result: its score and error in the benchmark's unit, its percentiles. */
  record Score(double score, double error, Map<String, Double> percentiles) {}

  private final Map<String, Score> scores = new HashMap<>();
  private final Map<String, Map<String, String>> stats = new HashMap<>();
  private final List<String> lines = new ArrayList<>();
  private boolean allPassed = true;

  private RedisGoals() {}

  public static void main(String[] args) throws IOException {
    if (args.length == 0) {
      System.err.println(
          "usage: RedisGoals RESULT.json... [redis-stats.csv...] (JMH -rf json output, and"
              + " RedisBenchmark's statistics)");
      System.exit(2);
    }
    RedisGoals goals = new RedisGoals();
    for (String arg : args) {
      String text = Files.readString(Path.of(arg), StandardCharsets.UTF_8);
      if (arg.endsWith(".csv")) {
        goals.readStats(text);
      } else {
        goals.readResults(text);
      }
    }
    goals.check();
    goals.lines.forEach(System.out::println);
    System.exit(goals.allPassed ? 0 : 1);
  }

  /** The key of a result: benchmark, mode, implementation, holders ("" if none). */
  static String key(String benchmark, String mode, String impl, String holders) {
    return benchmark + "/" + mode + "/" + impl + "/" + holders;
  }

  @SuppressWarnings("unchecked") // JSON objects are maps, arrays lists, by Json's contract
  void readResults(String json) {
    for (Object element : (List<Object>) Json.parse(json)) {
      Map<String, Object> result = (Map<String, Object>) element;
      String benchmark = (String) field(result, "benchmark");
      Map<String, Object> params = (Map<String, Object>) result.getOrDefault("params", Map.of());
      Map<String, Object> metric = (Map<String, Object>) field(result, "primaryMetric");
      Map<String, Double> percentiles = new LinkedHashMap<>();
      ((Map<String, Object>) metric.getOrDefault("scorePercentiles", Map.of()))
          .forEach((p, value) -> percentiles.put(p, number(value)));
      scores.put(
          key(
              benchmark.substring(benchmark.lastIndexOf('.') + 1),
              (String) field(result, "mode"),
              String.valueOf(params.get("impl")),
              String.valueOf(params.getOrDefault("holders", ""))),
          new Score(number(metric.get("score")), number(metric.get("scoreError")), percentiles));
    }
  }

  private static Object field(Map<String, Object> object, String name) {
    Object value = object.get(name);
    if (value == null) {
      throw new IllegalArgumentException("a JMH result without '" + name + "'");
    }
    return value;
  }

  /** A JSON number, or a string JMH writes for one ({@code "NaN"}). */
  private static double number(@Nullable Object value) {
    return value instanceof Double d ? d : Double.parseDouble(String.valueOf(value));
  }

  /** Reads the statistics' lines by the header's column names; a later line replaces one. */
  void readStats(String csv) {
    String[] header = {};
    for (String line : csv.split("\r?\n", -1)) {
      if (line.isBlank()) {
        continue;
      }
      String[] cells = line.split(",", -1);
      if (line.startsWith("time,")) {
        header = cells;
        continue;
      }
      Map<String, String> row = new HashMap<>();
      for (int i = 0; i < Math.min(header.length, cells.length); i++) {
        row.put(header[i], cells[i]);
      }
      stats.put(
          key(
              row.getOrDefault("benchmark", ""),
              row.getOrDefault("mode", ""),
              row.getOrDefault("impl", ""),
              row.getOrDefault("holders", "")),
          row);
    }
  }

  private @Nullable Score score(String benchmark, String mode, String impl, String holders) {
    return scores.get(key(benchmark, mode, impl, holders));
  }

  private void check() {
    // Latency: Jeton against the floor, and against itself with more holders.
    ratio(
        "latency µs/op, 10 holders: jeton / floor",
        score("latency", "avgt", JETON, "10"),
        score("latency", "avgt", RedisFleet.FLOOR, "10"),
        1.6,
        false,
        false);
    ratio(
        "latency µs/op: jeton 3000 holders / jeton 10 holders",
        score("latency", "avgt", JETON, "3000"),
        score("latency", "avgt", JETON, "10"),
        1.2,
        false,
        false);
    ratio(
        "Redis µs per call during latency: jeton 3000 holders / jeton 10 holders",
        usecPerCall(JETON, "3000"),
        usecPerCall(JETON, "10"),
        1.2,
        false,
        false);
    // Ahead of Redisson: less time per operation, more operations per ms.
    for (String holders : HOLDERS) {
      for (String other : REDISSON) {
        ratio(
            "latency µs/op, " + holders + " holders: jeton / " + other,
            score("latency", "avgt", JETON, holders),
            score("latency", "avgt", other, holders),
            1.0,
            true,
            false);
      }
    }
    for (String jeton : List.of(JETON, RedisFleet.JETON_SHARED)) {
      for (String other : REDISSON) {
        ratio(
            "contended ops/ms: " + other + " / " + jeton,
            score("contended", "thrpt", other, ""),
            score("contended", "thrpt", jeton, ""),
            1.0,
            true,
            !jeton.equals(JETON));
      }
    }
    listTails();
  }

  private @Nullable Score usecPerCall(String impl, String holders) {
    Map<String, String> row = stats.get(key("latency", "avgt", impl, holders));
    String usec = row == null ? null : row.get("usec_per_call");
    return usec == null ? null : new Score(Double.parseDouble(usec), Double.NaN, Map.of());
  }

  /**
   * Judges {@code numerator / denominator}: at most {@code bound}, or below it if {@code strictly}
   * ("ahead"); if {@code information}, the line is only shown (INFO), never a goal.
   */
  private void ratio(
      String name,
      @Nullable Score numerator,
      @Nullable Score denominator,
      double bound,
      boolean strictly,
      boolean information) {
    if (numerator == null || denominator == null) {
      lines.add(String.format("%-7s  %s: no result", information ? "INFO" : "MISSING", name));
      allPassed &= information;
      return;
    }
    double ratio = numerator.score() / denominator.score();
    boolean pass = strictly ? ratio < bound : ratio <= bound;
    String verdict = information ? "INFO" : pass ? "PASS" : "FAIL";
    allPassed &= pass || information;
    lines.add(
        String.format(
            Locale.ROOT,
            "%-7s  %s: %s / %s = %.3f (%s %s %.1f)",
            verdict,
            name,
            describe(numerator),
            describe(denominator),
            ratio,
            information ? "for information; jeton's goal:" : "goal",
            strictly ? "<" : "≤",
            bound));
  }

  private static String describe(Score score) {
    double magnitude = Math.abs(score.score());
    String f = magnitude >= 100 ? "%.0f" : magnitude >= 10 ? "%.1f" : "%.2f";
    return Double.isNaN(score.error())
        ? String.format(Locale.ROOT, f, score.score())
        : String.format(Locale.ROOT, f + " ± " + f, score.score(), score.error());
  }

  /** Sample-mode latency's 99.9th percentiles, where measured. */
  private void listTails() {
    List<String> tails = new ArrayList<>();
    for (String holders : HOLDERS) {
      for (String impl : List.of(JETON, RedisFleet.FLOOR, REDISSON.get(0), REDISSON.get(1))) {
        Score sample = score("latency", "sample", impl, holders);
        if (sample != null) {
          Map<String, Double> p = sample.percentiles();
          tails.add(
              String.format(
                  Locale.ROOT,
                  "  %-18s %5s holders: p99 %.0f µs, p99.9 %.0f µs",
                  impl,
                  holders,
                  p.getOrDefault("99.0", Double.NaN),
                  p.getOrDefault("99.9", Double.NaN)));
        }
      }
    }
    if (!tails.isEmpty()) {
      lines.add("latency, sample mode (not goals):");
      lines.addAll(tails);
    }
  }

  /**
   * Just enough JSON for JMH's result files: objects become {@link LinkedHashMap}s, arrays {@link
   * ArrayList}s, numbers {@link Double}s; {@code null} becomes the string "null".
   */
  static final class Json {
    private final String text;
    private int at;

    private Json(String text) {
      this.text = text;
    }

    static Object parse(String text) {
      Json json = new Json(text);
      Object value = json.value();
      json.space();
      if (json.at != text.length()) {
        throw json.error("trailing text");
      }
      return value;
    }

    private Object value() {
      space();
      if (at >= text.length()) {
        throw error("a value expected");
      }
      char c = text.charAt(at);
      if (c == '{') {
        Map<String, Object> object = new LinkedHashMap<>();
        at++;
        if (!empty('}')) {
          do {
            space();
            String name = string();
            expect(':');
            object.put(name, value());
          } while (!closes('}'));
        }
        return object;
      }
      if (c == '[') {
        List<Object> array = new ArrayList<>();
        at++;
        if (!empty(']')) {
          do {
            array.add(value());
          } while (!closes(']'));
        }
        return array;
      }
      if (c == '"') {
        return string();
      }
      int start = at;
      while (at < text.length() && ",}] \t\r\n".indexOf(text.charAt(at)) < 0) {
        at++;
      }
      String word = text.substring(start, at);
      return switch (word) {
        case "true", "false" -> Boolean.valueOf(word);
        case "null" -> "null";
        default -> Double.parseDouble(word);
      };
    }

    /** At the start of an object or array: true if {@code bracket} closes it at once. */
    private boolean empty(char bracket) {
      space();
      boolean empty = at < text.length() && text.charAt(at) == bracket;
      if (empty) {
        at++;
      }
      return empty;
    }

    /** After a value: true at the closing {@code bracket} (consumed), false at a comma. */
    private boolean closes(char bracket) {
      space();
      if (at < text.length() && text.charAt(at) == bracket) {
        at++;
        return true;
      }
      if (at < text.length() && text.charAt(at) == ',') {
        at++;
        return false;
      }
      throw error("',' or '" + bracket + "' expected");
    }

    private String string() {
      expect('"');
      StringBuilder s = new StringBuilder();
      while (at < text.length() && text.charAt(at) != '"') {
        char c = text.charAt(at++);
        if (c == '\\' && at < text.length()) {
          char e = text.charAt(at++);
          switch (e) {
            case 'n' -> s.append('\n');
            case 't' -> s.append('\t');
            case 'r' -> s.append('\r');
            case 'b' -> s.append('\b');
            case 'f' -> s.append('\f');
            case 'u' -> {
              s.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
              at += 4;
            }
            default -> s.append(e); // \" \\ \/
          }
        } else {
          s.append(c);
        }
      }
      expect('"');
      return s.toString();
    }

    private void expect(char c) {
      space();
      if (at >= text.length() || text.charAt(at) != c) {
        throw error("'" + c + "' expected");
      }
      at++;
    }

    private void space() {
      while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
        at++;
      }
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException("JSON: " + what + " at character " + at);
    }
  }
}
