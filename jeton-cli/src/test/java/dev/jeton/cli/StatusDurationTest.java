package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code jeton status} says how long each holder has held and each waiter waited. */
class StatusDurationTest {
  private static final Instant SINCE = Instant.parse("2026-11-28T10:00:00Z");

  private static Backend.Entry entry(Instant since) {
    return new Backend.Entry(7, 1, "u", "h", since, "sleep 9", null, null, null);
  }

  @Test
  void text_andJson_sayHowLongEachHasHeldAndWaited() {
    Backend.View view =
        new Backend.View("s", 2, 1, List.of(entry(SINCE)), List.of(entry(SINCE.plusSeconds(3600))));
    Instant now = SINCE.plusSeconds(3723); // 1h 02m 03s after the holder's since

    String text = StatusCommand.toText(List.of(view), "here", now);
    assertTrue(text.contains("holds 1 pid 7 u@h since " + SINCE + " (for 1h 02m 03s): "), text);
    assertTrue(text.contains("waits 1 pid 7 u@h since "), text);
    assertTrue(text.contains("(for 2m 03s)"), text);

    String json = StatusCommand.toJson(List.of(view), now);
    assertTrue(json.contains("\"heldSeconds\": 3723"), json);
    assertTrue(json.contains("\"waitingSeconds\": 123"), json);
  }

  @Test
  void durations_readAsAnOperatorWould_andAClockAheadIsZero() {
    assertEquals("0s", StatusCommand.forHuman(0));
    assertEquals("59s", StatusCommand.forHuman(59));
    assertEquals("1m 00s", StatusCommand.forHuman(60));
    assertEquals("1h 00m 00s", StatusCommand.forHuman(3600));
    assertEquals("1d 00h 00m", StatusCommand.forHuman(86_400));
    assertEquals("12d 03h 04m", StatusCommand.forHuman(12 * 86_400 + 3 * 3600 + 4 * 60 + 5));
    assertEquals(0, StatusCommand.secondsSince(SINCE.plusSeconds(5), SINCE), "a clock ahead");
  }
}
