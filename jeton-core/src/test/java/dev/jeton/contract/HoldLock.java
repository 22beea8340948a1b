package dev.jeton.contract;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A child process for tests: takes the exclusive lock on a file (as a process does while it takes a
 * ticket), says "locked" on stdout, and keeps it until it is killed. Argument: the file.
 */
public final class HoldLock {
  private HoldLock() {}

  public static void main(String[] args) throws Exception {
    FileChannel channel =
        FileChannel.open(
            Path.of(args[0]),
            StandardOpenOption.CREATE,
            StandardOpenOption.READ,
            StandardOpenOption.WRITE);
    channel.lock();
    System.out.println("locked");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
