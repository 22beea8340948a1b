package dev.jeton.bench;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A {@code redis-server} process of the benchmarks' own, on a free loopback port, persisting
 * nothing: {@code redis-server --port P --bind 127.0.0.1 --save "" --appendonly no}. {@link
 * #start()} returns once it answers {@code PING}; {@link #close()} kills it and deletes its working
 * directory, and so does a shutdown hook if the JVM exits first.
 *
 * <p>The binary is {@code $JETON_REDIS_SERVER} if set, else {@code redis-server} on the {@code
 * PATH}, else {@code /usr/bin/redis-server} or {@code /usr/local/bin/redis-server}.
 */
final class RedisProcess implements AutoCloseable {
  private static final long READY_MILLIS = 10_000;
  private static final int PORT_ATTEMPTS = 5;

  private final Process process;
  private final Path directory;
  private final int port;
  private final Thread reaper;

  private RedisProcess(Process process, Path directory, int port) {
    this.process = process;
    this.directory = directory;
    this.port = port;
    this.reaper = new Thread(this::kill, "redis-server-reaper");
    Runtime.getRuntime().addShutdownHook(reaper);
  }

  /** Starts a server and waits until it answers {@code PING}. */
  static RedisProcess start() {
    String binary = binary();
    Path directory;
    try {
      directory = Files.createTempDirectory("jeton-bench-redis-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    IllegalStateException failure = null;
    // The port is free when picked, but another process may bind it first: then try another.
    for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      int port = freePort();
      Process process;
      try {
        process =
            new ProcessBuilder(
                    binary,
                    "--port",
                    Integer.toString(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    directory.toString(),
                    "--logfile",
                    "redis.log")
                .redirectErrorStream(true)
                .redirectOutput(directory.resolve("redis.out").toFile())
                .start();
      } catch (IOException e) {
        deleteRecursively(directory);
        throw new UncheckedIOException("could not run " + binary, e);
      }
      if (awaitPing(process, port)) {
        return new RedisProcess(process, directory, port);
      }
      process.destroyForcibly();
      failure =
          new IllegalStateException(
              "redis-server did not answer PING on port " + port + log(directory));
    }
    deleteRecursively(directory);
    throw failure;
  }

  /**
   * The CPU time the server has used, user and system, in ns, from {@code /proc/<pid>/stat} (Linux;
   * clock ticks of usually 10 ms); -1 where that cannot be read.
   */
  long cpuNanos() {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
      // Fields after the command name, which is in parentheses: state is field 3, utime 14.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ", -1);
      long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
      return ticks * (1_000_000_000L / CLOCK_TICKS_PER_SECOND);
    } catch (IOException | RuntimeException unavailable) {
      return -1;
    }
  }

  /** {@code getconf CLK_TCK}: 100 on Linux for x86 and ARM. */
  private static final long CLOCK_TICKS_PER_SECOND = 100;

  /** {@code redis://127.0.0.1:<port>}. */
  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  private static boolean awaitPing(Process process, int port) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_MILLIS);
    while (System.nanoTime() - deadline < 0) {
      if (!process.isAlive()) {
        return false;
      }
      try (Resp resp = Resp.connect("127.0.0.1", port, 500)) {
        if ("PONG".equals(resp.call("PING"))) {
          return true;
        }
      } catch (IOException | RuntimeException notYet) {
        // not listening yet, or still loading
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  private static String binary() {
    String named = System.getenv("JETON_REDIS_SERVER");
    if (named != null && !named.isBlank()) {
      return named;
    }
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(File.pathSeparator, -1)) {
        if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "redis-server"))) {
          return Path.of(dir, "redis-server").toString();
        }
      }
    }
    for (String place : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server")) {
      if (Files.isExecutable(Path.of(place))) {
        return place;
      }
    }
    throw new IllegalStateException(
        "redis-server not found: install Redis, set JETON_REDIS_SERVER, or pass -p redisUri=redis://host:port");
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String log(Path directory) {
    StringBuilder text = new StringBuilder();
    for (String name : List.of("redis.out", "redis.log")) {
      try {
        List<String> lines = Files.readAllLines(directory.resolve(name));
        lines
            .subList(Math.max(0, lines.size() - 20), lines.size())
            .forEach(line -> text.append("\n  ").append(line));
      } catch (IOException | UncheckedIOException missing) {
        // nothing written
      }
    }
    return text.length() == 0 ? "" : "; its output:" + text;
  }

  private void kill() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    deleteRecursively(directory);
  }

  @Override
  public void close() {
    kill();
    try {
      Runtime.getRuntime().removeShutdownHook(reaper);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs or has run: it kills the process again, harmlessly
    }
  }

  private static void deleteRecursively(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException | UncheckedIOException ignored) {
      // best effort: a temporary directory
    }
  }
}
