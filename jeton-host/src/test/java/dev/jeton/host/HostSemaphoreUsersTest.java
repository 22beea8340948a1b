package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.contract.OtherUsers;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two real users sharing a directory, and a third who must not get in: the sharing model of {@link
 * HostSemaphore} (a group-owned directory, mode 2770) tried with real processes.
 */
@Timeout(180) // a hang guard; each child is waited for by the line it prints
class HostSemaphoreUsersTest {
  private final List<Process> children = new ArrayList<>();
  private Path shared;

  @BeforeEach
  void users() throws Exception {
    OtherUsers.ensure();
    shared = OtherUsers.sharedDirectory();
  }

  @AfterEach
  void killChildren() {
    children.forEach(Process::destroyForcibly);
  }

  private Child as(String user, String... args) throws Exception {
    Process p = OtherUsers.java(user, AsUser.class.getName(), args);
    children.add(p);
    return new Child(p);
  }

  /** A child process, read line by line. */
  private static final class Child {
    final Process process;
    final BufferedReader out;
    final Writer in;

    Child(Process process) {
      this.process = process;
      this.out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    String line() throws IOException {
      return String.valueOf(out.readLine());
    }

    void say() throws IOException {
      in.write("go\n");
      in.flush();
    }
  }

  @Test
  void membersOfTheGroup_shareTheSemaphoreTheOtherCreated() throws Exception {
    Child alice = as(OtherUsers.ALICE, "hold", shared.toString(), "deploy", "1");
    assertEquals("held", alice.line());
    assertEquals("busy", as(OtherUsers.BOB, "try", shared.toString(), "deploy").line());
    alice.say();
    assertEquals("released", alice.line());
    assertEquals("got", as(OtherUsers.BOB, "try", shared.toString(), "deploy").line());

    int group = OtherUsers.groupId(OtherUsers.GROUP);
    for (String file :
        List.of("deploy/limit", "deploy/slots/0", "deploy/meta.lock", "deploy/seq")) {
      Path path = shared.resolve(file);
      assertEquals(group, Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS), file);
      assertEquals(
          0660,
          (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777,
          file);
    }
  }

  @Test
  void userOutsideTheGroup_isRefusedAndCannotBlockPermits() throws Exception {
    Child alice = as(OtherUsers.ALICE, "hold", shared.toString(), "deploy", "2");
    assertEquals("held", alice.line());
    String refused = as(OtherUsers.MALLORY, "try", shared.toString(), "deploy").line();
    assertTrue(refused.startsWith("error: ") && refused.contains("neither of them you"), refused);
    // A shared lock on a slot would block every permit while status shows none held: a user
    // who could read the slot files could do it. No one outside the group can.
    Path slot = shared.resolve("deploy/slots/0");
    assertEquals("denied", as(OtherUsers.MALLORY, "readlock", slot.toString()).line());
    assertEquals("got", as(OtherUsers.BOB, "try", shared.toString(), "deploy").line());
    alice.say();
    assertEquals("released", alice.line());
  }
}
