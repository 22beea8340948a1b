package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.io.StringReader;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A holder's record, written without {@code Properties.store}, reads back as it was. */
class HolderTest {
  @Test
  void aCommandLineOfAnyCharactersReadsBackUnchanged() {
    for (String command :
        List.of(
            "make -j4 all",
            " leading space",
            "trailing space ",
            "a=b:c#d!e",
            "back\\slash\\",
            "tab\tnew\nline\rcarriage\fform",
            "control\u0001\u001f",
            "non-ASCII: é ü 日本 \uD83D\uDE00",
            "")) {
      Holder holder = Holder.ofThisProcess(2).withCommand(command);
      Holder read = Holder.parse(holder.serialize()).orElseThrow();
      assertEquals(holder, read, "the record of " + command);
    }
  }

  @Test
  void randomKeysAndValues_loadAsTheyWereStored() throws IOException {
    Random random = new Random(16);
    String alphabet = " =:#!\\\t\n\r\f\u0000\u0007\u007f\u00e9\u65e5ab1";
    for (int round = 0; round < 2000; round++) {
      Properties written = new Properties();
      for (int k = 0; k < 3; k++) {
        written.setProperty(randomText(random, alphabet), randomText(random, alphabet));
      }
      Properties read = new Properties();
      read.load(new StringReader(Holder.store(written)));
      assertEquals(written, read, "round " + round);
    }
  }

  @Test
  void theRecordHasNoDateComment() {
    assertFalse(
        Holder.ofThisProcess(1).serialize().lines().anyMatch(line -> line.startsWith("#")),
        "no comment line");
  }

  private static String randomText(Random random, String alphabet) {
    StringBuilder text = new StringBuilder();
    for (int i = random.nextInt(6); i > 0; i--) {
      text.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return text.toString();
  }
}
