package dev.jeton.consumers;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.redis.testing.RedisServer;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles and runs a user's program against the published modules, with what a user's build gets
 * from their POMs (written by the dependency plugin: {@code jeton.consumerPath}), on the module
 * path (a module of the user's that requires {@code dev.jeton.core}, {@code dev.jeton.host} or
 * {@code dev.jeton.redis}) and on the class path. The programs are in {@code src/test/consumers};
 * each prints a line starting with {@code ok}.
 *
 * <p>javac runs in this JVM (its {@link ToolProvider}), strict ({@code -Xlint:all -Werror}): a user
 * must be able to compile with no warning. Each program then runs in a JVM of its own, as a user's
 * would: a module can compile and still fail to run (Netty's modules, decision 36).
 */
class ConsumerTest {
  private static final Path SOURCES = Path.of(System.getProperty("jeton.consumerSources"));
  private static final long RUN_GUARD_SECONDS = 120; // a hang guard only

  private static RedisServer redis;

  @TempDir Path work;

  @BeforeAll
  static void startRedis() {
    redis = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  @Test
  void aModuleThatRequiresCoreCompilesAndRuns() throws Exception {
    Path classes = compileModule("core");
    run(modulePath(classes), "-m", "demo.core/demo.core.Main");
  }

  @Test
  void aModuleThatRequiresHostCompilesAndRuns() throws Exception {
    Path classes = compileModule("host");
    run(modulePath(classes), "-m", "demo.host/demo.host.Main", directory().toString());
  }

  @Test
  void aModuleThatRequiresRedisCompilesAndRuns() throws Exception {
    Path classes = compileModule("redis");
    run(modulePath(classes), "-m", "demo.redis/demo.redis.Main", redis.uri());
  }

  @Test
  void aClassPathProgramCompilesAndRuns() throws Exception {
    Path classes = compile("classpath", "--class-path", consumerPath());
    String classPath = classes + File.pathSeparator + consumerPath();
    run(List.of("-cp", classPath), "demo.classpath.Main", directory().toString(), redis.uri());
  }

  /** Compiles the module in {@code src/test/consumers/<name>}. */
  private Path compileModule(String name) throws IOException {
    // javac in this JVM would take this JVM's class path as its own: give it one with no jar.
    return compile(name, "--module-path", consumerPath(), "--class-path", work.toString());
  }

  /** Compiles {@code src/test/consumers/<name>}, giving javac {@code pathOptions}. */
  private Path compile(String name, String... pathOptions) throws IOException {
    Path out = work.resolve(name);
    List<String> arguments = new ArrayList<>(List.of("--release", "17", "-Xlint:all", "-Werror"));
    arguments.addAll(List.of(pathOptions));
    arguments.addAll(List.of("-d", out.toString()));
    try (Stream<Path> files = Files.walk(SOURCES.resolve(name))) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(f -> arguments.add(f.toString()));
    }
    ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
    StringWriter said = new StringWriter();
    int status;
    try (PrintWriter to = new PrintWriter(said)) {
      status = javac.run(to, to, arguments.toArray(new String[0]));
    }
    assertTrue(status == 0 && said.toString().isEmpty(), "javac " + arguments + ":\n" + said);
    return out;
  }

  /** Runs {@code java} on the arguments; it must exit 0 having printed a line {@code ok ...}. */
  private static void run(List<String> path, String... arguments) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // A short run: the quick compiler alone halves the CPU time Lettuce takes to start.
    command.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    command.addAll(path);
    command.addAll(List.of(arguments));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    process.getOutputStream().close();
    String output;
    try {
      output = new String(process.getInputStream().readAllBytes(), UTF_8);
      assertTrue(process.waitFor(RUN_GUARD_SECONDS, TimeUnit.SECONDS), "hung: " + command);
    } finally {
      process.destroyForcibly();
    }
    assertEquals(0, process.exitValue(), command + " exited with:\n" + output);
    assertTrue(output.lines().anyMatch(l -> l.startsWith("ok ")), command + " printed:\n" + output);
  }

  private static List<String> modulePath(Path classes) throws IOException {
    return List.of("--module-path", classes + File.pathSeparator + consumerPath());
  }

  /** The run-time class path of this module's dependencies: what a user's build resolves. */
  private static String consumerPath() throws IOException {
    return Files.readString(Path.of(System.getProperty("jeton.consumerPath")), UTF_8).strip();
  }

  /** A semaphore directory only this user can get into, as the host semaphore requires. */
  private Path directory() throws IOException {
    return Files.createDirectories(
        work.resolve("semaphores"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }
}
