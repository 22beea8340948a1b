package dev.jeton.cli;

import org.jspecify.annotations.Nullable;

/**
 * Text that someone else wrote, made safe to print on a terminal: a holder's command, owner, user
 * or host (a record another user of a shared directory, or another host of a Redis, may have
 * written), and error messages that quote such text. Printed raw, an escape sequence in it could
 * clear, retitle or reprogram the reader's terminal, a line break could forge lines of output, and
 * a bidirectional override could make what follows it read backwards.
 *
 * <p>So every control character is shown as a visible escape, and a backslash as two, so that what
 * is shown reads back one way only:
 *
 * <ul>
 *   <li>{@code \\} for a backslash; {@code \e} for ESC; {@code \n}, {@code \r}, {@code \t};
 *   <li>{@code \xHH} for the other C0 and C1 controls and DEL ({@code \x07}, {@code \x7f}, {@code
 *       \x9b});
 *   <li><code>&#92;uHHHH</code> for the other Unicode format characters and separators:
 *       bidirectional controls (<code>&#92;u202e</code>), zero-width characters, line and paragraph
 *       separators, and for a lone surrogate; {@code \UHHHHHHHH} for one beyond the first 65,536
 *       (tags).
 * </ul>
 *
 * <p>Everything else, accented letters and other scripts included, is printed as it is.
 */
final class Escapes {
  private Escapes() {}

  /** {@code text} with its control characters and backslashes escaped, as the class says. */
  static String visible(String text) {
    StringBuilder out = null; // made at the first character to escape: most text has none
    for (int i = 0; i < text.length(); ) {
      int c = text.codePointAt(i);
      int next = i + Character.charCount(c);
      String escape = escape(c);
      if (escape != null) {
        if (out == null) {
          out = new StringBuilder(text.length() + 16).append(text, 0, i);
        }
        out.append(escape);
      } else if (out != null) {
        out.append(text, i, next);
      }
      i = next;
    }
    return out == null ? text : out.toString();
  }

  /**
   * Whether code point {@code c} is a control character in the sense above: a control (Cc), a
   * format character (Cf), a line or paragraph separator, or a lone surrogate.
   */
  static boolean isControl(int c) {
    switch (Character.getType(c)) {
      case Character.CONTROL:
      case Character.FORMAT:
      case Character.LINE_SEPARATOR:
      case Character.PARAGRAPH_SEPARATOR:
      case Character.SURROGATE:
        return true;
      default:
        return false;
    }
  }

  private static @Nullable String escape(int c) {
    switch (c) {
      case '\\':
        return "\\\\";
      case 0x1b:
        return "\\e";
      case '\n':
        return "\\n";
      case '\r':
        return "\\r";
      case '\t':
        return "\\t";
      default:
        if (!isControl(c)) {
          return null;
        }
        if (c < 0x100) {
          return String.format("\\x%02x", c);
        }
        return c <= 0xffff ? String.format("\\u%04x", c) : String.format("\\U%08x", c);
    }
  }
}
