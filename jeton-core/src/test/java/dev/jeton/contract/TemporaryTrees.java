package dev.jeton.contract;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Temporary directories that live as long as the test JVM and are removed, with all they hold, when
 * it exits: for fixtures shared by a whole class (a Lincheck run, another user's class path), where
 * JUnit's per-test {@code @TempDir} does not fit. {@code File.deleteOnExit} would not do: it
 * removes only an empty directory.
 */
public final class TemporaryTrees {
  private static final List<Path> MADE = new ArrayList<>();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  synchronized (MADE) {
                    MADE.forEach(TemporaryTrees::deleteTree);
                  }
                }));
  }

  private TemporaryTrees() {}

  /** A new directory under the system's temporary directory, removed when the JVM exits. */
  public static Path create(String prefix) throws IOException {
    return removedAtExit(Files.createTempDirectory(prefix));
  }

  /**
   * As {@link #create}, in memory ({@code /dev/shm}) where the system has it: for tests that make
   * many files to check logic, not the disk, which a busy disk would slow several times over.
   */
  public static Path createInMemory(String prefix) throws IOException {
    Path memory = Path.of("/dev/shm");
    if (!Files.isDirectory(memory) || !Files.isWritable(memory)) {
      return create(prefix);
    }
    return removedAtExit(Files.createTempDirectory(memory, prefix));
  }

  private static Path removedAtExit(Path made) {
    synchronized (MADE) {
      MADE.add(made);
    }
    return made;
  }

  /** Removes {@code root} and all it holds, without following symbolic links. */
  private static void deleteTree(Path root) {
    try (Stream<Path> tree = Files.walk(root)) {
      for (Path p : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    } catch (IOException | RuntimeException ignored) {
      // left in the temporary directory
    }
  }
}
