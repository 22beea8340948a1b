package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * The {@code jeton} launcher as install.sh installs it (PREFIX/bin/jeton and
 * PREFIX/share/jeton/jeton.jar, a jar of the command's classes from this test's class path), run in
 * homes of the tests' choosing, with its start-up archive (decisions 59 and 63).
 */
final class InstalledLauncher {
  static final String VERSION = "jeton 0.1.0-SNAPSHOT\n";

  /** A run's hang guard: a launcher that blocks (on a FIFO, say) fails the test. */
  private static final long RUN_SECONDS = 60;

  /** The umask of the launcher's runs unless a test chooses another. */
  private static final String UMASK = "022";

  /** A training's hang guard: trainings take a while on a busy machine. */
  private static final long TRAINING_SECONDS = 300;

  private static InstalledLauncher shared;

  final Path launcher;
  final Path jar;
  private final List<Process> started = Collections.synchronizedList(new ArrayList<>());

  /** The home whose first run trained this install's archive, for {@link #copyArchive}. */
  private Path trained;

  /** What that first run printed. */
  private String firstRun;

  /**
   * One install for the test classes of this JVM, and its archive, trained once (a training takes a
   * minute of CPU): the tests copy it into homes of their own.
   */
  static synchronized InstalledLauncher shared() throws Exception {
    if (shared == null) {
      Path root = dev.jeton.contract.TemporaryTrees.create("jeton-launcher");
      InstalledLauncher launcher = new InstalledLauncher(root.resolve("prefix"));
      launcher.trained = Files.createDirectory(root.resolve("trained"));
      launcher.firstRun = launcher.run(launcher.trained, "--version");
      launcher.awaitArchive(cache(launcher.trained));
      shared = launcher;
    }
    return shared;
  }

  /** The shared install's trained home (see {@link #shared}). */
  Path trained() {
    return trained;
  }

  /** What the shared install's first run printed. */
  String firstRun() {
    return firstRun;
  }

  /** Installs the launcher and a jar of the command's classes under {@code prefix}. */
  InstalledLauncher(Path prefix) throws IOException {
    launcher = Files.createDirectories(prefix.resolve("bin")).resolve("jeton");
    Files.copy(Path.of("..", "jeton"), launcher);
    jar = Files.createDirectories(prefix.resolve("share/jeton")).resolve("jeton.jar");
    writeJar();
  }

