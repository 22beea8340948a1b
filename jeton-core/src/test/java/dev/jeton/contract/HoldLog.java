package dev.jeton.contract;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a log of holds written by several threads or processes, one line per event: {@code start
 * <time> <weight>} after acquiring, {@code end <time> <weight>} before releasing, with times from
 * one clock ({@code System.nanoTime} across the JVMs of one Linux machine, or {@code date +%s%N}).
 */
public final class HoldLog {
  private HoldLog() {}

  /** The most weight held at once according to the log. */
  public static int peakWeight(Path log) throws IOException {
    List<long[]> events = new ArrayList<>();
    for (String line : Files.readAllLines(log)) {
      String[] fields = line.trim().split(" ");
      int weight = Integer.parseInt(fields[2]);
      events.add(
          new long[] {Long.parseLong(fields[1]), fields[0].equals("start") ? weight : -weight});
    }
    // At equal times, count ends before starts: a handoff is not an overlap.
    events.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    int inside = 0;
    int peak = 0;
    for (long[] event : events) {
      inside += (int) event[1];
      peak = Math.max(peak, inside);
    }
    return peak;
  }
}
