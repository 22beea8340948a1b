package dev.jeton.redis;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Checks the recorded history of a {@link RedisRandomizedIntegrationTest} run. It has three
 * sources, and checks each against itself and against the others:
 *
 * <ul>
 *   <li><b>Redis's own log</b>: every command Redis executed, in execution order, as {@code
 *       MONITOR} streamed it to the test, including the commands the semaphore's function runs
 *       ({@code [0 lua]} lines). Redis runs one command at a time and a function call atomically,
 *       so this log is a total order of everything that happened to the semaphore's keys: replaying
 *       the {@code HSET}s on its {@code state} hash (each request's record {@code r:<id>}: a lease
 *       {@code H|...} when a request is granted, a tombstone {@code D|...} when it ends) gives
 *       exactly who held which slots after every single command, and the positions of {@code
 *       ZADD}/{@code ZREM} on its {@code queue} give exactly when each request waited.
 *   <li><b>The clients' histories</b>: each client process's requests in order (kind, weight,
 *       outcome, lease id, tokens, the release's answer, loss notices).
 *   <li><b>The fenced resource</b>: what the resource that every holder wrote to saw (its own
 *       checks run as the writes arrive; it reports its violations and whom it fenced off).
 * </ul>
 *
 * <h2>Checks</h2>
 *
 * <dl>
 *   <dt>redis-limit
 *   <dd>Replaying the log: after every command, the slots held and the sum of the holders' weights
 *       are at most the limit; a slot is never given to a lease while another holds it; slot
 *       indices are below the limit; between two commands (calls are atomic) the sum of the weights
 *       equals the number of slots held. The test's sampler checks the same from outside, by
 *       polling; this replay misses no instant.
 *   <dt>mapping
 *   <dd>Each client's requests are, one for one and in order, the request ids that carry its owner
 *       ({@code rc-<n>}) in Redis: same weight, same kind (try or queue), the granted lease id is
 *       that id, the tokens the client got are those Redis recorded, and a request that was not
 *       granted left nothing held. A request that had to ask again under a new id (its queue entry
 *       or grant expired: a stalled client) breaks this, and with it FIFO, so it fails. A client
 *       that gave up (timeout, cancel) must have been cancelled in Redis. And every time a client
 *       recorded was read from the same wall clock that Redis stamps its log with (one machine:
 *       CLOCK_REALTIME), so a request's arrival in Redis must lie between the client's "sending"
 *       and "answered" records (or after "sending", for a request cancelled at once, which may
 *       reach Redis after the client gave up on it).
 *   <dt>fifo
 *   <dd>Strict FIFO, in Redis's order: if request B arrived (its first script call) while request A
 *       was queued (between A's {@code ZADD} to the queue and its {@code ZREM}), then B is not
 *       granted before A leaves the queue, whatever the weights (a heavy head blocks lighter
 *       requests behind it). A and B are then two waiters that queued at distinct times, A first,
 *       and since each client request is one Redis request (mapping), this is FIFO as the clients
 *       see it. The check counts the pairs it compared where B was granted, and the pairs where
 *       both were; the test requires many.
 *   <dt>loss
 *   <dd>No lease is lost without being reported: a lease Redis expired was reported lost by its
 *       holder (its {@code lost()} completed, or {@code isHeld()} was false before it released); a
 *       release that answered false (Redis no longer had it) came after such a report; a lease
 *       reported lost did not release true. In this test only the paused client's lease may be
 *       lost, so any other loss, expiry or abandoned waiter fails (with a note that a machine
 *       stalled for a lease time would do that too). The paused lease must have been lost,
 *       reported, expired in Redis, and released false.
 *   <dt>resource
 *   <dd>The resource's own checks (the sum of the weights of the holders writing at once is at most
 *       the limit; tokens are well formed and never reused by another lease), and every holder it
 *       fenced off (a newer holder of one of its slots had written) or refused is one whose loss
 *       was reported: fencing a holder that was not told means two holders of one slot at once.
 *   <dt>timeout
 *   <dd>A request that timed out waited at least its timeout.
 * </dl>
 */
final class RandomizedHistoryChecker {
  /** Slack for comparing client clock readings with Redis's log timestamps, microseconds. */
  static final long CLOCK_SLACK_MICROS = 2_000;

  /** A lease record: {@code H|weight|expiry|granted-at|slot:token,...|owner}. */
  private static final Pattern LEASE_RECORD =
      Pattern.compile("H\\|(\\d+)\\|\\d+\\|\\d+\\|([0-9:,]+)\\|.*", Pattern.DOTALL);

  private RandomizedHistoryChecker() {}

  // ------------------------------------------------------------------------------ inputs

  /**
   * One line of Redis's MONITOR stream: its timestamp (microseconds, the server's wall clock),
   * whether a script ran it, and the command with its arguments.
   */
  record MonitorLine(long micros, boolean lua, List<String> args) {
    String command() {
      return args.isEmpty() ? "" : args.get(0).toUpperCase(java.util.Locale.ROOT);
    }

    String arg(int i) {
      return i < args.size() ? args.get(i) : "";
    }
  }

  /** What the fenced resource saw and found wrong. */
  record ResourceReport(
      int begins, int maxOccupancy, List<String> violations, Map<String, String> fenced) {}

  /** What polling Redis from outside saw. */
  record SamplerReport(int samples, int maxHeld, List<String> violations) {}

  /**
   * Parses one MONITOR line, without the leading {@code +}: {@code 1700000000.123456 [0
   * 127.0.0.1:5000] "EVALSHA" "..."}, the arguments quoted as Redis's {@code sdscatrepr} does.
   */
  static MonitorLine parseMonitorLine(String line) {
    int space = line.indexOf(' ');
    String stamp = line.substring(0, space);
    int dot = stamp.indexOf('.');
    long micros =
        Long.parseLong(stamp.substring(0, dot)) * 1_000_000L
            + Long.parseLong((stamp.substring(dot + 1) + "000000").substring(0, 6));
    int close = line.indexOf("] ", space);
    String source = line.substring(space + 2, close);
    boolean lua = source.endsWith(" lua");
    List<String> args = new ArrayList<>();
    int i = close + 2;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    while (i < line.length()) {
      if (line.charAt(i) == ' ') {
        i++;
        continue;
      }
      if (line.charAt(i) != '"') {
        throw new IllegalArgumentException("unexpected MONITOR line: " + line);
      }
      i++;
      bytes.reset();
      while (line.charAt(i) != '"') {
        char c = line.charAt(i);
        if (c == '\\') {
          char e = line.charAt(i + 1);
          switch (e) {
            case 'n' -> bytes.write('\n');
            case 'r' -> bytes.write('\r');
            case 't' -> bytes.write('\t');
            case 'a' -> bytes.write(7);
            case 'b' -> bytes.write('\b');
            case 'x' -> {
              bytes.write(Integer.parseInt(line.substring(i + 2, i + 4), 16));
              i += 2;
            }
            default -> bytes.write(e); // \\ and \"
          }
          i += 2;
        } else {
          bytes.write(c);
          i++;
        }
      }
      i++;
      args.add(bytes.toString(StandardCharsets.UTF_8));
    }
    return new MonitorLine(micros, lua, List.copyOf(args));
  }

  /** One request of one client, as its history tells it. */
  static final class Request {
    final int client;
    final int index;
    final String kind;
    final int weight;
    final long param;
    final long sendMicros;
    @Nullable String outcome; // GRANT, TIMEOUT, CANCEL, BUSY
    long elapsedNanos;
    long answeredMicros;
    @Nullable String leaseId;
    String tokens = "";
    final List<String> resourceReplies = new ArrayList<>();
    @Nullable Boolean released;
    boolean heldBeforeRelease;
    boolean lostBeforeRelease;
    long releaseSentMicros;
    boolean noLossAfterPause;
    final List<String> lines = new ArrayList<>();

    Request(int client, int index, String kind, int weight, long param, long sendMicros) {
      this.client = client;
      this.index = index;
      this.kind = kind;
      this.weight = weight;
      this.param = param;
      this.sendMicros = sendMicros;
    }

    boolean paused() {
      return kind.equals("PAUSED");
    }

    @Override
    public String toString() {
      return "client " + client + " request " + index + " (" + kind + ", weight " + weight + ")";
    }
  }

  /** One client's history. */
  static final class ClientHistory {
    final int client;
    final List<String> lines;
    final Map<Integer, Request> requests = new TreeMap<>();
    final Map<String, Long> lostAt = new HashMap<>();
    final Map<String, String> lossReason = new HashMap<>();
    final List<String> errors = new ArrayList<>();
    boolean ended;

    ClientHistory(int client, List<String> lines) {
      this.client = client;
      this.lines = List.copyOf(lines);
      for (String line : lines) {
        String[] f = line.split(" ");
        try {
          parse(line, f);
        } catch (RuntimeException e) {
          errors.add("unparsable history line '" + line + "': " + e);
        }
      }
    }

    private void parse(String line, String[] f) {
      switch (f[0]) {
        case "REQ" -> {
          Request r =
              new Request(
                  client,
                  Integer.parseInt(f[1]),
                  f[2],
                  Integer.parseInt(f[3]),
                  Long.parseLong(f[4]),
                  Long.parseLong(f[5]));
          r.lines.add(line);
          requests.put(r.index, r);
        }
        case "GRANT" -> {
          Request r = request(f[1], line);
          r.outcome = "GRANT";
          r.leaseId = f[2];
          r.tokens = f[4];
          r.elapsedNanos = Long.parseLong(f[6]);
          r.answeredMicros = Long.parseLong(f[7]);
        }
        case "TIMEOUT", "CANCEL", "BUSY" -> {
          Request r = request(f[1], line);
          r.outcome = f[0];
          r.elapsedNanos = Long.parseLong(f[2]);
          r.answeredMicros = Long.parseLong(f[3]);
        }
        case "RES" -> request(f[1], line).resourceReplies.add(f[2] + " " + f[3]);
        case "RELEASE" -> {
          Request r = request(f[1], line);
          r.heldBeforeRelease = Boolean.parseBoolean(f[3]);
          r.lostBeforeRelease = Boolean.parseBoolean(f[4]);
          r.released = Boolean.parseBoolean(f[5]);
          r.releaseSentMicros = Long.parseLong(f[6]);
        }
        case "NOLOSS" -> request(f[1], line).noLossAfterPause = true;
        case "PAUSE", "RESUMED" -> request(f[1], line);
        case "LOST" -> {
          lostAt.put(f[1], Long.parseLong(f[2]));
          lossReason.put(f[1], line.substring(line.indexOf(f[2]) + f[2].length()).strip());
        }
        case "ERROR" -> errors.add(line);
        case "END" -> ended = true;
        default -> {
          // CLIENT, FINAL: informational
        }
      }
    }

    private Request request(String index, String line) {
      Request r = requests.get(Integer.parseInt(index));
      if (r == null) {
        throw new IllegalStateException("no REQ line before it");
      }
      r.lines.add(line);
      return r;
    }

    /** The lines of this history that mention a lease id or request index, for a report. */
    String excerpt(Request r) {
      List<String> out = new ArrayList<>(r.lines);
      if (r.leaseId != null) {
        for (String line : lines) {
          if (line.startsWith("LOST " + r.leaseId)) {
            out.add(line);
          }
        }
      }
      return "      client " + client + ": " + String.join("\n      client " + client + ": ", out);
    }
  }

  // ------------------------------------------------------------------------------ Redis's view

  /** One request id as Redis saw it; positions are indices into the MONITOR log. */
  static final class RedisRequest {
    final String id;
    @Nullable String owner;
    int weight;
    boolean trying;
    int arrival = -1;
    long arrivalMicros;
    int queued = -1;
    int waitEnd = -1;
    int grant = -1;
    String grantTokens = "";
    int freed = -1;
    @Nullable String outcome;

    RedisRequest(String id) {
      this.id = id;
    }

    @Override
    public String toString() {
      return "request "
          + id
          + " of "
          + owner
          + " (weight "
          + weight
          + (trying ? ", try" : "")
          + "): arrived at "
          + arrival
          + (queued >= 0 ? ", queued at " + queued : "")
          + (waitEnd >= 0 ? ", left the queue at " + waitEnd : "")
          + (grant >= 0 ? ", granted at " + grant + " [" + grantTokens + "]" : "")
          + (outcome != null ? ", " + outcome + " at " + freed : "");
    }
  }

  /** The result: what was counted, and what is wrong. */
  static final class Report {
    final List<String> violations = new ArrayList<>();
    final Map<String, Integer> counts = new LinkedHashMap<>();

    void count(String what, int n) {
      counts.merge(what, n, Integer::sum);
    }

    int count(String what) {
      return counts.getOrDefault(what, 0);
    }

    void fail(String check, String message) {
      violations.add("[" + check + "] " + message);
    }

    boolean has(String check) {
      return violations.stream().anyMatch(v -> v.startsWith("[" + check + "]"));
    }

    /** The number of violations of each check, and the first {@code perCheck} of each. */
    String violationSummary(int perCheck) {
      Map<String, List<String>> byCheck = new TreeMap<>();
      for (String v : violations) {
        byCheck.computeIfAbsent(v.substring(0, v.indexOf(']') + 1), k -> new ArrayList<>()).add(v);
      }
      StringBuilder text = new StringBuilder();
      byCheck.forEach(
          (check, list) ->
              text.append(check).append(' ').append(list.size()).append(" violation(s)\n"));
      byCheck.forEach(
          (check, list) ->
              list.subList(0, Math.min(perCheck, list.size()))
                  .forEach(v -> text.append(v).append('\n')));
      return text.toString();
    }

    String summary() {
      StringBuilder text = new StringBuilder();
      counts.forEach((k, v) -> text.append(String.format("  %-34s %d%n", k, v)));
      return text.toString();
    }
  }

  /**
   * Runs every check.
   *
   * @param keyTag the semaphore's key prefix, {@code {<prefix>:<name>}:}
   */
  static Report check(
      int limit,
      String keyTag,
      List<ClientHistory> clients,
      List<MonitorLine> log,
      ResourceReport resource,
      SamplerReport sampler) {
    Report report = new Report();
    Map<String, RedisRequest> redis = replay(limit, keyTag, log, report);
    checkMapping(clients, redis, report);
    checkFifo(redis, clients, report);
    checkLosses(clients, redis, resource, report);
    checkTimeouts(clients, report);

    report.count("resource: writes begun", resource.begins());
    report.count("resource: max occupancy", resource.maxOccupancy());
    resource.violations().forEach(v -> report.fail("resource", v));
    report.count("sampler: samples", sampler.samples());
    report.count("sampler: max permits held", sampler.maxHeld());
    sampler.violations().forEach(v -> report.fail("sampler", v));
    for (ClientHistory c : clients) {
      c.errors.forEach(e -> report.fail("client", "client " + c.client + ": " + e));
      if (!c.ended) {
        report.fail("client", "client " + c.client + " did not finish its history");
      }
    }
    return report;
  }

  /** Replays Redis's log: the redis-limit check, and each request id's story. */
  static Map<String, RedisRequest> replay(
      int limit, String keyTag, List<MonitorLine> log, Report report) {
    String stateKey = keyTag + "state";
    String queueKey = keyTag + "queue";
    Map<String, RedisRequest> requests = new LinkedHashMap<>();
    Map<String, String> slotHolder = new HashMap<>();
    Map<String, Integer> holderWeight = new HashMap<>();
    Map<String, List<String>> holderSlots = new HashMap<>();
    int weightSum = 0;
    int maxHeld = 0;
    int scripts = 0;
    int limitViolations = 0;
    for (int pos = 0; pos < log.size(); pos++) {
      MonitorLine line = log.get(pos);
      String cmd = line.command();
      if (!line.lua()) {
        // Between two commands: no call is half done.
        if (weightSum != slotHolder.size() && limitViolations++ < 20) {
          report.fail(
              "redis-limit",
              "at "
                  + pos
                  + ", between calls, the holders' weights sum to "
                  + weightSum
                  + " but "
                  + slotHolder.size()
                  + " slots are held");
        }
        if (cmd.equals("FCALL") && line.arg(2).equals("4") && line.arg(3).startsWith(keyTag)) {
          scripts++;
          if (line.arg(7).equals("acquire")) {
            boolean trying = line.arg(12).equals("try");
            for (int i = 13; i + 3 < line.args().size(); i += 4) {
              RedisRequest r = requests.computeIfAbsent(line.arg(i), RedisRequest::new);
              if (r.owner == null) {
                String owner = line.arg(i + 3);
                r.owner = owner.substring(owner.lastIndexOf('\t') + 1);
                r.weight = Integer.parseInt(line.arg(i + 1));
                r.trying = trying;
              }
            }
          }
        }
        continue;
      }
      String key = line.arg(1);
      if (key.equals(stateKey)) {
        if (cmd.equals("HMGET") || cmd.equals("HGET")) {
          for (int i = 2; i < line.args().size(); i++) {
            if (line.arg(i).startsWith("r:") && line.arg(i).length() > 2) {
              RedisRequest r =
                  requests.computeIfAbsent(line.arg(i).substring(2), RedisRequest::new);
              if (r.arrival < 0) { // a request's first call begins by looking it up
                r.arrival = pos;
                r.arrivalMicros = line.micros();
              }
            }
          }
        } else if (cmd.equals("HSET")) {
          // One HSET writes all a call changed: apply the ends (tombstones) before the grants.
          for (int i = 2; i + 1 < line.args().size(); i += 2) {
            String field = line.arg(i);
            if (field.startsWith("r:") && line.arg(i + 1).startsWith("D|")) {
              String id = field.substring(2);
              RedisRequest r = requests.computeIfAbsent(id, RedisRequest::new);
              Integer weight = holderWeight.remove(id);
              if (weight != null) {
                weightSum -= weight;
                holderSlots.remove(id).forEach(slotHolder::remove);
              }
              if (r.outcome == null) {
                r.outcome = line.arg(i + 1).substring(2);
                r.freed = pos;
              }
            }
          }
          for (int i = 2; i + 1 < line.args().size(); i += 2) {
            String field = line.arg(i);
            if (!field.startsWith("r:") || !line.arg(i + 1).startsWith("H|")) {
              continue;
            }
            String id = field.substring(2);
            String record = line.arg(i + 1);
            RedisRequest r = requests.computeIfAbsent(id, RedisRequest::new);
            Matcher lease = LEASE_RECORD.matcher(record);
            if (!lease.matches()) {
              throw new IllegalStateException("at " + pos + ": not a lease record: " + record);
            }
            if (holderWeight.containsKey(id)) {
              continue; // a renewal
            }
            int weight = Integer.parseInt(lease.group(1));
            holderWeight.put(id, weight);
            weightSum += weight;
            List<String> slots = new ArrayList<>();
            for (String pair : lease.group(2).split(",", -1)) {
              String slot = pair.substring(0, pair.indexOf(':'));
              slots.add(slot);
              String other = slotHolder.put(slot, id);
              if (other != null) {
                report.fail(
                    "redis-limit",
                    "at "
                        + pos
                        + " slot "
                        + slot
                        + " was given to "
                        + id
                        + " while "
                        + other
                        + " held it");
              }
              int index = Integer.parseInt(slot);
              if (index < 0 || index >= limit) {
                report.fail("redis-limit", "at " + pos + " slot " + slot + " is outside the limit");
              }
            }
            holderSlots.put(id, slots);
            if (r.grant < 0) {
              r.grant = pos;
              r.grantTokens = sortedTokens(lease.group(2));
            }
          }
          if ((weightSum > limit || slotHolder.size() > limit) && limitViolations++ < 20) {
            report.fail(
                "redis-limit",
                "at "
                    + pos
                    + " the holders' weights sum to "
                    + weightSum
                    + " on "
                    + slotHolder.size()
                    + " slots, over the limit "
                    + limit
                    + ": "
                    + holderWeight);
          }
          maxHeld = Math.max(maxHeld, slotHolder.size());
        }
      } else if (key.equals(queueKey)) {
        if (cmd.equals("ZADD")) {
          RedisRequest r = requests.computeIfAbsent(line.arg(3), RedisRequest::new);
          if (r.queued < 0) {
            r.queued = pos;
          }
        } else if (cmd.equals("ZREM")) {
          RedisRequest r = requests.get(line.arg(2));
          if (r != null && r.queued >= 0 && r.waitEnd < 0) {
            r.waitEnd = pos;
          }
        }
      }
    }
    report.count("redis: log lines", log.size());
    report.count("redis: script calls", scripts);
    report.count("redis: request ids", requests.size());
    report.count("redis: max permits held", maxHeld);
    report.count(
        "redis: requests queued",
        (int) requests.values().stream().filter(r -> r.queued >= 0).count());
    for (RedisRequest r : requests.values()) {
      if (r.owner == null) {
        report.fail("mapping", "Redis saw " + r + ", which no client's acquire carried");
      }
      if (r.grant >= 0 && r.grantTokens.isEmpty()) {
        report.fail("redis-limit", "Redis gave slots to " + r + " without a holder record");
      }
    }
    return requests;
  }

  private static String sortedTokens(String tokens) {
    TreeSet<String> pairs = new TreeSet<>(List.of(tokens.split(",")));
    return String.join(",", pairs);
  }

  // ------------------------------------------------------------------------------ mapping

  static void checkMapping(
      List<ClientHistory> clients, Map<String, RedisRequest> redis, Report report) {
    Map<String, List<RedisRequest>> byOwner = new HashMap<>();
    for (RedisRequest r : redis.values()) {
      if (r.owner != null) {
        byOwner.computeIfAbsent(r.owner, o -> new ArrayList<>()).add(r);
      }
    }
    int mapped = 0;
    for (ClientHistory c : clients) {
      List<Request> mine = new ArrayList<>(c.requests.values());
      List<RedisRequest> theirs =
          byOwner.getOrDefault(RandomClient.OWNER_PREFIX + c.client, List.of());
      if (mine.size() != theirs.size()) {
        report.fail(
            "mapping",
            "client "
                + c.client
                + " made "
                + mine.size()
                + " requests but Redis saw "
                + theirs.size()
                + " request ids from it (a request that asked again under a new"
                + " id: its waiter or grant expired in Redis)");
      }
      for (int i = 0; i < Math.min(mine.size(), theirs.size()); i++) {
        Request m = mine.get(i);
        RedisRequest t = theirs.get(i);
        String where = m + " is Redis's " + t;
        if (m.weight != t.weight || m.kind.equals("TRY") != t.trying) {
          report.fail("mapping", where + ": not the same request\n" + c.excerpt(m));
          break; // the rest is shifted
        }
        mapped++;
        if (t.arrival < 0) {
          report.fail("mapping", where + ": it never reached the script");
        } else if (m.sendMicros > t.arrivalMicros + CLOCK_SLACK_MICROS
            || (!"CANCEL".equals(m.outcome) // a client may give up before its request arrives
                && t.arrivalMicros > m.answeredMicros + CLOCK_SLACK_MICROS)) {
          report.fail(
              "mapping",
              where
                  + ": it arrived in Redis at "
                  + t.arrivalMicros
                  + " us, outside the client's"
                  + " send-to-answer window ["
                  + m.sendMicros
                  + ", "
                  + m.answeredMicros
                  + "]");
        }
        String outcome = String.valueOf(m.outcome);
        switch (outcome) {
          case "GRANT" -> {
            if (!t.id.equals(m.leaseId)) {
              report.fail("mapping", where + ": but the client's lease is " + m.leaseId);
            } else if (t.grant < 0) {
              report.fail("mapping", where + ": the client got a lease Redis never granted");
            } else if (!t.grantTokens.equals(sortedTokens(m.tokens))) {
              report.fail(
                  "mapping",
                  where
                      + ": the client's tokens "
                      + m.tokens
                      + " are not Redis's "
                      + t.grantTokens);
            }
            if (Boolean.TRUE.equals(m.released) && !"released".equals(t.outcome)) {
              report.fail(
                  "mapping", where + ": the release answered true but Redis has " + t.outcome);
            }
          }
          case "TIMEOUT", "CANCEL" -> {
            if (!"cancelled".equals(t.outcome)) {
              report.fail(
                  "mapping",
                  where
                      + ": the client gave up ("
                      + outcome
                      + ") but Redis did not cancel it"
                      + "\n"
                      + c.excerpt(m));
            }
          }
          case "BUSY" -> {
            if (t.grant >= 0 || t.queued >= 0) {
              report.fail("mapping", where + ": tryAcquire found it busy, yet Redis kept it");
            }
          }
          default -> report.fail("mapping", m + " has no outcome\n" + c.excerpt(m));
        }
        if (t.grant >= 0 && t.outcome == null) {
          report.fail("mapping", where + ": still held in Redis at the end");
        }
        if (t.queued >= 0 && t.waitEnd < 0) {
          report.fail("mapping", where + ": still queued in Redis at the end");
        }
      }
    }
    report.count("mapping: requests matched", mapped);
  }

  // ------------------------------------------------------------------------------ FIFO

  static void checkFifo(
      Map<String, RedisRequest> redis, List<ClientHistory> clients, Report report) {
    List<RedisRequest> byArrival = new ArrayList<>();
    for (RedisRequest r : redis.values()) {
      if (r.arrival >= 0) {
        byArrival.add(r);
      }
    }
    byArrival.sort((a, b) -> Integer.compare(a.arrival, b.arrival));
    int[] arrivals = byArrival.stream().mapToInt(r -> r.arrival).toArray();
    int compared = 0;
    int bothGranted = 0;
    int violations = 0;
    for (RedisRequest a : byArrival) {
      if (a.queued < 0) {
        continue;
      }
      int end = a.waitEnd < 0 ? Integer.MAX_VALUE : a.waitEnd;
      int from = firstAfter(arrivals, a.queued);
      for (int k = from; k < byArrival.size() && byArrival.get(k).arrival < end; k++) {
        RedisRequest b = byArrival.get(k);
        if (b.grant < 0) {
          continue; // B gave up or was busy: no order to compare
        }
        compared++;
        if (a.grant >= 0) {
          bothGranted++;
        }
        if (b.grant < end && violations++ < 100) {
          report.fail(
              "fifo",
              "B arrived while A was queued, and was granted before A left the queue:\n    A: "
                  + a
                  + "\n    B: "
                  + b
                  + "\n"
                  + excerpt(clients, a)
                  + "\n"
                  + excerpt(clients, b));
        }
      }
    }
    report.count("fifo: pairs compared (B granted)", compared);
    report.count("fifo: violations", violations);
    report.count("fifo: pairs both granted", bothGranted);
  }

  private static int firstAfter(int[] sorted, int value) {
    int i = java.util.Arrays.binarySearch(sorted, value + 1);
    return i >= 0 ? i : -i - 1;
  }

  private static String excerpt(List<ClientHistory> clients, RedisRequest r) {
    for (ClientHistory c : clients) {
      if ((RandomClient.OWNER_PREFIX + c.client).equals(r.owner)) {
        for (Request m : c.requests.values()) {
          if (r.id.equals(m.leaseId)) {
            return c.excerpt(m);
          }
        }
        return "      (client " + c.client + ": a request it gave up or found busy)";
      }
    }
    return "      (no client)";
  }

  // ------------------------------------------------------------------------------ losses

  static void checkLosses(
      List<ClientHistory> clients,
      Map<String, RedisRequest> redis,
      ResourceReport resource,
      Report report) {
    Map<String, Request> leases = new HashMap<>();
    Map<String, ClientHistory> leaseClient = new HashMap<>();
    int granted = 0;
    int timeouts = 0;
    int cancels = 0;
    int busy = 0;
    int tryGranted = 0;
    int reportedLosses = 0;
    int pausedRounds = 0;
    for (ClientHistory c : clients) {
      for (Request r : c.requests.values()) {
        switch (String.valueOf(r.outcome)) {
          case "TIMEOUT" -> timeouts++;
          case "CANCEL" -> cancels++;
          case "BUSY" -> busy++;
          default -> {}
        }
        if (r.leaseId == null) {
          continue;
        }
        granted++;
        if (r.kind.equals("TRY")) {
          tryGranted++;
        }
        leases.put(r.leaseId, r);
        leaseClient.put(r.leaseId, c);
        Long lostAt = c.lostAt.get(r.leaseId);
        boolean reported = lostAt != null || (r.released != null && !r.heldBeforeRelease);
        if (lostAt != null) {
          reportedLosses++;
        }
        RedisRequest inRedis = redis.get(r.leaseId);
        String redisOutcome = inRedis == null ? null : inRedis.outcome;
        if (r.released == null) {
          report.fail(
              "loss", r + " got lease " + r.leaseId + " and never released it\n" + c.excerpt(r));
          continue;
        }
        if (!r.released && !(r.lostBeforeRelease || !r.heldBeforeRelease)) {
          report.fail(
              "loss",
              r
                  + ": its release answered false (Redis no longer had the lease) but the lease"
                  + " had not reported itself lost\n"
                  + c.excerpt(r));
        }
        if ("expired".equals(redisOutcome) && !reported) {
          report.fail(
              "loss",
              r
                  + ": Redis expired lease "
                  + r.leaseId
                  + " but its holder never reported it lost\n"
                  + c.excerpt(r));
        }
        if (lostAt != null && r.released) {
          report.fail(
              "loss", r + ": reported lost, yet its release answered true\n" + c.excerpt(r));
        }
        if (r.paused()) {
          pausedRounds++;
          if (lostAt == null || r.noLossAfterPause) {
            report.fail(
                "loss",
                r
                    + ": paused past its lease time, its lease was not reported lost within 10 s of"
                    + " resuming\n"
                    + c.excerpt(r));
          }
          if (!"expired".equals(redisOutcome)) {
            report.fail("loss", r + ": paused past its lease time, yet Redis has " + redisOutcome);
          }
          if (r.released) {
            report.fail("loss", r + ": paused past its lease time, yet its release answered true");
          }
        } else if (lostAt != null || !r.released || "expired".equals(redisOutcome)) {
          report.fail(
              "loss",
              r
                  + ": a lease held for a few ms was lost (a bug, or this machine stalled the client"
                  + " for a lease time)\n"
                  + c.excerpt(r));
        }
        for (String reply : r.resourceReplies) {
          if (reply.endsWith("FENCED") && !reported) {
            report.fail(
                "resource",
                r
                    + ": the resource fenced it off ("
                    + reply
                    + ") but its loss was never reported\n"
                    + c.excerpt(r));
          }
        }
      }
    }
    for (Map.Entry<String, String> fenced : resource.fenced().entrySet()) {
      Request r = leases.get(fenced.getKey());
      ClientHistory c = leaseClient.get(fenced.getKey());
      if (r == null || c == null) {
        report.fail("resource", "fenced off " + fenced.getKey() + ", a lease no client had");
        continue;
      }
      boolean reported =
          c.lostAt.containsKey(r.leaseId) || (r.released != null && !r.heldBeforeRelease);
      if (!reported) {
        report.fail(
            "resource",
            r
                + " was fenced off ("
                + fenced.getValue()
                + "), so another holder had its slot, but"
                + " its loss was never reported: two holders at once\n"
                + c.excerpt(r));
      }
    }
    for (RedisRequest r : redis.values()) {
      if ("abandoned".equals(r.outcome)) {
        report.fail(
            "loss",
            r + ": a waiter dropped out of the queue for not polling (a bug, or a stalled client)");
      } else if ("expired".equals(r.outcome) && !leases.containsKey(r.id)) {
        report.fail("loss", r + ": its grant expired in Redis before its client took it");
      }
    }
    report.count("requests", clients.stream().mapToInt(c -> c.requests.size()).sum());
    report.count("acquisitions (leases granted)", granted);
    report.count("  of which by tryAcquire", tryGranted);
    report.count("tryAcquire found busy", busy);
    report.count("timeouts", timeouts);
    report.count("cancellations", cancels);
    report.count("leases lost and reported", reportedLosses);
    report.count("paused rounds", pausedRounds);
    report.count("resource: holders fenced off", resource.fenced().size());
  }

  // ------------------------------------------------------------------------------ timeouts

  static void checkTimeouts(List<ClientHistory> clients, Report report) {
    for (ClientHistory c : clients) {
      for (Request r : c.requests.values()) {
        if ("TIMEOUT".equals(r.outcome) && r.elapsedNanos < r.param * 1_000_000L) {
          report.fail(
              "timeout",
              r
                  + " timed out after "
                  + r.elapsedNanos / 1_000
                  + " us, before its timeout of "
                  + r.param
                  + " ms\n"
                  + c.excerpt(r));
        }
      }
    }
  }
}
