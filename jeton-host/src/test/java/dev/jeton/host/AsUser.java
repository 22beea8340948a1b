package dev.jeton.host;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * A child process for tests, run as another user: one operation on a host semaphore, reported on
 * stdout. Arguments: the operation, then its operands.
 *
 * <ul>
 *   <li>{@code hold DIR NAME LIMIT}: takes a permit, says "held", waits for a line on stdin,
 *       releases, says "released".
 *   <li>{@code try DIR NAME}: says "got" if tryAcquire got a permit (and gives it back), else
 *       "busy".
 *   <li>{@code readlock FILE}: tries to take a shared lock on FILE, as a user with read access
 *       could to block permits; says "locked" and holds it until stdin closes, or "denied".
 * </ul>
 *
 * Any failure is printed as "error: " and the message.
 */
public final class AsUser {
  private AsUser() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try {
      switch (args[0]) {
        case "hold" -> {
          HostSemaphore sem =
              HostSemaphore.builder(args[2])
                  .directory(Path.of(args[1]))
                  .limitIfNew(Integer.parseInt(args[3]))
                  .open();
          var permit = sem.acquire(1);
          say("held");
          in.readLine();
          permit.release();
          say("released");
        }
        case "try" -> {
          HostSemaphore sem = HostSemaphore.builder(args[2]).directory(Path.of(args[1])).open();
          Optional<dev.jeton.Permit> permit = sem.tryAcquire(1);
          permit.ifPresent(dev.jeton.Permit::release);
          say(permit.isPresent() ? "got" : "busy");
        }
        case "readlock" -> {
          try (FileChannel channel = FileChannel.open(Path.of(args[1]), StandardOpenOption.READ)) {
            channel.lock(0, Long.MAX_VALUE, true);
            say("locked");
            in.readLine();
          } catch (java.nio.file.AccessDeniedException e) {
            say("denied");
          }
        }
        default -> throw new IllegalArgumentException("no operation " + args[0]);
      }
    } catch (Exception e) {
      say("error: " + e.getMessage());
    }
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
