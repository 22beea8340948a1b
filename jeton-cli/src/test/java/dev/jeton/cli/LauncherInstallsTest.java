package dev.jeton.cli;

import static dev.jeton.cli.InstalledLauncher.VERSION;
import static dev.jeton.cli.InstalledLauncher.cache;
import static dev.jeton.cli.LauncherFiles.chown;
import static dev.jeton.cli.LauncherFiles.installedJdks;
import static dev.jeton.cli.LauncherFiles.jlink;
import static dev.jeton.cli.LauncherFiles.setMode;
import static dev.jeton.contract.OtherUsers.BOB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.contract.OtherUsers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher in the installs and environments users have, as issue 29's attacks found them: a
 * umask that lets the group write, a jar reached through a link, a ':' or a '%' in the install's
 * path, a cache the user cannot write, a description the user cannot read, a JDK swapped for
 * another build. The command always runs, nothing is printed but its own, and an archive that can
 * be used is made once and used, not made again at every run.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // trainings take a while on a busy machine
class LauncherInstallsTest {
  private static final Map<String, String> NO_TRAINING = Map.of("JETON_JVMS", "/nonexistent");

  static InstalledLauncher jeton;

  @TempDir Path temporary;
  private Path home;
  private InstalledLauncher own;

  @BeforeAll
  static void install() throws Exception {
    jeton = InstalledLauncher.shared();
  }

  @BeforeEach
  void makeHome() throws Exception {
    setMode(temporary, "rwxr-xr-x"); // other users may enter it
    home = Files.createDirectory(temporary.resolve("home"));
  }

  @AfterEach
  void stopTraining() throws Exception {
    jeton.stop(cache(home));
    if (own != null) {
      own.stop(cache(home));
    }
  }

  /**
   * Two installs whose archive was made at every run and never used (one training here serves both,
   * a training being a minute of CPU): a umask that lets the group write (002, many distributions'
   * default for users with a group of their own), with which the training wrote a description its
   * own check refused; and a jar installed as a link to the real one (as stow or alternatives do),
   * whose link, not the jar, was checked.
   */
  @Test
  void aLinkedJar_underAUmaskThatLetsTheGroupWrite_getsAnArchiveThatIsUsed() throws Exception {
    own = new InstalledLauncher(temporary.resolve("prefix"));
    Path real = Files.createDirectory(temporary.resolve("real")).resolve("jeton-0.1.jar");
    Files.move(own.jar, real);
    Files.createSymbolicLink(own.jar, real);
    assertEquals(VERSION, own.runWithUmask("002", home, "--version"));
    own.awaitArchive(cache(home));
    assertEquals(
        0,
        (Integer) Files.getAttribute(own.meta(cache(home)), "unix:mode", LinkOption.NOFOLLOW_LINKS)
            & 077,
        "the description is the user's alone");
    assertTrue(own.startsFromTheArchive(home));
  }

  /** A ':' in the install's path split the class path: every run failed. */
  @Test
  void aColonInTheInstallPath_runsTheCommand() throws Exception {
    own = new InstalledLauncher(temporary.resolve("tools:2026/prefix"));
    assertEquals(VERSION, own.run(home, "--version"));
    Path dir = temporary.resolve("semaphores");
    assertEquals("ok\n", own.run(home, "--dir", dir.toString(), "run", "--", "echo", "ok"));
    own.awaitNoTraining(cache(home));
  }

  /**
   * A '%' in the install's path: the JVM expands %p in the crash report's name, so the report went
   * elsewhere and the next runs went on starting from the archive the crash came from.
   */
  @Test
  void aPercentInTheInstallPath_keepsTheCrashReportWhereTheNextRunLooks() throws Exception {
    own = new InstalledLauncher(temporary.resolve("100%p/prefix"));
    Path cache = cache(home);
    jeton.copyArchive(cache, own);
    Path work = Files.createDirectory(temporary.resolve("work"));
    Process run = own.startHolding(home, work, temporary.resolve("semaphores"), NO_TRAINING);
    new ProcessBuilder("kill", "-SEGV", Long.toString(run.pid())).start().waitFor();
    String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(run.waitFor(60, TimeUnit.SECONDS));
    assertEquals(128 + 6, run.exitValue(), out);
    assertTrue(Files.exists(own.crash(cache), LinkOption.NOFOLLOW_LINKS), listing(cache));
    assertFalse(own.startsFromTheArchive(home, cache, NO_TRAINING));
  }

