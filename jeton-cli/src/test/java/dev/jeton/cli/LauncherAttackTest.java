package dev.jeton.cli;

import static dev.jeton.cli.InstalledLauncher.VERSION;
import static dev.jeton.cli.InstalledLauncher.cache;
import static dev.jeton.cli.LauncherFiles.chown;
import static dev.jeton.cli.LauncherFiles.deleteTree;
import static dev.jeton.cli.LauncherFiles.installedJdks;
import static dev.jeton.cli.LauncherFiles.jlink;
import static dev.jeton.cli.LauncherFiles.listing;
import static dev.jeton.cli.LauncherFiles.mkfifo;
import static dev.jeton.cli.LauncherFiles.rewrite;
import static dev.jeton.cli.LauncherFiles.setMode;
import static dev.jeton.contract.OtherUsers.BOB;
import static dev.jeton.contract.OtherUsers.MALLORY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.contract.OtherUsers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
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
 * Attacks on the launcher's start-up archive (issue 29), each as it was first made by hand: no
 * archive can be a vector, and no state of the cache can stop the command. The attacks by a second
 * user need root, to make real users (as CI runs); run as anyone else, they are reported skipped,
 * with the reason.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES) // trainings take a while on a busy machine
class LauncherAttackTest {
  /** What a run without a usable archive needs of a JDK: jlink's modules for the test jar. */
  private static final String MODULES =
      "java.base,java.logging,java.management,jdk.security.auth,jdk.unsupported";

  /** The training's JVMs for tests that must not train: none, so it fails at once. */
  private static final Map<String, String> NO_TRAINING = Map.of("JETON_JVMS", "/nonexistent");

  static InstalledLauncher jeton;

