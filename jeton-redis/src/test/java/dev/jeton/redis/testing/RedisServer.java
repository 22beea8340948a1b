package dev.jeton.redis.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * One real, standalone {@code redis-server} process on a free loopback port, for tests.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start()) {
 *   RedisClient client = RedisClient.create(redis.uri());
 *   ...
 *   redis.restart(); // the same port, no data: Redis lost its memory
 * }
 * }</pre>
 *
 * <p>The server persists nothing (no RDB snapshots, no AOF), so {@link #restart()} comes back
 * empty. Its working directory, log included, is a fresh temporary directory that {@link #close()}
 * deletes. A JVM shutdown hook destroys every server not yet closed, so a test that crashes leaves
 * no process behind; only a JVM killed outright (SIGKILL) can still orphan one.
 *
 * <p>The binary is found by {@link #binary()}. Tests that use this class fail, never skip, when
 * there is none: a missing Redis must not pass for a green build.
 */
public final class RedisServer implements AutoCloseable {
  /** The environment variable naming the {@code redis-server} binary to use. */
  static final String BINARY_VARIABLE = "JETON_REDIS_SERVER";

  static final String NOT_FOUND =
      "redis-server was not found on PATH. The Redis tests start a real server: install one"
          + " (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) or"
          + " set JETON_REDIS_SERVER to its path.";

  private static final String BINARY_NAME = "redis-server";
  private static final List<Path> USUAL_PLACES =
      List.of(Path.of("/usr/bin"), Path.of("/usr/local/bin"), Path.of("/opt/homebrew/bin"));

  /** Redis listens for the cluster bus on the client port plus this. */
  private static final int CLUSTER_BUS_OFFSET = 10000;

  private static final String LOG = "redis.log";
  // What the process writes before its log file is open, such as a bad option, lands here.
  private static final String OUTPUT = "redis.out";
  private static final int LOG_TAIL_LINES = 30;

  private static final Duration READY_TIMEOUT =
      Duration.ofSeconds(60); // hang guards: a loaded machine is slow
  private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration SAME_PORT_TIMEOUT = Duration.ofSeconds(30);
  private static final int PORT_ATTEMPTS = 5;

  private static final Set<RedisServer> UNCLOSED = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> UNCLOSED.forEach(RedisServer::reap), "redis-server-reaper"));
  }

  private final Path binary;
  private final Path directory;
  private final int port;
  private final boolean clusterNode;
  private final @Nullable String sentinelConfig; // for a Sentinel: what it monitors

  // Volatile for the shutdown hook, which must not wait for a lock a crashed test may hold.
  private volatile Process process;

  private boolean closed; // guarded by this

  private RedisServer(
      Path binary, Path directory, int port, boolean clusterNode, @Nullable String sentinelConfig) {
    this.binary = binary;
    this.directory = directory;
    this.port = port;
    this.clusterNode = clusterNode;
    this.sentinelConfig = sentinelConfig;
    this.process = null;
  }

  /**
   * Starts a standalone server on a free loopback port and returns once it answers {@code PING}.
   *
   * @throws IllegalStateException if there is no {@code redis-server} (see {@link #binary()}), or
   *     it does not come up within 10 seconds; the message then ends with the server's log
   */
  public static RedisServer start() {
    return start(false, null);
  }

  /**
   * Starts a Redis Sentinel that monitors {@code primary} under the name {@code primaryName}
   * (quorum 1), and returns once it answers.
   */
  public static RedisServer startSentinel(RedisServer primary, String primaryName) {
    return start(
        false,
        "sentinel monitor "
            + primaryName
            + " 127.0.0.1 "
            + primary.port()
            + " 1\n"
            + "sentinel down-after-milliseconds "
            + primaryName
            + " 2000\n");
  }

  /** Starts a server, a Redis Cluster node that is in no cluster yet if {@code clusterNode}. */
  static RedisServer start(boolean clusterNode) {
    return start(clusterNode, null);
  }

  private static RedisServer start(boolean clusterNode, @Nullable String sentinelConfig) {
    Path binary = binary();
    Path directory;
    try {
      directory = Files.createTempDirectory("jeton-redis-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      // The port is free when picked but may be taken before redis-server binds it: then the
      // server exits, and another port is tried.
      for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
        RedisServer server =
            new RedisServer(binary, directory, freePort(clusterNode), clusterNode, sentinelConfig);
        boolean ready = false;
        try {
          ready = server.launch();
        } finally {
          if (!ready) {
            UNCLOSED.remove(server);
          }
        }
        if (ready) {
          return server;
        }
      }
      throw new IllegalStateException(
          "redis-server lost the race for a free port "
              + PORT_ATTEMPTS
              + " times"
              + diagnostics(directory));
    } catch (RuntimeException e) {
      deleteRecursively(directory);
      throw e;
    }
  }

  /**
   * The {@code redis-server} binary to run: the one named by the environment variable {@code
   * JETON_REDIS_SERVER} if set, else the first on {@code PATH}, else one in {@code /usr/bin},
   * {@code /usr/local/bin} or {@code /opt/homebrew/bin}.
   *
   * <p>It must be the server itself, or a script that {@code exec}s it: the fixtures signal the
   * process they started and check that the server answering is that process.
   *
   * @throws IllegalStateException if there is none, with a message that says how to get one
   */
  public static Path binary() {
    return find(System.getenv(), USUAL_PLACES);
  }

  /** {@link #binary()} for the given environment and fallback directories. */
  static Path find(Map<String, String> environment, List<Path> usualPlaces) {
    String named = environment.get(BINARY_VARIABLE);
    if (named != null && !named.isBlank()) {
      Path path = Path.of(named);
      if (isExecutableFile(path)) {
        return path.toAbsolutePath();
      }
      throw new IllegalStateException(
          BINARY_VARIABLE
              + " is set to "
              + named
              + ", which is not an executable file. Point it at a redis-server binary, or unset it"
              + " to use the redis-server on PATH.");
    }
    List<Path> directories = new ArrayList<>();
    for (String entry : environment.getOrDefault("PATH", "").split(File.pathSeparator, -1)) {
      if (!entry.isEmpty()) {
        try {
          directories.add(Path.of(entry));
        } catch (InvalidPathException e) {
          // A malformed PATH entry holds nothing runnable; the rest of PATH may.
        }
      }
    }
    directories.addAll(usualPlaces);
    for (Path directory : directories) {
      Path candidate = directory.resolve(BINARY_NAME);
      if (isExecutableFile(candidate)) {
        return candidate.toAbsolutePath();
      }
    }
    throw new IllegalStateException(NOT_FOUND);
  }

  /** The loopback port the server listens on; {@link #restart()} keeps it. */
  public int port() {
    return port;
  }

  /** {@code redis://127.0.0.1:<port>}, for a Redis client. */
  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** The process id of the server, a new one after each {@link #restart()}. */
  public long pid() {
    return process.pid();
  }

  /**
   * Kills the server with SIGKILL, as a crash would, and waits for it to exit. Its data is gone.
   * Does nothing if it is not running.
   */
  public synchronized void kill() {
    Process current = process;
    // On Unix, destroyForcibly is SIGKILL, which also ends a paused (stopped) process.
    current.destroyForcibly();
    try {
      if (!current.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(
            "redis-server "
                + current.pid()
                + " did not exit within "
                + EXIT_TIMEOUT.toSeconds()
                + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing redis-server", e);
    }
  }

  /**
   * Kills the server if it is running, then starts a new one on the same port, with no data, and
   * waits until it answers {@code PING}. A cluster node keeps its node id and slots, which it reads
   * back from its {@code nodes.conf}.
   *
   * @throws IllegalStateException if the port stays taken for 30 seconds or the server does not
   *     come up
   */
  public synchronized void restart() {
    checkOpen();
    kill();
    long deadline = System.nanoTime() + SAME_PORT_TIMEOUT.toNanos();
    while (!launch()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "port "
                + port
                + " stayed in use for "
                + SAME_PORT_TIMEOUT.toSeconds()
                + " s"
                + diagnostics(directory));
      }
      sleep(Duration.ofMillis(100));
    }
  }

  /**
   * Freezes the server with SIGSTOP, as a long GC-like stall or a hung host would: connections are
   * still accepted by the kernel, but nothing is answered until {@link #resume()}. Uses the {@code
   * kill} command, since Java cannot send SIGSTOP itself.
   */
  public synchronized void pause() {
    signal("STOP");
    awaitStopped(true);
  }

  /** Lets a {@link #pause() paused} server run again with SIGCONT. */
  public synchronized void resume() {
    signal("CONT");
    awaitStopped(false);
  }

  /**
   * Sends one command over a new connection and returns the reply as text, with a 5-second timeout.
   * Simple and bulk strings come back as they are, errors as their message ({@code ERR ...}, {@code
   * WRONGTYPE ...}), integers in decimal, nil as {@code (nil)}, and arrays as their elements,
   * nested arrays flattened, one per line.
   *
   * @throws UncheckedIOException if the server cannot be reached or does not answer in time
   */
  public String command(String... args) {
    return command(COMMAND_TIMEOUT, args);
  }

  /**
   * {@link #command(String...)} with the given connect and read timeout, for instance to see that a
   * paused server does not answer.
   */
  public String command(Duration timeout, String... args) {
    return Resp.render(call(timeout, args));
  }

  /** Sends one command and returns the reply unrendered, as {@link Resp} describes. */
  Object call(String... args) {
    return call(COMMAND_TIMEOUT, args);
  }

  private Object call(Duration timeout, String... args) {
    try {
      return Resp.call(port, timeout, args);
    } catch (IOException e) {
      throw new UncheckedIOException(
          String.join(" ", args) + " to redis-server on port " + port + " failed: " + e, e);
    }
  }

  /** Kills the server and deletes its directory. Closing twice does nothing. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      kill();
    } finally {
      UNCLOSED.remove(this);
      deleteRecursively(directory);
    }
  }

  /** The server's working directory, which holds its log. */
  Path directory() {
    return directory;
  }

  /** The server's log so far, all of it. */
  public String log() {
    return readFrom(directory.resolve(LOG), 0);
  }

  /** The last lines of the server's log and output, for a failure message. */
  String logTail() {
    return diagnostics(directory);
  }

  @Override
  public String toString() {
    Process current = process;
    return "redis-server " + (current == null ? "-" : current.pid()) + " on 127.0.0.1:" + port;
  }

  /**
   * Starts the process and waits until it answers. Returns false if it exited because the port was
   * taken.
   */
  private synchronized boolean launch() {
    List<String> commandLine =
        new ArrayList<>(
            List.of(
                binary.toString(),
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
                directory.resolve(LOG).toString(),
                "--protected-mode",
                "no"));
    String sentinel = sentinelConfig;
    if (sentinel != null) {
      // A Sentinel reads (and rewrites) a configuration file, named first.
      Path config = directory.resolve("sentinel.conf");
      try {
        Files.writeString(
            config,
            "port "
                + port
                + "\nbind 127.0.0.1\nprotected-mode no\ndir "
                + directory
                + "\n"
                + sentinel);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      commandLine =
          new ArrayList<>(
              List.of(
                  binary.toString(),
                  config.toString(),
                  "--sentinel",
                  "--logfile",
                  directory.resolve(LOG).toString()));
    }
    if (clusterNode) {
      commandLine.addAll(
          List.of(
              "--cluster-enabled",
              "yes",
              "--cluster-config-file",
              directory.resolve("nodes.conf").toString(),
              "--cluster-node-timeout",
              "5000"));
    }
    // The log outlives restarts and lost races; only what this process adds to it tells why it
    // exited.
    long logStart = size(directory.resolve(LOG));
    long outputStart = size(directory.resolve(OUTPUT));
    Process started;
    try {
      started =
          new ProcessBuilder(commandLine)
              .directory(directory.toFile())
              .redirectErrorStream(true)
              .redirectOutput(Redirect.appendTo(directory.resolve(OUTPUT).toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not run " + binary, e);
    }
    process = started;
    UNCLOSED.add(this);
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      if (!started.isAlive()) {
        String said =
            readFrom(directory.resolve(LOG), logStart)
                + readFrom(directory.resolve(OUTPUT), outputStart);
        if (said.contains("Address already in use")) {
          return false;
        }
        throw new IllegalStateException(
            "redis-server on port "
                + port
                + " exited with status "
                + started.exitValue()
                + " before answering PING"
                + diagnostics(directory));
      }
      if (answersPing(started.pid())) {
        return true;
      }
      if (System.nanoTime() - deadline > 0) {
        kill();
        throw new IllegalStateException(
            "redis-server on port "
                + port
                + " did not answer PING within "
                + READY_TIMEOUT.toSeconds()
                + " s"
                + diagnostics(directory));
      }
      sleep(Duration.ofMillis(20));
    }
  }

  /** Whether the server that answers PING on the port is the process {@code pid}. */
  private boolean answersPing(long pid) {
    try {
      if (!"PONG".equals(Resp.call(port, PROBE_TIMEOUT, "PING"))) {
        return false;
      }
      // Another server that won the race for the port would answer PING too.
      Object info = Resp.call(port, PROBE_TIMEOUT, "INFO", "server");
      return info instanceof String text && text.contains("\nprocess_id:" + pid + "\r\n");
    } catch (IOException e) {
      return false;
    }
  }

  private void signal(String signal) {
    checkOpen();
    Process current = process;
    if (!current.isAlive()) {
      throw new IllegalStateException(this + " is not running");
    }
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(current.pid()))
              .redirectErrorStream(true)
              .start();
      String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (kill.waitFor() != 0) {
        throw new IllegalStateException(
            "kill -" + signal + " " + current.pid() + " failed: " + output.strip());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not run kill -" + signal, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal, e);
    }
  }

  /**
   * Waits until the process is (or is no longer) stopped, so that a test sees the effect of the
   * signal at once. Only where {@code /proc} tells; elsewhere the signal is trusted to be prompt.
   */
  private void awaitStopped(boolean stopped) {
    Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
    long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
    while (Files.isReadable(stat)) {
      String text;
      try {
        text = Files.readString(stat, StandardCharsets.US_ASCII);
      } catch (IOException e) {
        return;
      }
      // The state follows the parenthesized command name, which may itself hold spaces.
      int end = text.lastIndexOf(')');
      char state = end >= 0 && end + 2 < text.length() ? text.charAt(end + 2) : '?';
      if ((state == 'T' || state == 't') == stopped) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            this + " is in state " + state + ", not " + (stopped ? "stopped" : "running"));
      }
      sleep(Duration.ofMillis(5));
    }
  }

  private synchronized void checkOpen() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
  }

  /** For the shutdown hook: ends the process and removes the directory, taking no lock. */
  private void reap() {
    Process current = process;
    if (current != null) {
      current.destroyForcibly();
      try {
        current.waitFor(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    deleteRecursively(directory);
  }

  /**
   * A loopback port nobody listens on now. A cluster node also needs the port of its bus, {@link
   * #CLUSTER_BUS_OFFSET} higher, to be valid and free.
   */
  private static int freePort(boolean clusterNode) {
    try {
      InetAddress loopback = InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
      for (int attempt = 0; attempt < 100; attempt++) {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, loopback)) {
          port = socket.getLocalPort();
        }
        if (!clusterNode) {
          return port;
        }
        int busPort = port + CLUSTER_BUS_OFFSET;
        if (busPort <= 65535) {
          try (ServerSocket bus = new ServerSocket(busPort, 1, loopback)) {
            return port;
          } catch (IOException e) {
            // The bus port is taken; look for another pair.
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not find a free loopback port", e);
    }
    throw new IllegalStateException("found no free loopback port with a free cluster bus port");
  }

  private static boolean isExecutableFile(Path path) {
    return Files.isRegularFile(path) && Files.isExecutable(path);
  }

  private static String diagnostics(Path directory) {
    StringBuilder text = new StringBuilder();
    for (String name : List.of(LOG, OUTPUT)) {
      Path file = directory.resolve(name);
      List<String> lines;
      try {
        lines = Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
      } catch (IOException | UncheckedIOException e) {
        lines = List.of("(unreadable: " + e + ")");
      }
      if (!lines.isEmpty()) {
        text.append("\n--- last lines of ").append(file).append(" ---\n");
        List<String> tail = lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size());
        text.append(String.join("\n", tail));
      }
    }
    return text.length() == 0 ? " (redis-server wrote nothing to its log)" : text.toString();
  }

  private static long size(Path file) {
    try {
      return Files.exists(file) ? Files.size(file) : 0;
    } catch (IOException e) {
      return 0;
    }
  }

  /** The text of {@code file} from byte {@code start} on, or nothing if it cannot be read. */
  private static String readFrom(Path file, long start) {
    try {
      byte[] bytes = Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
      int from = (int) Math.min(start, bytes.length);
      return new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static void deleteRecursively(Path directory) {
    try (Stream<Path> paths = Files.walk(directory)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // Best effort: a leftover temporary directory is harmless.
    }
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for redis-server", e);
    }
  }
}
