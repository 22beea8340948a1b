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
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Durations.parse(bad));
      assertTrue(e.getMessage().contains("500ms"), e.getMessage());
    }
  }

  @Test
  void durations_thatOverflow_areRefusedWithAMessage() {
    assertEquals(Durations.MAX, Durations.parse("2562047h"));
    for (String huge : new String[] {"2562048h", "999999999999h", "999999999999m"}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Durations.parse(huge));
      assertTrue(e.getMessage().contains("too long"), e.getMessage());
    }
  }

  @Test
  void badUsage_printsTheErrorAndWhereHelpIs_notTheWholeUsage() {
    String err =
        captureErr(() -> assertEquals(2, Jeton.run("run", "--permits", "x", "--", "true")));
    assertTrue(err.contains("'x' is not an int"), err);
    assertTrue(err.contains("Try 'jeton run --help'"), err);
    assertTrue(err.lines().count() <= 3, err);
  }

  @Test
  void badValues_areNamedByTheOptionTheUserTyped() {
    String dir = System.getProperty("java.io.tmpdir") + "/jeton-options-test-unused";
    String[][] cases = {
      {"--weight must be 1 or more", "run", "--weight", "0", "--", "true"},
      {"--permits must be 1 or more", "run", "--permits", "0", "--", "true"},
      {
        "--weight 3 is more than --permits 2",
        "run",
        "--permits",
        "2",
        "--weight",
        "3",
        "--",
        "true"
      },
      {"-E must be an exit code from 0 to 255", "run", "-E", "300", "--", "true"},
      {"-E must be an exit code from 0 to 255", "run", "-E", "-1", "--", "true"},
      {"--lease needs --redis", "run", "--lease", "5s", "--", "true"},
      {"--on-lost needs --redis", "run", "--on-lost", "kill", "--", "true"},
      {"'2562048h' is too long", "wait", "--timeout", "2562048h"},
    };
    for (String[] c : cases) {
      String[] args = new String[c.length];
      args[0] = "--dir=" + dir;
      System.arraycopy(c, 1, args, 1, c.length - 1);
      int[] code = new int[1];
      String err = captureErr(() -> code[0] = Jeton.run(args));
      assertEquals(2, code[0], String.join(" ", args) + " -> " + err);
      assertTrue(err.contains(c[0]), String.join(" ", args) + " -> " + err);
      assertTrue(!err.contains("Exception") && !err.contains("\tat "), err);
    }
    assertTrue(!java.nio.file.Files.exists(java.nio.file.Path.of(dir)), "nothing was made");
  }

  @Test
  void everythingAfterTheCommandsName_isTheCommands() {
    CommandLine jeton = Jeton.commandLine();
    CommandLine.ParseResult parsed =
        jeton.parseArgs("run", "--name", "a", "make", "--name", "x", "-E", "3");
    RunCommand run = parsed.subcommand().commandSpec().commandLine().getCommand();
    assertEquals("a", run.name);
    assertEquals(java.util.List.of("make", "--name", "x", "-E", "3"), run.command);
    assertEquals(75, run.busyExitCode);
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

  private static String captureErr(Runnable body) {
    PrintStream original = System.err;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      body.run();
    } finally {
      System.setErr(original);
    }
    return bytes.toString(StandardCharsets.UTF_8);
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
