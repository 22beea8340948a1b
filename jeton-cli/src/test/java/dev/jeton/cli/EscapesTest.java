package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What status and error messages show of text someone else wrote, run in this JVM. */
class EscapesTest {

  @Test
  void visible_keepsPrintableTextOfAnyScriptAsItIs() {
    String text = "make -j4 'déjà vu' 日本語 ✓ 🚀 a+b=c";
    assertSame(text, Escapes.visible(text));
  }

  @Test
  void visible_showsEveryControlCharacterAsAnEscape() {
    assertEquals("a\\\\b", Escapes.visible("a\\b"), "a backslash, so that escapes read one way");
    assertEquals("\\e[2J\\e]0;title\\x07", Escapes.visible("\033[2J\033]0;title\007"));
    assertEquals("1\\n2\\r3\\t4", Escapes.visible("1\n2\r3\t4"));
    assertEquals("\\x00\\x7f\\x85\\x9b", Escapes.visible("\0\u007f\u0085\u009b"), "C0, DEL, C1");
    assertEquals(
        "\\u202eevil\\u202c \\u2066x\\u2069 \\u200b \\u2028 \\ufeff",
        Escapes.visible("\u202eevil\u202c \u2066x\u2069 \u200b \u2028 \ufeff"),
        "bidirectional controls, zero width, separators, byte order mark");
    assertEquals("\\U000e0041\\U000e007f", Escapes.visible("\udb40\udc41\udb40\udc7f"), "tags");
    assertEquals("\\ud800x\\udc00", Escapes.visible("\ud800x\udc00"), "lone surrogates");
  }

  /** Every field of a record, as status prints them: one line each, nothing raw. */
  @Test
  void statusText_escapesEveryFieldOfEveryRecord() {
    String evil = "\033[2J\nforged: limit 9, held 0, waiting 0\u202e\u0085";
    Backend.Entry entry =
        new Backend.Entry(1, 1, evil, evil, Instant.EPOCH, evil, evil, Instant.EPOCH, evil);
    Backend.View view = new Backend.View("s", 2, 1, List.of(entry), List.of(entry));
    String text = StatusCommand.toText(List.of(view), "in " + evil);
    assertEquals(3, text.lines().count(), text);
    assertTrue(
        text.codePoints()
            .allMatch(
                c ->
                    c == '\n'
                        || !Character.isISOControl(c) && Character.getType(c) != Character.FORMAT),
        text);
    assertTrue(text.contains("\\e[2J\\nforged: limit 9, held 0, waiting 0\\u202e\\x85"), text);
    String empty = StatusCommand.toText(List.of(), "in /tmp/\033[2J");
    assertEquals("no semaphores in /tmp/\\e[2J\n", empty);
  }

  @Test
  void json_escapesWhatATerminalWouldActOnAndStaysJson() {
    assertEquals(
        "\"\\u001b[2J\\n\\u007f\\u0085\\u202e\\udb40\\udc41 é\\\\\"",
        StatusCommand.quote("\033[2J\n\u007f\u0085\u202e\udb40\udc41 é\\"));
  }
}
