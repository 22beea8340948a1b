package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command lines parsed without picocli are parsed as picocli parses them. */
class QuickParserTest {

  @Test
  void wellFormedCommandLines_areParsedAsPicocliParsesThem() throws Exception {
    String[][] lines = {
      {"run", "true"},
      {"run", "--", "true"},
      {"run", "--name", "a", "make", "--name", "x", "-E", "3"},
      {
        "--dir",
        "/tmp/d",
        "run",
        "--name=deploy",
        "--permits",
        "2",
        "--weight",
        "2",
        "--",
        "./deploy.sh",
        "--",
        "-x"
      },
      {"run", "--dir=/tmp/d", "--no-wait", "-E", "0", "-q", "sh", "-c", "exit 3"},
      {"run", "--timeout", "5m", "--quiet", "--conflict-exit-code=9", "--", "sleep", "1"},
      {
        "--redis",
        "redis://h:6379",
        "--key-prefix",
        "p",
        "run",
        "--lease",
        "10s",
        "--on-lost",
        "kill",
        "--",
        "true"
      },
      {"run", "--redis=redis://h:6379", "--on-lost=warn", "--", "true"},
      {"run", "--rate", "10/1m", "--name", "deploy", "--", "./deploy.sh"},
      {"run", "--rate=1/500ms", "--burst", "3", "--permits", "2", "--timeout", "5s", "true"},
      {"run", "--weight", "0", "--permits", "0", "--", "true"}, // refused later, by call()
      {"run", "--permits", "012", "true"}, // picocli takes 12 too
      {"status"},
      {"status", "--json", "--name", "x"},
      {"--dir", "/tmp/d", "status", "--redis", "redis://h:1"},
      {"wait", "--name", "x", "--timeout", "500ms"},
      {"wait"},
      {"limit", "--name", "x", "4"},
      {"limit", "7", "--name=y", "--dir", "/tmp/e"},
      {"limit", "--name", "x", "0"},
    };
    for (String[] line : lines) {
      Jeton quick = new Jeton();
      Callable<Integer> parsed = QuickParser.parse(quick, line);
      assertNotNull(parsed, String.join(" ", line));
      CommandLine.ParseResult result = Jeton.commandLine().parseArgs(line);
      Jeton picocli = result.commandSpec().commandLine().getCommand();
      Object command = result.subcommand().commandSpec().commandLine().getCommand();
      assertEquals(
          describe(picocli) + describe(command),
          describe(quick) + describe(parsed),
          String.join(" ", line));
    }
  }

  @Test
  void everythingElse_isLeftToPicocli() {
    String[][] lines = {
      {},
      {"--help"},
      {"-h"},
      {"--version"},
      {"-V"},
      {"generate-completion"},
      {"run", "--help"},
      {"status", "-h"},
      {"frobnicate"},
      {"run"},
      {"run", "--"},
      {"run", "--name"},
      {"run", "--name", "--permits", "2", "true"},
      {"run", "--bogus", "true"},
      {"run", "--name", "a", "--name", "b", "true"},
      {"run", "--permits", "x", "true"},
      {"run", "--permits", "99999999999", "true"},
      {"run", "--timeout", "5", "true"},
      {"run", "--timeout", "1s", "--no-wait", "true"},
      {"run", "--no-wait=true", "true"},
      {"run", "-qE", "3", "true"},
      {"run", "--on-lost", "KILL", "true"},
      {"run", "@args"},
      {"run", "--", "echo", "@x"},
      {"--dir", "a", "--dir", "b", "status"},
      {"--dir", "a\0b", "status"},
      {"status", "extra"},
      {"status", "--json", "--json"},
      {"wait", "--timeout", "2562048h"},
      {"limit", "--name", "x"},
      {"limit", "4"},
      {"limit", "--name", "x", "4", "5"},
      {"limit", "--name", "x", "--", "4"},
      {"limit", "--name", "x", "-1"},
      {"run", "--weight", "-3", "true"},
      {"run", "--rate", "0/1m", "true"}, // picocli's message names the bad value
      {"run", "--rate", "10", "true"},
      {"run", "--rate", "1/1s", "--burst", "x", "true"},
    };
    for (String[] line : lines) {
      assertNull(QuickParser.parse(new Jeton(), line), String.join(" ", line));
    }
  }

  /** The options a command object holds: its package-private fields, nested ones included. */
  private static String describe(Object command) throws IllegalAccessException {
    StringBuilder text = new StringBuilder(command.getClass().getSimpleName()).append('{');
    for (Field field : command.getClass().getDeclaredFields()) {
      int modifiers = field.getModifiers();
      if (Modifier.isStatic(modifiers)
          || Modifier.isPrivate(modifiers)
          || field.isSynthetic()
          || field.getType() == Jeton.class) {
        continue;
      }
      field.setAccessible(true);
      Object value = field.get(command);
      text.append(field.getName()).append('=');
      if (value instanceof RunCommand.Waiting) {
        text.append(describe(value));
      } else {
        text.append(value);
      }
      text.append(' ');
    }
    return text.append('}').toString();
  }
}
