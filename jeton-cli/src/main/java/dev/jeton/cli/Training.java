package dev.jeton.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The training run from which the {@code jeton} launcher makes its start-up archive (a JDK 25 AOT
 * cache, or a class-data-sharing archive on older JDKs; decision 59): the commands' usual paths, so
 * that the classes they load, and the lambdas they link, are in the archive. It runs in the
 * background, in a private temporary directory, and prints nothing. With {@code --check} it does
 * nothing: the launcher starts it so to see that a new archive maps.
 */
final class Training {
  private Training() {}

  /**
   * Runs the commands of this machine's semaphores once each ({@code host}), or looks up a
   * semaphore that does not exist in the Redis at {@code JETON_REDIS_URL}, and one that cannot be
   * reached ({@code redis}); {@code --check}: nothing.
   */
  public static void main(String[] args) throws IOException {
    if (args.length == 0 || args[0].equals("--check")) {
      return;
    }
    PrintStream out = System.out;
    PrintStream err = System.err;
    PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream(), true, "UTF-8");
    System.setOut(nowhere);
    System.setErr(nowhere);
    Path dir = Files.createTempDirectory("jeton-training-"); // private: mode 700
    try {
      String d = dir.toString();
      if (args[0].equals("redis")) {
        // The user's Redis, read only: a semaphore no one has is looked up, which connects,
        // subscribes and calls the function once, and writes nothing (the command then says
        // there is no such semaphore). Most of a --redis command's classes are on that path.
        String uri = System.getenv("JETON_REDIS_URL");
        if (uri != null && !uri.isEmpty()) {
          String nobodys = "jeton-training-" + Long.toHexString(new java.util.Random().nextLong());
          Jeton.run("--redis", uri, "status", "--name", nobodys);
        }
        // And the paths of a Redis that cannot be reached: a port just freed.
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
          port = socket.getLocalPort();
        }
        Jeton.run("--redis", "redis://127.0.0.1:" + port, "status");
        Jeton.run("--redis", "redis://127.0.0.1:" + port, "run", "--", "true");
        return;
      }
      Jeton.run("--dir", d, "run", "--name", "training", "--permits", "2", "--", "true");
      Jeton.run("--dir", d, "run", "--name", "training", "--no-wait", "--", "true");
      Jeton.run("--dir", d, "run", "--name", "training", "--timeout", "5s", "-q", "--", "true");
      Jeton.run("--dir", d, "status");
      Jeton.run("--dir", d, "status", "--name", "training", "--json");
      Jeton.run("--dir", d, "wait", "--name", "training", "--timeout", "5s");
      Jeton.run("--dir", d, "limit", "--name", "training", "3");
    } finally {
      System.setOut(out);
      System.setErr(err);
      CommandFiles.deleteTree(dir);
    }
  }
}
