package dev.jeton.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  /** Runs {@code jeton args...} with no --dir, in exactly the environment given. */
  private String withEnvironment(Map<String, String> env, String... args) throws Exception {
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
    assertEquals(0, exitOf(p), out);
    return out;
  }

  @Test
  void defaultDirectory_isTheSameForALoginShellCronAndSudo() throws Exception {
    Path runtime = Files.createDirectory(directory.resolve("runtime"));
    String login =
        withEnvironment(
            Map.of("XDG_RUNTIME_DIR", runtime.toString(), "USER", "someone", "TMPDIR", runtime.toString()),
            "status");
    String cron = withEnvironment(Map.of(), "status");
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
    Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    Process p = jetonAlone("--dir", open.toString(), "run", "--", "true");
    String out = outputOf(p);
    assertEquals(2, p.exitValue(), out);
    assertTrue(out.contains("lets other users in") && out.contains("chmod 700"), out);
  }

  @Test
  void sharedDirectory_worksForEveryMemberOfItsGroupAndNoOneElse() throws Exception {
    OtherUsers.ensure();
    Path shared = OtherUsers.sharedDirectory();
    String[] run = {"--dir", shared.toString(), "run", "--name", "deploy", "--permits", "2", "--", "true"};
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
}
