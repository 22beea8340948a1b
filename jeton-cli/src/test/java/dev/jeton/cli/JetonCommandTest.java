package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jeton.contract.OtherUsers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code jeton} command on this machine's semaphores, in a temporary directory. */
class JetonCommandTest extends AbstractJetonCommandTest {
  @Override
  List<String> backendArgs() {
    return List.of("--dir", directory.toString());
  }

  @Override
  List<String> quickRecoveryArgs() {
    return List.of(); // a file lock is freed the moment its holder dies
  }

  @Override
  Backend newProbe() {
    return new HostBackend(directory);
  }

  @Override
  void damageTheStoredLimit(String name) throws Exception {
    Files.writeString(directory.resolve(name + "/limit"), "garbage");
  }

  /** As a member of a shared directory can. */
  @Override
  void makeSemaphoreNamed(String name) throws Exception {
    Files.writeString(Files.createDirectory(directory.resolve(name)).resolve("limit"), "1\n");
  }

  /**
   * Runs {@code jeton args...} with no --dir, in exactly the environment given; it must exit with
   * {@code exitCode}.
   */
  private String withEnvironment(Map<String, String> env, int exitCode, String... args)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Jeton.class.getName());
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().putAll(env);
    Process p = builder.start();
    started.add(p);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(exitCode, exitOf(p), out);
    return out;
  }

  /**
   * Asks for a semaphore no one has, whose error names the directory whatever else is in it
   * (regression: a `status` listing names it only when it is empty, so the test failed on a machine
   * where jeton had been used).
   */
  @Test
  void defaultDirectory_isTheSameForALoginShellCronAndSudo() throws Exception {
    Path runtime = Files.createDirectory(directory.resolve("runtime"));
    String nobodys = "nobodys-" + ProcessHandle.current().pid();
    String login =
        withEnvironment(
            Map.of(
                "XDG_RUNTIME_DIR",
                runtime.toString(),
                "USER",
                "someone",
                "TMPDIR",
                runtime.toString()),
            2,
            "status",
            "--name",
            nobodys);
    String cron = withEnvironment(Map.of(), 2, "status", "--name", nobodys);
    assertEquals(cron, login);
    String uid = String.valueOf(new com.sun.security.auth.module.UnixSystem().getUid());
    assertTrue(login.contains("/tmp/jeton-" + uid), login);
  }

  @Test
  void missingDirectory_isMadePrivateByTheFirstRun() throws Exception {
    Path dir = directory.resolve("new");
    Process p = jetonAlone("--dir", dir.toString(), "run", "--", "true");
    assertEquals(0, exitOf(p), outputOf(p));
    assertEquals(
        "rwx------",
        java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
  }

  @Test
  void directoryOthersMayEnter_isRefusedWithTheFix() throws Exception {
    Path open = Files.createDirectory(directory.resolve("open"));
    Files.setPosixFilePermissions(
        open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    Process p = jetonAlone("--dir", open.toString(), "run", "--", "true");
    String out = outputOf(p);
    assertEquals(2, p.exitValue(), out);
    assertTrue(out.contains("lets other users in") && out.contains("chmod 700"), out);
  }

  @Test
  void processStoppedWhileTakingAPlace_neverHangsTheOthers() throws Exception {
    assertEquals(0, exitOf(jeton("run", "--name", "frozen", "--", "true")));
    Process stopped =
        dev.jeton.contract.Processes.java(
            dev.jeton.contract.HoldLock.class, directory.resolve("frozen/meta.lock").toString());
    started.add(stopped);
    assertEquals(
        "locked",
        new java.io.BufferedReader(
                new java.io.InputStreamReader(stopped.getInputStream(), StandardCharsets.UTF_8))
            .readLine());
    assertEquals(
        0, exitOf(new ProcessBuilder("kill", "-STOP", Long.toString(stopped.pid())).start()));

    assertEquals(75, exitOf(jeton("run", "--name", "frozen", "--no-wait", "--", "true")));
    assertEquals(75, exitOf(jeton("run", "--name", "frozen", "--timeout", "1s", "--", "true")));
    Process status = jeton("status", "--name", "frozen");
    assertEquals(0, exitOf(status), outputOf(status));
    Process waiting = jeton("run", "--name", "frozen", "--", "true");
    awaitLine(waiting); // started: its JVM is up (see below)
    assertEquals(
        0, exitOf(new ProcessBuilder("kill", "-TERM", Long.toString(waiting.pid())).start()));
    assertEquals(128 + 15, exitOf(waiting), "SIGTERM ends a request waiting for the stopped one");

    new ProcessBuilder("kill", "-CONT", Long.toString(stopped.pid())).start().waitFor();
    stopped.destroyForcibly();
    exitOf(stopped);
    assertEquals(0, exitOf(jeton("run", "--name", "frozen", "--no-wait", "--", "true")));
  }

  /** Waits until the process is far enough to handle signals: its command's session exists. */
  private static void awaitLine(Process jeton) throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
    while (jeton.descendants().findAny().isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }

  /**
   * A full disk: whatever jeton could not write, where its semaphores live or in its temporary
   * directory, it names in one line, with what it was doing and why.
   */
  @Test
  void fullDisk_saysWhichFileItCouldNotWriteAndWhy() throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "a full disk is a small tmpfs mounted for the test, which needs root (CI runs as root)");
    Path small = Files.createDirectory(directory.resolve("small"));
    mount(small);
    try {
      assertEquals(
          0, exitOf(jetonAlone("--dir", small.toString(), "run", "--name", "old", "--", "true")));
      try (var out = Files.newOutputStream(small.resolve("filler"))) {
        byte[] block = new byte[4096];
        for (; ; ) {
          out.write(block);
        }
      } catch (java.io.IOException full) {
        // the disk is full
      }
      List<List<String>> commands =
          List.of(
              List.of("--dir", small.toString(), "run", "--name", "new", "--", "true"),
              List.of("--dir", small.toString(), "run", "--name", "old", "--", "true"),
              List.of("--dir", small.toString(), "limit", "--name", "old", "3"));
      for (List<String> command : commands) {
        Process p = jetonAlone(command.toArray(new String[0]));
        String said = outputOf(p);
        assertEquals(1, p.exitValue(), command + ": " + said);
        assertEquals(1, said.lines().count(), command + ": " + said);
        assertTrue(
            said.matches("jeton: cannot .*" + small + "/\\S+: No space left on device\n"),
            command + ": " + said);
      }
      Process run =
          jetonWithJvmOptions(
              List.of("-Djava.io.tmpdir=" + small),
              "--dir",
              directory.resolve("roomy").toString(),
              "run",
              "--",
              "true");
      String said = outputOf(run);
      assertEquals(1, run.exitValue(), said);
      assertTrue(
          said.matches("jeton: cannot .*" + small + "/\\S+: No space left on device\n"), said);
    } finally {
      umount(small);
    }
  }

  private static void mount(Path dir) throws Exception {
    Process p =
        new ProcessBuilder(
                "mount", "-t", "tmpfs", "-o", "size=64k,mode=700", "tmpfs", dir.toString())
            .redirectErrorStream(true)
            .start();
    assertEquals(0, exitOf(p), outputOf(p));
  }

  private static void umount(Path dir) throws Exception {
    Process p = new ProcessBuilder("umount", dir.toString()).redirectErrorStream(true).start();
    assertEquals(0, exitOf(p), outputOf(p));
  }

  @Test
  void sharedDirectory_worksForEveryMemberOfItsGroupAndNoOneElse() throws Exception {
    OtherUsers.ensure();
    Path shared = OtherUsers.sharedDirectory();
    String[] run = {
      "--dir", shared.toString(), "run", "--name", "deploy", "--permits", "2", "--", "true"
    };
    for (String user : List.of(OtherUsers.ALICE, OtherUsers.BOB)) {
      Process p = OtherUsers.java(user, Jeton.class.getName(), run);
      started.add(p);
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(0, exitOf(p), user + ": " + out);
    }
    Process mallory = OtherUsers.java(OtherUsers.MALLORY, Jeton.class.getName(), run);
    started.add(mallory);
    String out = new String(mallory.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(2, exitOf(mallory), out);
    assertTrue(out.contains("neither of them you"), out);
  }

  /**
   * Ctrl-Z (SIGTSTP, as the terminal sends it to jeton) stops the job as a shell's: the command,
   * all of it, and jeton itself (its permits stay held); SIGCONT (fg) continues both. Before, jeton
   * stopped alone and the command, in a session of its own, ran on.
   */
  @Test
  void run_stoppedWithCtrlZ_stopsTheCommandAndItselfAndContinuesBoth() throws Exception {
    StoppableCommand command = new StoppableCommand(directory);
    List<String> args = new ArrayList<>(List.of("run", "--name", "ctrlz", "--"));
    args.addAll(command.line());
    Process run = jeton(args.toArray(new String[0]));
    long commandPid = command.awaitRunning();

    StoppableCommand.send("TSTP", run.pid());
    StoppableCommand.awaitStopped(commandPid, true, "the command");
    StoppableCommand.awaitStopped(run.pid(), true, "jeton");
    assertEquals(
        75,
        exitOf(jeton("run", "--name", "ctrlz", "--no-wait", "--", "true")),
        "the permit stays held");

    StoppableCommand.send("CONT", run.pid());
    StoppableCommand.awaitStopped(commandPid, false, "the command");
    StoppableCommand.awaitStopped(run.pid(), false, "jeton");
    command.finish();
    assertEquals(0, exitOf(run), outputOf(run));
    assertEquals(0, exitOf(jeton("run", "--name", "ctrlz", "--no-wait", "--", "true")));
  }
}
