package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code jeton} launcher as install.sh installs it, with its start-up archive (decision 59):
 * made in the background, used once made, and ignored, without a word, when it is missing,
 * stale, damaged, or in a directory others could change. Each test has a home of its own.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // trainings take a while on a busy machine
class LauncherTest {
  private static final String VERSION = "jeton 0.1.0-SNAPSHOT\n";

  @TempDir Path temporary;
  private Path launcher;
  private Path jar;
  private Path home;
  private final List<Process> started = new ArrayList<>();

  /** Installs the launcher and a jar of the command's classes, as install.sh lays them out. */
  @BeforeEach
  void install() throws IOException {
    Path prefix = temporary.resolve("prefix");
    launcher = Files.createDirectories(prefix.resolve("bin")).resolve("jeton");
    Files.copy(Path.of("..", "jeton"), launcher);
    jar = Files.createDirectories(prefix.resolve("share/jeton")).resolve("jeton.jar");
    writeJar(jar);
    home = Files.createDirectory(temporary.resolve("home"));
  }

  @AfterEach
  void stopTraining() throws Exception {
    for (Process p : started) {
      p.destroyForcibly();
    }
    awaitNoTraining(); // the background training of this test's home, before @TempDir goes
  }

  /**
   * A jar of the main classes on this test's class path (the command's, the machine-wide
   * semaphore's, the core's and picocli's): the class-data archives need classes from a jar.
   */
  private static void writeJar(Path jar) throws IOException {
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      java.util.Set<String> written = new java.util.HashSet<>();
      for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
        Path path = Path.of(entry);
        boolean wanted = entry.contains("picocli")
            || (entry.contains("jeton-") && !entry.contains("test") && !entry.contains("redis"));
        if (!wanted || !Files.exists(path)) {
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
          try (java.util.jar.JarFile in = new java.util.jar.JarFile(path.toFile())) {
            for (JarEntry e : java.util.Collections.list(in.entries())) {
              if (!e.isDirectory() && !e.getName().startsWith("META-INF/")
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

  private Path cache() {
    return home.resolve(".cache/jeton");
  }

  /** The archive's description: its JDK's home, its kind and size. */
  private Path meta() {
    return cache().resolve(jar.toString().replace('/', '_') + "-host");
  }

  private Path archive() throws IOException {
    return cache().resolve(meta().getFileName() + "." + Files.readAllLines(meta()).get(1));
  }

  /** Runs the launcher in this test's home; returns what it printed (stdout and stderr). */
  private String jeton(Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("sh", launcher.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().keySet().removeIf(k -> k.startsWith("JETON_") || k.startsWith("XDG_"));
    builder.environment().remove("JDK_JAVA_OPTIONS");
    builder.environment().put("HOME", home.toString());
    builder.environment().putAll(env);
    Process p = builder.start();
    started.add(p);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher finished");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  private String jeton(String... args) throws Exception {
    return jeton(Map.of(), args);
  }

  /** Whether the command's own main class came from a start-up archive in this run. */
  private boolean startsFromTheArchive() throws Exception {
    // One log per process: a run that finds no archive starts a training, whose JVMs log too.
    Path logs = Files.createTempDirectory(temporary, "classes");
    jeton(Map.of("JDK_JAVA_OPTIONS", "-Xlog:class+load=info:file=" + logs + "/%p.log"),
        "--version");
    awaitNoTraining();
    Path log = logs.resolve(started.get(started.size() - 1).pid() + ".log"); // sh exec'ed java
    for (String line : Files.readAllLines(log)) {
      if (line.contains(" dev.jeton.cli.Jeton ")) {
        return line.contains("shared");
      }
    }
    throw new AssertionError("dev.jeton.cli.Jeton was not loaded");
  }

  /** Waits until the training has made the archive (or failed). */
  private void awaitArchive() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    while (!Files.exists(meta()) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertTrue(Files.exists(meta()), "the archive was made");
    awaitNoTraining();
  }

  private void awaitNoTraining() throws Exception {
    Path lock = cache().resolve(meta().getFileName() + ".lock");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    while (Files.exists(lock) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }

  @Test
  void firstRun_printsOnlyItsOwn_andTrainsAnArchiveThatTheNextRunsUse() throws Exception {
    assertEquals(VERSION, jeton("--version"));
    awaitArchive();
    assertEquals("rwx------",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(cache())));
    List<String> meta = Files.readAllLines(meta());
    assertEquals(Files.size(archive()), Long.parseLong(meta.get(2)), meta.toString());
    assertEquals(VERSION, jeton("--version"));
    assertTrue(startsFromTheArchive());
    Path dir = temporary.resolve("semaphores");
    assertEquals("ran x\n",
        jeton("--dir", dir.toString(), "run", "--name", "x", "--", "sh", "-c",
            "echo ran $JETON_NAME"));
  }

  @Test
  void onJdk17_theArchiveIsAClassDataSharingArchive() throws Exception {
    Path java17 = Path.of("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
    Path java = Files.isExecutable(java17) ? java17
        : Path.of(System.getProperty("java.home"), "bin", "java");
    assertEquals(VERSION, jeton(Map.of("JETON_JVMS", java.toString()), "--version"));
    awaitArchive();
    assertTrue(startsFromTheArchive());
    if (Runtime.version().feature() < 25 || java.equals(java17)) {
      assertEquals("jsa", Files.readAllLines(meta()).get(1));
    }
  }

  @Test
  void staleArchive_isIgnoredSilently_andMadeAgain() throws Exception {
    jeton("--version");
    awaitArchive();
    FileTime made = Files.getLastModifiedTime(meta());
    writeJar(jar); // a new jar, as install.sh copies one
    assertEquals(VERSION, jeton("--version"));
    awaitNoTraining();
    assertTrue(Files.getLastModifiedTime(meta()).compareTo(made) > 0, "made again");
    assertTrue(startsFromTheArchive());
  }

  @Test
  void damagedArchive_isIgnoredSilently() throws Exception {
    jeton("--version");
    awaitArchive();
    Path archive = archive();
    FileTime made = Files.getLastModifiedTime(meta());
    // Damaged inside, its size unchanged (the JVM would crash on it): changed since it was made.
    try (RandomAccessFile file = new RandomAccessFile(archive.toFile(), "rw")) {
      for (long at = 4096; at < file.length(); at += 65536) {
        file.seek(at);
        file.write(new byte[512]);
      }
    }
    assertEquals(VERSION, jeton("--version"));
    Path dir = temporary.resolve("semaphores");
    assertEquals("ok\n", jeton("--dir", dir.toString(), "run", "--", "echo", "ok"));
    awaitNoTraining();
    assertTrue(Files.getLastModifiedTime(meta()).compareTo(made) > 0, "made again");
    assertTrue(startsFromTheArchive());
    // Cut short (the JVM would crash on it too): the launcher's size check.
    archive = archive();
    try (RandomAccessFile file = new RandomAccessFile(archive.toFile(), "rw")) {
      file.setLength(file.length() / 2);
    }
    assertEquals(VERSION, jeton("--version"));
    awaitNoTraining();
    // Its description is garbage.
    Files.writeString(meta(), "garbage\n");
    assertEquals(VERSION, jeton("--version"));
    awaitNoTraining();
  }

  @Test
  void missingArchive_orNoHome_isNoError() throws Exception {
    jeton("--version");
    awaitArchive();
    Files.delete(archive());
    assertEquals(VERSION, jeton("--version"));
    awaitNoTraining();
    assertEquals(VERSION, jeton(Map.of("HOME", "/nonexistent/home"), "--version"));
    assertEquals(VERSION, jeton(Map.of("JETON_ARCHIVE", "off"), "--version"));
  }

  @Test
  void archiveInADirectoryOthersCanWrite_orBehindALink_isNotUsed() throws Exception {
    jeton("--version");
    awaitArchive();
    assertTrue(startsFromTheArchive());
    Files.setPosixFilePermissions(cache(), PosixFilePermissions.fromString("rwxrwxrwx"));
    assertFalse(startsFromTheArchive());
    assertEquals("rwx------", // the next run made it private again, and trains anew
        PosixFilePermissions.toString(Files.getPosixFilePermissions(cache())));

    Path elsewhere = Files.move(cache(), home.resolve("elsewhere"));
    Files.createSymbolicLink(cache(), elsewhere);
    assertFalse(startsFromTheArchive());

    Files.delete(cache());
    Files.move(elsewhere, cache());
    Files.setPosixFilePermissions(home.resolve(".cache"),
        PosixFilePermissions.fromString("rwxrwxrwx"));
    assertFalse(startsFromTheArchive());
  }
}