  /**
   * (Re)writes the jar: the main classes on this test's class path (the command's, the machine-wide
   * semaphore's, the core's and picocli's). The class-data archives need classes from a jar.
   */
  void writeJar() throws IOException {
    Manifest manifest = new Manifest(); // as the real jar's, for a java -jar
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "dev.jeton.cli.Jeton");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest)) {
      Set<String> written = new HashSet<>();
      for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
        Path path = Path.of(entry);
        if (!isWanted(path) || !Files.exists(path)) {
          continue;
        }
        if (Files.isDirectory(path)) {
          try (Stream<Path> files = Files.walk(path)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
              String name = path.relativize(file).toString().replace('\\', '/');
              if (written.add(name)) {
                out.putNextEntry(new JarEntry(name));
                Files.copy(file, out);
              }
            }
          }
        } else {
          try (JarFile in = new JarFile(path.toFile())) {
            for (JarEntry e : Collections.list(in.entries())) {
              if (!e.isDirectory()
                  && !e.getName().startsWith("META-INF/")
                  && written.add(e.getName())) {
                out.putNextEntry(new JarEntry(e.getName()));
                in.getInputStream(e).transferTo(out);
              }
            }
          }
        }
      }
    }
  }

  /**
   * Whether a class-path entry goes into the jar: picocli's, and the main classes of Jeton's
   * modules but Redis's. Judged by the entry's own name (a jar's, or a module's for its
   * target/classes), never by the directories above it, which may be called anything.
   */
  private static boolean isWanted(Path entry) {
    String name = entry.getFileName().toString();
    if (name.equals("classes") && entry.getNameCount() >= 3) {
      name = entry.getParent().getParent().getFileName().toString(); // MODULE/target/classes
    }
    return name.startsWith("picocli")
        || (name.startsWith("jeton-") && !name.contains("test") && !name.contains("redis"));
  }

  /** The archive's cache directory in {@code home} (no XDG_CACHE_HOME). */
  static Path cache(Path home) {
    return home.resolve(".cache/jeton");
  }

  /**
   * BASE (see the launcher) in {@code cache}, for the machine-wide commands: named for the jar
   * itself, the links to it followed.
   */
  Path base(Path cache) throws IOException {
    Path itself = jar;
    while (Files.isSymbolicLink(itself)) {
      itself = itself.resolveSibling(Files.readSymbolicLink(itself));
    }
    return cache.resolve(itself.toString().replace('/', '_') + "-host");
  }

  Path meta(Path cache) throws IOException {
    return sibling(base(cache), ".meta");
  }

  Path crash(Path cache) throws IOException {
    return sibling(base(cache), ".crash");
  }

  Path lock(Path cache) throws IOException {
    return sibling(base(cache), ".lock");
  }

  /** The archive that the description in {@code cache} names. */
  Path archive(Path cache) throws IOException {
    return sibling(base(cache), "." + Files.readAllLines(meta(cache)).get(1));
  }

  static Path sibling(Path path, String suffix) {
    return path.resolveSibling(path.getFileName() + suffix);
  }

  /** Starts the launcher with HOME {@code home} and {@code env}; stdout and stderr merged. */
  Process start(Path home, Map<String, String> env, String... args) throws IOException {
    return startIn(Path.of("."), home, env, args);
  }

  /** As {@link #start}, in the working directory {@code directory}. */
  Process startIn(Path directory, Path home, Map<String, String> env, String... args)
      throws IOException {
    return startIn(directory, UMASK, home, env, args);
  }

  /** As {@link #start}, in the working directory {@code directory}, with {@code umask}. */
  Process startIn(Path directory, String umask, Path home, Map<String, String> env, String... args)
      throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of("sh", "-c", "umask \"$0\" && exec sh \"$@\"", umask, launcher.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true);
    builder.environment().keySet().removeIf(k -> k.startsWith("JETON_") || k.startsWith("XDG_"));
    builder.environment().remove("JDK_JAVA_OPTIONS");
    builder.environment().put("HOME", home.toString());
    builder.environment().putAll(env);
    Process p = builder.start();
    started.add(p);
    return p;
  }

  /** Runs the launcher to its end; checks that it succeeded; returns what it printed. */
  String run(Path home, Map<String, String> env, String... args) throws Exception {
    return finish(start(home, env, args));
  }

  /** Waits for a run to end; checks that it succeeded; returns what it printed. */
  private static String finish(Process p) throws Exception {
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(RUN_SECONDS, TimeUnit.SECONDS), "the launcher finished");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  String run(Path home, String... args) throws Exception {
    return run(home, Map.of(), args);
  }

  /** As {@link #run}, with {@code umask}. */
  String runWithUmask(String umask, Path home, String... args) throws Exception {
    return finish(startIn(Path.of("."), umask, home, Map.of(), args));
  }

  /**
   * Starts {@code jeton run} of a command that holds its permit (in the semaphore directory {@code
   * semaphores}), in the working directory {@code work}; returns once the command runs.
   */
  Process startHolding(Path home, Path work, Path semaphores, Map<String, String> env)
      throws Exception {
    Path started = work.resolve("started");
    Process run =
        startIn(
            work,
            home,
            env,
            "--dir",
            semaphores.toString(),
            "run",
            "--",
            "sh",
            "-c",
            "touch '" + started + "'; exec sleep 60");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RUN_SECONDS);
    while (!Files.exists(started) && run.isAlive() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertTrue(Files.exists(started), "the command started");
    return run;
  }

  /**
   * Whether the command's own main class came from a start-up archive in a run of {@code --version}
   * with {@code env} (any training it starts is awaited).
   */
  boolean startsFromTheArchive(Path home, Path cache, Map<String, String> env) throws Exception {
    // One log per process: a run that finds no archive starts a training, whose JVMs log too.
    Path logs = Files.createTempDirectory("jeton-classes");
    try {
      Map<String, String> logging = new java.util.HashMap<>(env);
      logging.put("JDK_JAVA_OPTIONS", "-Xlog:class+load=info:file=" + logs + "/%p.log");
      Process p = start(home, logging, "--version");
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(RUN_SECONDS, TimeUnit.SECONDS), "the launcher finished");
      assertEquals(0, p.exitValue(), out);
      awaitNoTraining(cache);
      for (String line : Files.readAllLines(logs.resolve(p.pid() + ".log"))) { // sh exec'ed java
        if (line.contains(" dev.jeton.cli.Jeton ")) {
          return line.contains("shared");
        }
      }
      throw new AssertionError("dev.jeton.cli.Jeton was not loaded");
    } finally {
      try (Stream<Path> files = Files.list(logs)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(logs);
    }
  }

  boolean startsFromTheArchive(Path home) throws Exception {
    return startsFromTheArchive(home, cache(home), Map.of());
  }

  /** Waits until the training in {@code cache} has made the archive (or failed). */
  void awaitArchive(Path cache) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TRAINING_SECONDS);
    while (!Files.exists(meta(cache)) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertTrue(Files.exists(meta(cache)), "the archive was made");
    awaitNoTraining(cache);
  }

  /** Waits until no training is under way in {@code cache}: none, done, or failed. */
  void awaitNoTraining(Path cache) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TRAINING_SECONDS);
    Path lock = lock(cache);
    while (Files.isDirectory(lock, LinkOption.NOFOLLOW_LINKS)
        && !Files.exists(lock.resolve("failed"), LinkOption.NOFOLLOW_LINKS)
        && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }

  /**
   * Gives {@code cache} a copy of the archive trained in {@link #trained()}, as a training leaves
   * it: the archive first, its description after (the newer of the two), the directory private.
   */
  void copyArchive(Path cache) throws IOException {
    copyArchive(cache, this);
  }

  /**
   * As {@link #copyArchive(Path)}, named for {@code install}'s jar (whose JVM would find that it
   * was made for another class path, and start without it).
   */
  void copyArchive(Path cache, InstalledLauncher install) throws IOException {
    Path trained = cache(this.trained);
    Files.createDirectories(cache.getParent());
    Files.createDirectory(cache);
    Files.setAttribute(cache, "unix:mode", 0700, LinkOption.NOFOLLOW_LINKS);
    Path archive = archive(trained);
    String kind = archive.getFileName().toString();
    kind = kind.substring(kind.lastIndexOf('.'));
    Files.copy(archive, sibling(install.base(cache), kind));
    List<String> meta = new ArrayList<>(Files.readAllLines(meta(trained)));
    String[] identities = meta.get(6).split(" "); // the jar's inode number first
    identities[0] = Files.getAttribute(install.jar, "unix:ino").toString();
    meta.set(6, String.join(" ", identities));
    Files.write(install.meta(cache), meta);
  }

  /** Kills whatever was started and waits for the trainings in {@code caches} to end. */
  void stop(Path... caches) throws Exception {
    synchronized (started) {
      for (Process p : started) {
        p.destroyForcibly();
      }
    }
    for (Path cache : caches) {
      awaitNoTraining(cache);
    }
  }
}
