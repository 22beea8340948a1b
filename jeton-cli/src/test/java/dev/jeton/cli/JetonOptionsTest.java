package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Help, version, completion and duration parsing, run in this JVM. */
class JetonOptionsTest {

  @Test
  void durations_acceptMillisecondsSecondsMinutesAndHours() {
    assertEquals(Duration.ofMillis(500), Durations.parse("500ms"));
    assertEquals(Duration.ofSeconds(30), Durations.parse("30s"));
    assertEquals(Duration.ofMinutes(5), Durations.parse("5m"));
    assertEquals(Duration.ofHours(1), Durations.parse("1h"));
    for (String bad : new String[] {"", "5", "-1s", "1.5s", "10d", "s"}) {
      CommandLine.TypeConversionException e =
          assertThrows(CommandLine.TypeConversionException.class, () -> Durations.parse(bad));
      assertTrue(e.getMessage().contains("500ms"), e.getMessage());
    }
  }

  @Test
  void help_onEveryCommand_showsExamples() {
    for (String command : new String[] {"run", "status", "wait", "limit"}) {
      String out = capture(() -> assertEquals(0, Jeton.run(command, "--help")));
      assertTrue(out.contains("Examples:"), command + ": " + out);
    }
    String top = capture(() -> assertEquals(0, Jeton.run("--help")));
    assertTrue(top.contains("Exit codes"), top);
  }

  @Test
  void version_andCompletion_work() {
    assertTrue(capture(() -> assertEquals(0, Jeton.run("--version"))).startsWith("jeton "));
    String script = capture(() -> assertEquals(0, Jeton.run("generate-completion")));
    assertTrue(script.contains("complete") && script.contains("jeton"), script);
  }

  private static String capture(Runnable body) {
    PrintStream original = System.out;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      body.run();
    } finally {
      System.setOut(original);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }
}
