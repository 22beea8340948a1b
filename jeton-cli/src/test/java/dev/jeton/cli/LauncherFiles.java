package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** Files, modes, owners and JDKs for the launcher's tests. */
final class LauncherFiles {
  private LauncherFiles() {}

  /** The JDKs installed (17 or later, with jlink), oldest first: /usr/lib/jvm's and this one. */
  static List<Path> installedJdks() throws IOException {
    List<Path> homes = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"))));
    Path jvms = Path.of("/usr/lib/jvm");
    if (Files.isDirectory(jvms)) {
      try (Stream<Path> listed = Files.list(jvms)) {
        listed.filter(h -> Files.isExecutable(h.resolve("bin/jlink"))).forEach(homes::add);
      }
    }
    List<Path> jdks = new ArrayList<>();
    for (Path h : homes) {
      Path real = h.toRealPath();
      if (feature(real) >= 17
          && Files.isExecutable(real.resolve("bin/jlink"))
          && !jdks.contains(real)) {
        jdks.add(real);
      }
    }
    jdks.sort(Comparator.comparingInt(LauncherFiles::feature));
    assertFalse(jdks.isEmpty(), "no JDK with jlink: run the tests on a JDK, not a JRE");
    return jdks;
  }

  static int feature(Path jdk) {
    try {
      for (String line : Files.readAllLines(jdk.resolve("release"))) {
        if (line.startsWith("JAVA_VERSION=")) {
          return Runtime.Version.parse(line.substring(14, line.length() - 1)).feature();
        }
      }
    } catch (IOException | IllegalArgumentException e) {
      return 0;
    }
    return 0;
  }

  /** A runtime image of {@code jdk}'s, made by its jlink, of {@code modules}. */
  static Path jlink(Path jdk, Path output, String modules) throws Exception {
    Process p =
        new ProcessBuilder(
                jdk.resolve("bin/jlink").toString(),
                "--add-modules",
                modules,
                "--output",
                output.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    return output;
  }

  static void rewrite(Path meta, List<String> lines, int index, String value) throws IOException {
    List<String> changed = new ArrayList<>(lines);
    changed.set(index, value);
    Files.write(meta, changed);
  }

  static void mkfifo(Path path) throws Exception {
    Files.delete(path);
    assertEquals(0, new ProcessBuilder("mkfifo", path.toString()).start().waitFor());
  }

  static List<String> listing(Path directory) throws IOException {
    try (Stream<Path> listed = Files.list(directory)) {
      return listed.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  static void setMode(Path path, String mode) throws IOException {
    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
  }

  static void chown(Path path, String user) throws IOException {
    Files.setOwner(
        path, FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(user));
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
      Files.delete(root);
      return;
    }
    try (Stream<Path> tree = Files.walk(root)) {
      for (Path p : tree.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
