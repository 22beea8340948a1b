package dev.jeton.cli;

import dev.jeton.host.Holder;
import dev.jeton.host.HostSemaphore;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code jeton status}: limits, holders and waiters. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = "Shows the limit, who holds permits and who waits, for one semaphore or all.",
    footer = {"", "Examples:", "  jeton status", "  jeton status --name deploy --json"})
final class StatusCommand implements Callable<Integer> {
  @ParentCommand Jeton jeton;
  @Spec CommandSpec spec;

  @Option(names = "--name", paramLabel = "NAME", description = "One semaphore (default: all).")
  @Nullable String name;

  @Option(names = "--json", description = "Print JSON instead of text.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    List<HostSemaphore.Status> all = new ArrayList<>();
    String one = name;
    List<String> names = one != null ? List.of(one) : HostSemaphore.list(jeton.directory());
    for (String n : names) {
      all.add(jeton.semaphore(n).open().status());
    }
    PrintWriter out = spec.commandLine().getOut();
    out.print(json ? toJson(all) : toText(all));
    out.flush();
    return 0;
  }

  private String toText(List<HostSemaphore.Status> all) {
    if (all.isEmpty()) {
      return "no semaphores in " + jeton.directory() + "\n";
    }
    StringBuilder text = new StringBuilder();
    for (HostSemaphore.Status s : all) {
      text.append(s.name()).append(": limit ").append(s.limit()).append(", held ")
          .append(s.held()).append(", waiting ").append(s.waiters().size()).append('\n');
      for (Holder h : s.holders()) {
        text.append("  holds ").append(describe(h)).append('\n');
      }
      for (Holder h : s.waiters()) {
        text.append("  waits ").append(describe(h)).append('\n');
      }
    }
    return text.toString();
  }

  private static String describe(Holder h) {
    return h.permits() + " pid " + h.pid() + " " + h.user() + "@" + h.host() + " since "
        + h.since() + ": " + h.command();
  }

  static String toJson(List<HostSemaphore.Status> all) {
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < all.size(); i++) {
      HostSemaphore.Status s = all.get(i);
      json.append(i == 0 ? "\n  " : ",\n  ")
          .append("{\"name\": ").append(quote(s.name()))
          .append(", \"limit\": ").append(s.limit())
          .append(", \"held\": ").append(s.held())
          .append(", \"holders\": ").append(holders(s.holders()))
          .append(", \"waiters\": ").append(holders(s.waiters()))
          .append('}');
    }
    return json.append(all.isEmpty() ? "]\n" : "\n]\n").toString();
  }

  private static String holders(List<Holder> holders) {
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < holders.size(); i++) {
      Holder h = holders.get(i);
      json.append(i == 0 ? "" : ", ")
          .append("{\"pid\": ").append(h.pid())
          .append(", \"permits\": ").append(h.permits())
          .append(", \"user\": ").append(quote(h.user()))
          .append(", \"host\": ").append(quote(h.host()))
          .append(", \"since\": ").append(quote(h.since().toString()))
          .append(", \"command\": ").append(quote(h.command()))
          .append('}');
    }
    return json.append(']').toString();
  }

  /** A JSON string literal. */
  static String quote(String text) {
    StringBuilder quoted = new StringBuilder("\"");
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"':
          quoted.append("\\\"");
          break;
        case '\\':
          quoted.append("\\\\");
          break;
        case '\n':
          quoted.append("\\n");
          break;
        case '\r':
          quoted.append("\\r");
          break;
        case '\t':
          quoted.append("\\t");
          break;
        default:
          if (c < 0x20) {
            quoted.append(String.format("\\u%04x", (int) c));
          } else {
            quoted.append(c);
          }
      }
    }
    return quoted.append('"').toString();
  }
}
