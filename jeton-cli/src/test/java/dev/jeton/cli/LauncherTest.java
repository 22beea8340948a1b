package dev.jeton.cli;

import static dev.jeton.cli.InstalledLauncher.VERSION;
import static dev.jeton.cli.InstalledLauncher.cache;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code jeton} launcher as install.sh installs it, with its start-up archive (decisions 59 and
 * 63): made in the background, used once made, and ignored, without a word, when it is missing,
 * stale, damaged, or in a directory others could change. The archive is trained once ({@link
 * InstalledLauncher#shared}); most tests start from a copy of it in a home of their own. The
 * attacks on it are in {@link LauncherAttackTest}.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // trainings take a while on a busy machine
class LauncherTest {
  static InstalledLauncher jeton;

  @TempDir Path temporary;
  private Path home;

  @BeforeAll
  static void installAndTrain() throws Exception {
    jeton = InstalledLauncher.shared();
  }

  @BeforeEach
  void makeHome() throws Exception {
    home = Files.createDirectory(temporary.resolve("home"));
  }

  @AfterEach
  void stopTraining() throws Exception {
    jeton.stop(cache(home)); // the background training of this test's home, before @TempDir goes
  }

  @Test
  void firstRun_printsOnlyItsOwn_andTrainsAnArchiveThatTheNextRunsUse() throws Exception {
    assertEquals(VERSION, jeton.firstRun());
    Path trained = jeton.trained();
    Path cache = cache(trained);
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(cache)));
    List<String> meta = Files.readAllLines(jeton.meta(cache));
    assertEquals(Files.size(jeton.archive(cache)), Long.parseLong(meta.get(2)), meta.toString());
    assertEquals(VERSION, jeton.run(trained, "--version"));
    assertTrue(jeton.startsFromTheArchive(trained));
    Path dir = temporary.resolve("semaphores");
    assertEquals(
        "ran x\n",
        jeton.run(
            trained,
            "--dir",
            dir.toString(),
            "run",
            "--name",
            "x",
            "--",
            "sh",
            "-c",
            "echo ran $JETON_NAME"));
  }

  @Test
  void onJdk17_theArchiveIsAClassDataSharingArchive() throws Exception {
    Path java17 = Path.of("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
    Path java =
        Files.isExecutable(java17)
            ? java17
            : Path.of(System.getProperty("java.home"), "bin", "java");
    assertEquals(VERSION, jeton.run(home, Map.of("JETON_JVMS", java.toString()), "--version"));
    jeton.awaitArchive(cache(home));
    assertTrue(jeton.startsFromTheArchive(home));
    if (Runtime.version().feature() < 25 || java.equals(java17)) {
      assertEquals("jsa", Files.readAllLines(jeton.meta(cache(home))).get(1));
    }
  }

  @Test
  void staleArchive_isIgnoredSilently_andMadeAgain() throws Exception {
    InstalledLauncher own = new InstalledLauncher(temporary.resolve("prefix"));
    Path cache = cache(home);
    try {
      own.run(home, "--version");
      own.awaitArchive(cache);
      FileTime made = Files.getLastModifiedTime(own.meta(cache));
      own.writeJar(); // a new jar, as install.sh copies one
      assertEquals(VERSION, own.run(home, "--version"));
      own.awaitArchive(cache);
      assertTrue(Files.getLastModifiedTime(own.meta(cache)).compareTo(made) > 0, "made again");
      assertTrue(own.startsFromTheArchive(home));
    } finally {
      own.stop(cache);
    }
  }

  @Test
  void damagedArchive_isIgnoredSilently() throws Exception {
    Path cache = cache(home);
    jeton.copyArchive(cache);
    assertTrue(jeton.startsFromTheArchive(home));
    Path archive = jeton.archive(cache);
    FileTime made = Files.getLastModifiedTime(jeton.meta(cache));
    // Damaged inside, its size and modification time kept (as a power cut can leave it, the
    // issue 29 attack: the JVM crashed on it at every start): changed since it was described.
    FileTime modified = Files.getLastModifiedTime(archive);
    try (RandomAccessFile file = new RandomAccessFile(archive.toFile(), "rw")) {
      file.seek(file.length() / 2);
      file.write(new byte[65536]);
    }
    Files.setLastModifiedTime(archive, modified);
    assertEquals(VERSION, jeton.run(home, "--version"));
    Path dir = Files.createDirectory(temporary.resolve("work"));
    assertEquals(
        "ok\n", jeton.run(home, "--dir", dir.resolve("s").toString(), "run", "--", "echo", "ok"));
    try (var inWork = Files.list(dir)) {
      assertEquals(List.of(dir.resolve("s")), inWork.toList(), "no crash report anywhere");
    }
    jeton.awaitArchive(cache);
    assertTrue(Files.getLastModifiedTime(jeton.meta(cache)).compareTo(made) > 0, "made again");
    assertTrue(jeton.startsFromTheArchive(home));
    // Cut short (the JVM would crash on it too): the size check.
    archive = jeton.archive(cache);
    try (RandomAccessFile file = new RandomAccessFile(archive.toFile(), "rw")) {
      file.setLength(file.length() / 2);
    }
    assertEquals(VERSION, jeton.run(home, "--version"));
    jeton.awaitNoTraining(cache);
    // Its description is garbage.
    Files.writeString(jeton.meta(cache), "garbage\n");
    assertEquals(VERSION, jeton.run(home, "--version"));
    jeton.awaitNoTraining(cache);
  }

  @Test
  void missingArchive_orNoHome_isNoError() throws Exception {
    Path cache = cache(home);
    jeton.copyArchive(cache);
    Files.delete(jeton.archive(cache));
    assertEquals(VERSION, jeton.run(home, "--version"));
    jeton.awaitNoTraining(cache);
    assertEquals(VERSION, jeton.run(home, Map.of("HOME", "/nonexistent/home"), "--version"));
    assertEquals(VERSION, jeton.run(home, Map.of("JETON_ARCHIVE", "off"), "--version"));
  }

  @Test
  void archiveInADirectoryOthersCanWrite_orBehindALink_isNotUsed_norChanged() throws Exception {
    Path cache = cache(home);
    jeton.copyArchive(cache);
    assertTrue(jeton.startsFromTheArchive(home));
    Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxrwx"));
    FileTime described = Files.getLastModifiedTime(jeton.meta(cache));
    assertFalse(jeton.startsFromTheArchive(home));
    assertEquals(
        "rwxrwxrwx", // left as it is: nothing is changed, or trained, where others write
        PosixFilePermissions.toString(Files.getPosixFilePermissions(cache)));
    assertEquals(described, Files.getLastModifiedTime(jeton.meta(cache)));
    assertFalse(Files.exists(jeton.lock(cache)));

    Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwx------"));
    Path elsewhere = Files.move(cache, home.resolve("elsewhere"));
    Files.createSymbolicLink(cache, elsewhere);
    assertFalse(jeton.startsFromTheArchive(home));
    assertTrue(Files.isSymbolicLink(cache));

    Files.delete(cache);
    Files.move(elsewhere, cache);
    Files.setPosixFilePermissions(
        home.resolve(".cache"), PosixFilePermissions.fromString("rwxrwxrwx"));
    assertFalse(jeton.startsFromTheArchive(home));
    Files.setPosixFilePermissions(
        home.resolve(".cache"), PosixFilePermissions.fromString("rwxr-xr-x"));
    assertTrue(jeton.startsFromTheArchive(home));
    // Two levels up: the home itself open to others.
    Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxrwxr-x"));
    assertFalse(jeton.startsFromTheArchive(home));
    Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertTrue(Files.exists(jeton.meta(cache), LinkOption.NOFOLLOW_LINKS));
  }
}
