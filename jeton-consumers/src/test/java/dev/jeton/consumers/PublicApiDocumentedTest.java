package dev.jeton.consumers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.ModifiersTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.lang.model.element.Modifier;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Every public or protected type, method, constructor and field of the published modules has a
 * doc comment, as the javadoc tool's doclint "missing" group demands; only the parsed sources
 * are read, so this takes a second.
 *
 * <p>The javadoc tool itself runs with doclint on (and fails the build on its warnings) for
 * everything but that group, because that group also demands an {@code @param} and an {@code
 * @return} on every method, where this code base writes prose ("Returns the permits ..."):
 * decision 36. Overriding methods ({@code @Override}) inherit their comment, as in javadoc.
 */
class PublicApiDocumentedTest {
  private static final Path ROOT = Path.of(System.getProperty("jeton.root"));
  private static final List<String> MODULES =
      List.of(
          "jeton-core", "jeton-host", "jeton-redis", "jeton-http", "jeton-micrometer", "jeton-cli");

  @Test
  void everyPublicElementHasADocComment() throws IOException {
    Set<String> missing = new TreeSet<>();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, null)) {
      JavacTask task =
          (JavacTask) javac.getTask(null, files, null, List.of("-proc:none"), null, sources(files));
      DocTrees docs = DocTrees.instance(task);
      for (CompilationUnitTree unit : task.parse()) {
        for (Tree type : unit.getTypeDecls()) {
          if (type instanceof ClassTree) {
            new Scanner(docs, unit, missing).type(new TreePath(new TreePath(unit), type), true);
          }
        }
      }
    }
    assertEquals(Set.of(), missing, "public API without a doc comment");
  }

  /** The main sources of the published modules, but for module-info and internal packages. */
  private static Iterable<? extends JavaFileObject> sources(StandardJavaFileManager files)
      throws IOException {
    List<Path> paths;
    try (Stream<Path> all =
        MODULES.stream().map(m -> ROOT.resolve(m).resolve("src/main/java")).flatMap(d -> walk(d))) {
      paths =
          all.filter(p -> p.toString().endsWith(".java"))
              .filter(p -> !p.endsWith("module-info.java"))
              .filter(p -> !p.toString().contains("/internal/"))
              .collect(Collectors.toList());
    }
    return files.getJavaFileObjectsFromPaths(paths);
  }

  @SuppressWarnings("StreamResourceLeak") // flatMap closes each stream it is given
  private static Stream<Path> walk(Path dir) {
    try {
      return Files.walk(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Walks the declarations (not the bodies) of one file, collecting what lacks a comment. */
  private static final class Scanner {
    private final DocTrees docs;
    private final CompilationUnitTree unit;
    private final Set<String> missing;
    private final Deque<String> names = new ArrayDeque<>();

    Scanner(DocTrees docs, CompilationUnitTree unit, Set<String> missing) {
      this.docs = docs;
      this.unit = unit;
      this.missing = missing;
    }

    /** {@code visibleOutside}: every enclosing type is part of the API. */
    void type(TreePath path, boolean visibleOutside) {
      ClassTree type = (ClassTree) path.getLeaf();
      boolean inInterface = !names.isEmpty() && enclosingIsInterface(path);
      if (!visibleOutside || !isApi(type.getModifiers(), inInterface)) {
        return;
      }
      names.addLast(type.getSimpleName().toString());
      require(path, "type");
      boolean isInterface =
          type.getKind() == Tree.Kind.INTERFACE || type.getKind() == Tree.Kind.ANNOTATION_TYPE;
      for (Tree member : type.getMembers()) {
        TreePath memberPath = new TreePath(path, member);
        if (member instanceof ClassTree) {
          type(memberPath, true);
        } else if (member instanceof MethodTree method) {
          boolean constructor = method.getName().contentEquals("<init>");
          if (isApi(method.getModifiers(), isInterface) && !overrides(method)) {
            require(memberPath, constructor ? "constructor" : method.getName() + "()");
          }
        } else if (member instanceof VariableTree field) {
          if (isApi(field.getModifiers(), isInterface)) {
            require(memberPath, field.getName().toString());
          }
        }
      }
      names.removeLast();
    }

    private boolean enclosingIsInterface(TreePath path) {
      Tree.Kind kind = path.getParentPath().getLeaf().getKind();
      return kind == Tree.Kind.INTERFACE || kind == Tree.Kind.ANNOTATION_TYPE;
    }

    private void require(TreePath path, String what) {
      if (docs.getDocCommentTree(path) == null) {
        missing.add(where() + (what.equals("type") ? "" : "." + what));
      }
    }

    private String where() {
      String pkg = unit.getPackageName() == null ? "" : unit.getPackageName() + ".";
      return pkg + String.join(".", names);
    }

    private static boolean isApi(ModifiersTree modifiers, boolean inInterface) {
      Set<Modifier> flags = modifiers.getFlags();
      return flags.contains(Modifier.PUBLIC)
          || flags.contains(Modifier.PROTECTED)
          || (inInterface && !flags.contains(Modifier.PRIVATE));
    }

    private static boolean overrides(MethodTree method) {
      return method.getModifiers().getAnnotations().stream()
          .anyMatch(a -> a.getAnnotationType().toString().equals("Override"));
    }
  }
}