  /**
   * A cache the user cannot write (a read-only home, a full or read-only file system), holding a
   * dead trainer's lock: removing the lock failed, and the launcher stopped there, exit 1. The
   * user's runs were not root's (root writes anywhere), so this needs a second user.
   */
  @Test
  void aCacheTheUserCannotWrite_withADeadTrainersLock_runsTheCommand() throws Exception {
    OtherUsers.ensure();
    own = new InstalledLauncher(temporary.resolve("prefix"));
    Path cache = cache(home);
    Files.createDirectories(own.lock(cache));
    Files.writeString(own.lock(cache).resolve("started"), "");
    FileTime dead = FileTime.fromMillis(System.currentTimeMillis() - TimeUnit.HOURS.toMillis(1));
    Files.setLastModifiedTime(own.lock(cache), dead);
    for (Path p :
        List.of(
            home,
            home.resolve(".cache"),
            cache,
            own.lock(cache),
            own.lock(cache).resolve("started"))) {
      chown(p, BOB);
    }
    setMode(cache, "r-x------");
    assertEquals(VERSION, runAsBob("--version"));
    assertTrue(Files.isDirectory(own.lock(cache)));
    setMode(cache, "rwx------");
    LauncherFiles.deleteTree(own.lock(cache)); // the dead trainer's, for the end of the test
  }

  /** A description the user cannot read: the shell's "cannot open" was printed at every run. */
  @Test
  void aDescriptionTheUserCannotRead_isIgnoredSilently() throws Exception {
    OtherUsers.ensure();
    own = new InstalledLauncher(temporary.resolve("prefix"));
    Path cache = cache(home);
    jeton.copyArchive(cache, own);
    try (Stream<Path> tree = Files.walk(home)) {
      for (Path p : tree.toList()) {
        chown(p, BOB);
      }
    }
    setMode(own.meta(cache), "---------");
    assertEquals(VERSION, runAsBob("--version"));
  }

  /**
   * The JDK the archive was made on, swapped by a rename for another build of the same release
   * whose libjvm and modules have the same sizes, its files older than the archive (a rename keeps
   * their times): the JVM refused the archive, silently, at every run (it records the build), and
   * it was never made again. Now the files' identities are described too: the swap is seen, and the
   * archive is made again for the JDK that is there.
   */
  @Test
  void aJdkSwappedForAnotherBuild_byARename_getsAnArchiveOfItsOwn() throws Exception {
    List<Path> jdks = installedJdks();
    Path newest = jdks.get(jdks.size() - 1);
    String modules = "java.base,java.logging,java.management,jdk.security.auth,jdk.unsupported";
    Path jdk = jlink(newest, temporary.resolve("jdk"), modules);
    Path twin = jlink(newest, temporary.resolve("twin"), modules);
    anotherBuild(twin);
    assertEquals(Files.size(jdk.resolve("lib/modules")), Files.size(twin.resolve("lib/modules")));
    Path cache = cache(home);
    Map<String, String> onJdk = Map.of("JETON_JVMS", jdk.resolve("bin/java").toString());
    jeton.run(home, onJdk, "--version");
    jeton.awaitArchive(cache);
    assertTrue(jeton.startsFromTheArchive(home, cache, NO_TRAINING));

    Files.move(jdk, temporary.resolve("jdk.before"));
    Files.move(twin, jdk);
    assertEquals(VERSION, jeton.run(home, onJdk, "--version"));
    jeton.awaitArchive(cache);
    assertTrue(jeton.startsFromTheArchive(home, cache, NO_TRAINING));
  }

  /**
   * Makes the JDK at {@code jdk} another build as the JVM tells builds apart (the one string an
   * archive records of it), keeping its files' sizes: a digit of its libjvm's build date.
   */
  private static void anotherBuild(Path jdk) throws Exception {
    Path libjvm = jdk.resolve("lib/server/libjvm.so");
    byte[] bytes = Files.readAllBytes(libjvm);
    byte[] mark = ", built on ".getBytes(StandardCharsets.US_ASCII);
    int at = indexOf(bytes, mark);
    assertTrue(at >= 0, "no build date in " + libjvm);
    at += mark.length;
    while (bytes[at] < '0' || bytes[at] > '9') {
      at++;
    }
    bytes[at] = (byte) (bytes[at] == '9' ? '0' : bytes[at] + 1);
    Files.write(libjvm, bytes);
  }

  private static int indexOf(byte[] bytes, byte[] part) {
    for (int i = 0; i + part.length <= bytes.length; i++) {
      if (java.util.Arrays.equals(bytes, i, i + part.length, part, 0, part.length)) {
        return i;
      }
    }
    return -1;
  }

  /** Runs the launcher as Bob with this test's home; checks that it succeeded. */
  private String runAsBob(String... args) throws Exception {
    StringBuilder line = new StringBuilder("HOME='" + home + "' exec sh '" + own.launcher + "'");
    for (String arg : args) {
      line.append(" '").append(arg).append('\'');
    }
    Process p = OtherUsers.shell(BOB, temporary, line.toString());
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher finished");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  private static String listing(Path directory) throws Exception {
    try (Stream<Path> listed = Files.list(directory)) {
      return listed.map(p -> p.getFileName().toString()).sorted().toList().toString();
    }
  }
}
