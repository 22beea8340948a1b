package dev.jeton.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Real local users for tests that attack a shared directory as another user would: made with {@code
 * useradd} (the tests run as root in CI), and processes started as them with {@code setpriv}. The
 * users have no home and no login shell.
 *
 * <ul>
 *   <li>{@link #ALICE} and {@link #BOB}: members of {@link #GROUP}, who share semaphores;
 *   <li>{@link #MALLORY}: in no group of theirs.
 * </ul>
 */
public final class OtherUsers {
  public static final String GROUP = "jetonshare";
  public static final String ALICE = "jeton-alice";
  public static final String BOB = "jeton-bob";
  public static final String MALLORY = "jeton-mallory";

  private static Path classPath;

  private OtherUsers() {}

  /**
   * Makes the users and the group if they are missing. Skips the calling test, saying why, when not
   * run as root: only root can make users and run processes as them.
   */
  public static synchronized void ensure() throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "this test runs processes as other users, which needs root: run the suite as root (CI"
            + " does), or in a container");
    run("groupadd", "-f", GROUP);
    for (String user : List.of(ALICE, BOB, MALLORY)) {
      if (runQuietly("id", "-u", user) != 0) {
        List<String> add =
            new ArrayList<>(List.of("useradd", "-M", "-N", "-s", "/usr/sbin/nologin"));
        if (!user.equals(MALLORY)) {
          add.addAll(List.of("-G", GROUP));
        }
        add.add(user);
        run(add.toArray(new String[0]));
      }
    }
  }

  /** The numeric id of a user or group, from {@code id} or {@code getent}. */
  public static int groupId(String group) throws Exception {
    Process p = new ProcessBuilder("getent", "group", group).start();
    String line = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    p.waitFor();
    return Integer.parseInt(line.split(":")[2]);
  }

  /**
   * A directory shared with {@link #GROUP} as the README says to make one: owned by root and the
   * group, mode 2770. It is inside a fresh directory others may enter, under the system's temporary
   * directory.
   */
  public static Path sharedDirectory() throws Exception {
    Path parent = TemporaryTrees.create("jeton-users");
    Files.setAttribute(parent, "unix:mode", 0755, LinkOption.NOFOLLOW_LINKS);
    Path shared = Files.createDirectory(parent.resolve("shared"));
    Files.setAttribute(shared, "unix:gid", groupId(GROUP), LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(shared, "unix:mode", 02770, LinkOption.NOFOLLOW_LINKS);
    return shared;
  }

  /**
   * Starts {@code main} with {@code args} in a JVM running as {@code user}, with this JVM's class
   * path (copied where every user may read it: the original may be under root's home).
   */
  public static Process java(String user, String main, String... args) throws Exception {
    List<String> command =
        asUser(
            user,
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp",
            readableClassPath(),
            main);
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /** Starts {@code sh -c script} as {@code user}, in {@code directory}. */
  public static Process shell(String user, Path directory, String script) throws Exception {
    return new ProcessBuilder(asUser(user, "sh", "-c", script))
        .directory(directory.toFile())
        .redirectErrorStream(true)
        .start();
  }

  /** {@code command} run as {@code user}, with that user's groups and an empty environment. */
  private static List<String> asUser(String user, String... command) throws Exception {
    List<String> line =
        new ArrayList<>(
            List.of(
                "setpriv",
                "--reuid=" + user,
                "--regid=" + primaryGroup(user),
                "--init-groups",
                "--reset-env",
                "--"));
    line.addAll(List.of(command));
    return line;
  }

  private static String primaryGroup(String user) throws Exception {
    Process p = new ProcessBuilder("id", "-g", user).start();
    String gid = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    p.waitFor();
    return gid;
  }

  /** This JVM's class path, copied once into a directory every user may read. */
  public static synchronized String readableClassPath() throws IOException {
    if (classPath == null) {
      Path copy = TemporaryTrees.create("jeton-classpath");
      Files.setAttribute(copy, "unix:mode", 0755, LinkOption.NOFOLLOW_LINKS);
      classPath = copy;
      int i = 0;
      for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
        Path source = Path.of(entry);
        if (Files.exists(source)) {
          copyReadable(source, copy.resolve(i++ + "-" + source.getFileName()));
        }
      }
    }
    List<String> entries = new ArrayList<>();
    try (Stream<Path> copied = Files.list(classPath)) {
      copied.sorted().forEach(p -> entries.add(p.toString()));
    }
    return String.join(java.io.File.pathSeparator, entries);
  }

  private static void copyReadable(Path source, Path target) throws IOException {
    if (Files.isDirectory(source)) {
      try (Stream<Path> tree = Files.walk(source)) {
        for (Path from : (Iterable<Path>) tree::iterator) {
          Path to = target.resolve(source.relativize(from).toString());
          Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
          Files.setAttribute(to, "unix:mode", Files.isDirectory(to) ? 0755 : 0644);
        }
      }
    } else {
      Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
      Files.setAttribute(target, "unix:mode", 0644);
    }
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + out);
  }

  private static int runQuietly(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor();
  }
}