  @TempDir Path temporary;
  private Path home;

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
  }

  /**
   * The {@code sudo -E} case: root runs {@code jeton} with the HOME of a user who owns a directory
   * on the way to the archive (as every user owns their home and ~/.cache, mode 755), while that
   * user swaps the archive's directory with one of theirs holding an archive under the same name.
   * Before, root loaded their archive in 8 runs of 30. Now no run uses an archive there at all, and
   * root writes nothing there.
   */
  @Test
  void anotherUsersDirectoryOnThePath_whileTheySwapIt_isNeitherUsedNorWritten() throws Exception {
    OtherUsers.ensure();
    Path cache = cache(home);
    jeton.copyArchive(cache);
    assertTrue(jeton.startsFromTheArchive(home)); // root's own, while the path is root's
    Path dotCache = home.resolve(".cache");
    Path theirs = Files.createDirectory(dotCache.resolve("theirs"));
    Files.copy(jeton.archive(cache), theirs.resolve(jeton.archive(cache).getFileName()));
    Files.copy(jeton.meta(cache), jeton.meta(theirs));
    for (Path p : List.of(home, dotCache, theirs, jeton.archive(theirs), jeton.meta(theirs))) {
      chown(p, MALLORY);
    }
    List<String> before = tree(dotCache);
    // Each round of the loop puts the names back; it ends after the round that sees `stop`.
    Process swapper =
        OtherUsers.shell(
            MALLORY,
            dotCache,
            "while [ ! -e stop ]; do"
                + " mv jeton swap; mv theirs jeton; mv jeton theirs; mv swap jeton; done");
    Path stop = dotCache.resolve("stop");
    try {
      for (int run = 0; run < 30; run++) {
        assertFalse(jeton.startsFromTheArchive(home), "run " + run);
      }
    } finally {
      Files.writeString(stop, "");
      assertTrue(swapper.waitFor(60, TimeUnit.SECONDS), "the swapper stopped");
      Files.delete(stop);
    }
    // The same files, owned as before, whatever names the swapper left them under.
    assertEquals(before, tree(dotCache));
  }

  /**
   * The same {@code sudo -E} case, without a swap: root's description in a directory of Mallory's.
   * It was opened and read before the directories were checked, so Mallory, who can rename anything
   * there, could make root open a FIFO (and hang) or any file of the machine. Now nothing in it is
   * opened: its access time, which a read moves, stays.
   */
  @Test
  void aDescriptionInAnotherUsersDirectory_isNotEvenOpened() throws Exception {
    OtherUsers.ensure();
    Path cache = cache(home);
    jeton.copyArchive(cache);
    for (Path p : List.of(home, home.resolve(".cache"), cache)) {
      chown(p, MALLORY);
    }
    Path meta = jeton.meta(cache);
    FileTime longAgo = FileTime.fromMillis(0);
    Files.getFileAttributeView(meta, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setTimes(null, longAgo, null); // older than its modification: a read moves it
    assertFalse(jeton.startsFromTheArchive(home, cache, NO_TRAINING));
    assertEquals(
        longAgo,
        Files.readAttributes(meta, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
            .lastAccessTime());
  }

  /** The files under {@code directory}: their depth, kind, owner and size, sorted. */
  private static List<String> tree(Path directory) throws IOException {
    try (Stream<Path> walked = Files.walk(directory)) {
      List<String> files = new ArrayList<>();
      for (Path p : walked.skip(1).toList()) {
        boolean isDirectory = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
        files.add(
            directory.relativize(p).getNameCount()
                + (isDirectory ? " directory " : " file ")
                + Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName()
                + " "
                + (isDirectory ? 0 : Files.size(p)));
      }
      return files.stream().sorted().toList();
    }
  }

  /**
   * Links where the cache directory would be: the old training ran {@code mkdir -p} and {@code
   * chmod 700} through them, so a planted link made root close any directory. Now no link is
   * followed, and nothing is made or changed through one.
   */
  @Test
  void linksOnThePath_areNeverFollowed_norTheirTargetsChanged() throws Exception {
    OtherUsers.ensure();
    // A link to a directory of root's, mode 755.
    Path victim = Files.createDirectory(temporary.resolve("victim"));
    setMode(victim, "rwxr-xr-x");
    Files.createDirectory(home.resolve(".cache"));
    Files.createSymbolicLink(cache(home), victim);
    assertFalse(jeton.startsFromTheArchive(home));
    assertUntouched(victim, "root");

    // A cache home shared with everyone, root's and sticky (as /tmp), where Mallory planted a
    // link named jeton to a directory of Bob's.
    Path shared = Files.createDirectory(temporary.resolve("shared"));
    Files.setAttribute(shared, "unix:mode", 01777, LinkOption.NOFOLLOW_LINKS);
    Path bobs = Files.createDirectory(temporary.resolve("bobs"));
    setMode(bobs, "rwxr-xr-x");
    chown(bobs, BOB);
    Process planting = OtherUsers.shell(MALLORY, shared, "ln -s '" + bobs + "' jeton");
    assertEquals(0, planting.waitFor(), new String(planting.getInputStream().readAllBytes()));
    Map<String, String> inShared = Map.of("XDG_CACHE_HOME", shared.toString());
    assertFalse(jeton.startsFromTheArchive(home, shared.resolve("jeton"), inShared));
    assertUntouched(bobs, BOB);

    // A link higher up, to a directory of root's where the archive would be trusted.
    Path real = Files.createDirectory(temporary.resolve("real"));
    Path linked = Files.createSymbolicLink(temporary.resolve("linked"), real);
    jeton.copyArchive(real.resolve("jeton"));
    Map<String, String> throughLink = Map.of("XDG_CACHE_HOME", linked.toString());
    assertFalse(jeton.startsFromTheArchive(home, real.resolve("jeton"), throughLink));
    assertTrue(
        jeton.startsFromTheArchive(
            home, real.resolve("jeton"), Map.of("XDG_CACHE_HOME", real.toString())));
  }

  /**
   * Every directory from / down to the archive counts, not only its parent: owned by this user or
   * root, writable by no one else (a root-owned sticky directory aside). And the files.
   */
  @Test
  void everyDirectoryOnThePath_andTheFiles_areChecked() throws Exception {
    OtherUsers.ensure();
    Path cache = cache(home);
    Path dotCache = home.resolve(".cache");
    List<String> changes =
        List.of(
            "root's directory two levels up open to all, not sticky",
            "~/.cache sticky and open to all, but not root's",
            "~/.cache Mallory's",
            "the cache directory Mallory's",
            "the description Mallory's",
            "the archive Mallory's",
            "the description writable by all",
            "the archive writable by all",
            "a .. in XDG_CACHE_HOME");
    for (String change : changes) {
      deleteTree(dotCache);
      jeton.copyArchive(cache);
      Map<String, String> env = NO_TRAINING;
      assertTrue(jeton.startsFromTheArchive(home, cache, env), "before: " + change);
      switch (change) {
        case "root's directory two levels up open to all, not sticky" ->
            setMode(temporary, "rwxrwxrwx");
        case "~/.cache sticky and open to all, but not root's" -> {
          chown(dotCache, MALLORY);
          Files.setAttribute(dotCache, "unix:mode", 01777, LinkOption.NOFOLLOW_LINKS);
        }
        case "~/.cache Mallory's" -> chown(dotCache, MALLORY);
        case "the cache directory Mallory's" -> chown(cache, MALLORY);
        case "the description Mallory's" -> chown(jeton.meta(cache), MALLORY);
        case "the archive Mallory's" -> chown(jeton.archive(cache), MALLORY);
        case "the description writable by all" -> setMode(jeton.meta(cache), "rw-rw-rw-");
        case "the archive writable by all" -> setMode(jeton.archive(cache), "rw-rw-rw-");
        case "a .. in XDG_CACHE_HOME" -> {
          Files.createDirectory(dotCache.resolve("x"));
          env =
              Map.of(
                  "JETON_JVMS",
                  "/nonexistent",
                  "XDG_CACHE_HOME",
                  dotCache.resolve("x/..").toString());
        }
        default -> throw new AssertionError(change);
      }
      assertFalse(jeton.startsFromTheArchive(home, cache, env), change);
      setMode(temporary, "rwxr-xr-x");
    }
    // A trailing / is no change.
    deleteTree(dotCache);
    jeton.copyArchive(cache);
    assertTrue(
        jeton.startsFromTheArchive(
            home, cache, Map.of("JETON_JVMS", "/nonexistent", "XDG_CACHE_HOME", dotCache + "/")));
  }

  /**
   * The JDK at the path the archive was made for, replaced by an older JDK whose files are older
   * than the archive (as image layers can leave them): before, every run failed with "Unrecognized
   * VM option 'AOTCache=...'". Now the release file tells, and the command runs.
   */
  @Test
  void aJdkReplacedInPlace_byAnOlderDatedOne_isNotUsed_andTheCommandRuns() throws Exception {
    List<Path> jdks = installedJdks();
    Path newest = jdks.get(jdks.size() - 1);
    Path oldest = jdks.get(0);
    Path jdk = jlink(newest, temporary.resolve("jdk"), MODULES);
    // Made before the archive, so its files are older; another release, whatever is installed.
    Path replacement =
        jlink(
            oldest,
            temporary.resolve("replacement"),
            oldest.equals(newest) ? MODULES + ",jdk.zipfs" : MODULES);
    Path cache = cache(home);
    jeton.run(home, Map.of("JETON_JVMS", jdk.resolve("bin/java").toString()), "--version");
    jeton.awaitArchive(cache);
    assertEquals(jdk.toString(), Files.readAllLines(jeton.meta(cache)).get(0));
    assertTrue(jeton.startsFromTheArchive(home, cache, NO_TRAINING));

    Files.move(jdk, temporary.resolve("jdk.before"));
    Files.move(replacement, jdk); // a rename: the files inside keep their times
    Path dir = temporary.resolve("semaphores");
    assertEquals(
        "ok\n", jeton.run(home, NO_TRAINING, "--dir", dir.toString(), "run", "--", "echo", "ok"));
    assertFalse(jeton.startsFromTheArchive(home, cache, NO_TRAINING));
  }

  /**
   * A JVM that crashes after starting from the archive (as one would on an archive damaged where
   * the file system cannot see it) leaves its report in the cache, not in the working directory,
   * and the next runs start without that archive, then from a new one.
   */
  @Test
  void aRunThatCrashes_reportsIntoTheCache_andTheNextRunsStartWithoutThatArchive()
      throws Exception {
    Path cache = cache(home);
    jeton.copyArchive(cache);
    Path work = Files.createDirectory(temporary.resolve("work"));
    Process run = startHolding(work);
    new ProcessBuilder("kill", "-SEGV", Long.toString(run.pid())).start().waitFor();
    String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(run.waitFor(60, TimeUnit.SECONDS));
    assertEquals(128 + 6, run.exitValue(), out); // the JVM's abort after its crash report
    assertTrue(Files.size(jeton.crash(cache)) > 0, out);
    assertEquals(List.of("started"), listing(work), "no crash report in the working directory");

    assertFalse(jeton.startsFromTheArchive(home));
    jeton.awaitArchive(cache);
    assertFalse(Files.exists(jeton.crash(cache), LinkOption.NOFOLLOW_LINKS));
    assertTrue(jeton.startsFromTheArchive(home));
  }

  /**
   * The JVM is handed the archive as the descriptor the launcher opened and checked, never its
   * name, which it would open again.
   */
  @Test
  void theJvmIsHandedTheDescriptorThatWasChecked() throws Exception {
    Path cache = cache(home);
    jeton.copyArchive(cache);
    Path work = Files.createDirectory(temporary.resolve("work"));
    Process run = startHolding(work);
    try {
      Path proc = Path.of("/proc", Long.toString(run.pid()));
      String line = Files.readString(proc.resolve("cmdline")).replace('\0', ' ');
      assertTrue(
          line.contains("-XX:AOTCache=/proc/self/fd/9 ")
              || line.contains("-XX:SharedArchiveFile=/proc/self/fd/9 "),
          line);
      assertEquals(jeton.archive(cache), Files.readSymbolicLink(proc.resolve("fd/9")));
    } finally {
      run.destroy();
      run.waitFor();
    }
  }

  /** States of the cache that once blocked, crashed or failed a run: each run does its work. */
  @Test
  void noStateOfTheCache_stopsTheCommand() throws Exception {
    Path cache = cache(home);
    List<String> cases =
        List.of(
            "meta is a FIFO",
            "archive is a FIFO",
            "crash is a directory",
            "lock is a file",
            "meta is 100 KB of garbage",
            "meta names / as the JDK",
            "meta names a libjvm outside the JDK",
            "meta names another kind",
            "cache is a file",
            "meta is empty",
            "archive is empty");
    for (String state : cases) {
      deleteTree(cache);
      jeton.copyArchive(cache);
      Path meta = jeton.meta(cache);
      Path archive = jeton.archive(cache);
      List<String> lines = Files.readAllLines(meta);
      switch (state) {
        case "meta is a FIFO" -> mkfifo(meta);
        case "archive is a FIFO" -> mkfifo(archive);
        case "crash is a directory" -> Files.createDirectory(jeton.crash(cache));
        case "lock is a file" -> {
          Files.delete(meta);
          Files.writeString(jeton.lock(cache), "x");
        }
        case "meta is 100 KB of garbage" -> Files.write(meta, new byte[100_000]);
        case "meta names / as the JDK" -> rewrite(meta, lines, 0, "/");
        case "meta names a libjvm outside the JDK" ->
            rewrite(meta, lines, 3, "/tmp/lib/x/libjvm.so");
        case "meta names another kind" -> rewrite(meta, lines, 1, "../../x");
        case "cache is a file" -> {
          deleteTree(cache);
          Files.writeString(cache, "x");
        }
        case "meta is empty" -> Files.write(meta, new byte[0]);
        case "archive is empty" -> Files.write(archive, new byte[0]);
        default -> throw new AssertionError(state);
      }
      assertFalse(jeton.startsFromTheArchive(home, cache, NO_TRAINING), state);
      assertEquals(VERSION, jeton.run(home, NO_TRAINING, "--version"), state);
      jeton.awaitNoTraining(cache);
    }
  }

  private Process startHolding(Path work) throws Exception {
    return jeton.startHolding(home, work, temporary.resolve("semaphores"), NO_TRAINING);
  }

  private static void assertUntouched(Path directory, String owner) throws IOException {
    assertEquals(
        "rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)));
    assertEquals(owner, Files.getOwner(directory).getName());
    assertEquals(List.of(), listing(directory));
  }
}
