package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.jeton.Permit;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The machine-wide semaphore attacked as a hostile local user, a stopped process or a damaged file
 * would: each test is one attack, and fails on the code before it was fixed.
 */
@Timeout(120) // a hang guard: every wait below is for an event
class HostSemaphoreAttackTest {
  @TempDir Path directory;

  private HostSemaphore open(String name, int limit) throws IOException {
    return HostSemaphore.builder(name).directory(directory).limit(limit).open();
  }

  private static String refusal(Path dir) {
    return assertThrows(
            IllegalArgumentException.class,
            () -> HostSemaphore.builder("a").directory(dir).limit(1).open())
        .getMessage();
  }

  // ---------------------------------------------------------------- the directory

  @Test
  void directoryOfAnotherUser_isRefusedAndNothingIsWrittenInIt() throws Exception {
    // The attack: another user makes the victim's default directory first, to read records,
    // fake holders, or plant links.
    assumeTrue(
        HostDirectory.MY_UID == 0,
        "only root can give a directory to another user: run the tests as root (CI does)");
    Path squatted = Files.createDirectory(directory.resolve("squatted"));
    Files.setAttribute(squatted, "unix:mode", 0700, LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(squatted, "unix:uid", 54321, LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(squatted, "unix:gid", 54321, LinkOption.NOFOLLOW_LINKS);
    String message = refusal(squatted);
    assertTrue(message.contains("belongs to user 54321"), message);
    try (var entries = Files.list(squatted)) {
      assertEquals(0, entries.count(), "nothing was made in it");
    }
  }

  @Test
  void directoryOthersMayEnter_isRefusedWithTheFix() throws Exception {
    for (String mode : List.of("rwxr-xr-x", "rwx---rwx", "rwx-----x")) {
      Path open = Files.createDirectory(directory.resolve("open-" + mode.replace('-', '_')));
      Files.setPosixFilePermissions(
          open, java.nio.file.attribute.PosixFilePermissions.fromString(mode));
      String message = refusal(open);
      assertTrue(message.contains("lets other users in") && message.contains("chmod 700"), message);
    }
  }

  @Test
  void directoryThatIsASymbolicLink_isRefused() throws Exception {
    Path real = Files.createDirectory(directory.resolve("real"));
    Path link = Files.createSymbolicLink(directory.resolve("link"), real);
    assertTrue(refusal(link).contains("symbolic link"));
  }

  @Test
  void directorySharedWithAGroup_needsTheGroupAndSetGroupId() throws Exception {
    Path halfShared = Files.createDirectory(directory.resolve("half"));
    Files.setAttribute(halfShared, "unix:mode", 0770, LinkOption.NOFOLLOW_LINKS);
    String message = refusal(halfShared);
    assertTrue(message.contains("chmod 2770"), message);

    Path shared = Files.createDirectory(directory.resolve("shared"));
    Files.setAttribute(shared, "unix:mode", 02770, LinkOption.NOFOLLOW_LINKS);
    HostSemaphore.builder("s").directory(shared).limit(1).open().acquire(1).release();
    assertEquals(02770, mode(shared.resolve("s")), "directories in it are shared too");
    assertEquals(0660, mode(shared.resolve("s/limit")), "and so are its files");
    assertEquals(0660, mode(shared.resolve("s/slots/0")));
  }

  @Test
  void filesOfAPrivateDirectory_areMadePrivateWhateverTheUmask() throws Exception {
    HostSemaphore sem = open("p", 2);
    sem.acquire(2).release();
    for (String file : List.of("p", "p/queue", "p/slots")) {
      assertEquals(0700, mode(directory.resolve(file)), file);
    }
    for (String file : List.of("p/limit", "p/seq", "p/meta.lock", "p/slots/0", "p/slots/1")) {
      assertEquals(0600, mode(directory.resolve(file)), file);
    }
  }

  private static int mode(Path path) throws IOException {
    return (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
  }

  // ---------------------------------------------------------------- planted links

  @Test
  void symbolicLinkPlantedAsASlot_isNeverFollowed() throws Exception {
    HostSemaphore sem = open("deploy", 1);
    Path victim = Files.writeString(directory.resolve("victim.txt"), "precious");
    Files.createSymbolicLink(directory.resolve("deploy/slots/0"), victim);
    assertThrows(UncheckedIOException.class, () -> sem.tryAcquire(1));
    assertEquals("precious", Files.readString(victim), "the victim's file is untouched");
  }

  @Test
  void symbolicLinksPlantedForTheLimitOrTheQueue_areNeverFollowed() throws Exception {
    Path victim = Files.writeString(directory.resolve("victim.txt"), "7\n");
    Files.createDirectories(directory.resolve("planted"));
    Files.createSymbolicLink(directory.resolve("planted/limit"), victim);
    assertThrows(
        UncheckedIOException.class,
        () -> HostSemaphore.builder("planted").directory(directory).open().limit());

    Path elsewhere = Files.createDirectory(directory.resolve("elsewhere"));
    Files.createDirectories(directory.resolve("q"));
    Files.createSymbolicLink(directory.resolve("q/queue"), elsewhere);
    assertThrows(IOException.class, () -> open("q", 1));
    try (var entries = Files.list(elsewhere)) {
      assertEquals(0, entries.count(), "nothing was made where the link points");
    }
  }

  @Test
  void hardLinkPlantedAsASlot_isNeverWrittenInto() throws Exception {
    HostSemaphore sem = open("hard", 1);
    Path victim = Files.writeString(directory.resolve("victim.txt"), "precious");
    Files.createLink(directory.resolve("hard/slots/0"), victim);
    assertThrows(UncheckedIOException.class, () -> sem.tryAcquire(1));
    assertEquals("precious", Files.readString(victim));
  }

  // ---------------------------------------------------------------- stopped processes

  @Test
  void processStoppedWhileTakingAPlace_delaysOthersOnlyUntilTheirDeadline() throws Exception {
    HostSemaphore sem = open("frozen", 1);
    try (FrozenLock stopped = FrozenLock.on(directory.resolve("frozen/meta.lock"))) {
      assertTrue(sem.tryAcquire(1).isEmpty(), "tryAcquire returns: the queue is busy");
      assertThrows(TimeoutException.class, () -> sem.acquire(1, Duration.ofMillis(200)));
      assertEquals(List.of(), sem.status().holders(), "status never waits for a writer");
      assertEquals(0, sem.queueLength());

      CompletableFuture<Permit> async = sem.acquireAsync(1);
      assertFalse(async.isDone());
      async.cancel(false);

      CompletableFuture<Throwable> blocked = new CompletableFuture<>();
      Thread waiter =
          new Thread(
              () -> {
                try {
                  sem.acquire(1).release();
                  blocked.complete(new AssertionError("acquired"));
                } catch (Throwable e) {
                  blocked.complete(e);
                }
              });
      waiter.start();
      waiter.interrupt();
      assertTrue(blocked.get(30, TimeUnit.SECONDS) instanceof InterruptedException);

      stopped.close();
      sem.acquire(1).release(); // the lock died with the process
    }
  }

  @Test
  void olderTryAcquireOfAStoppedProcess_makesTryAcquireGiveUpWithoutSpinning() throws Exception {
    HostSemaphore sem = open("try", 1);
    Path place = directory.resolve("try/queue/0000000000000000001.try");
    try (FrozenLock stopped = FrozenLock.on(place)) {
      long cpuBefore = cpuNanos();
      assertTrue(sem.tryAcquire(1).isEmpty());
      long cpu = cpuNanos() - cpuBefore;
      assertTrue(cpu < TimeUnit.MILLISECONDS.toNanos(700), "the wait spun: " + cpu + " ns of CPU");
    }
  }

  /** CPU time this JVM has used (user and system, from /proc): a spinning wait shows here. */
  private static long cpuNanos() throws IOException {
    String stat = Files.readString(Path.of("/proc/self/stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime
    return ticks * 10_000_000L; // USER_HZ is 100 on Linux
  }

  // ---------------------------------------------------------------- damaged files

  @Test
  void emptiedPlaceCounter_neverLetsANewRequestJumpTheQueue() throws Exception {
    HostSemaphore sem = open("seq", 1);
    Permit holder = sem.acquire(1);
    CompletableFuture<Permit> first = sem.acquireAsync(1);
    awaitQueued(sem, 1);
    Files.writeString(directory.resolve("seq/seq"), ""); // a failed write, a full disk, a kill
    CompletableFuture<Permit> second = sem.acquireAsync(1);
    awaitQueued(sem, 2);
    holder.release();
    first.get(30, TimeUnit.SECONDS).release();
    second.get(30, TimeUnit.SECONDS).release();
    assertTrue(first.isDone());

    Files.writeString(directory.resolve("seq/seq"), "garbage");
    sem.acquire(1).release(); // recovered, not trusted
  }

  @Test
  void fullDisk_failsARequestWithAMessageAndDamagesNothing() throws Exception {
    assumeTrue(
        HostDirectory.MY_UID == 0,
        "a full disk is a small tmpfs mounted for the test, which needs root (CI runs as root)");
    Path small = Files.createDirectory(directory.resolve("small"));
    run("mount", "-t", "tmpfs", "-o", "size=64k,mode=700", "tmpfs", small.toString());
    try {
      HostSemaphore sem = HostSemaphore.builder("full").directory(small).limit(1).open();
      sem.acquire(1).release();
      String seq = Files.readString(small.resolve("full/seq"));
      Path filler = small.resolve("filler");
      try (var out = Files.newOutputStream(filler)) {
        byte[] block = new byte[4096];
        for (; ; ) {
          out.write(block);
        }
      } catch (IOException full) {
        // the disk is full
      }
      UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> sem.acquire(1));
      assertTrue(e.getMessage().contains("cannot queue for semaphore 'full'"), e.getMessage());
      assertTrue(
          e.getMessage()
              .endsWith(
                  ": cannot write " + small.resolve("full/seq") + ": No space left on device"),
          "which file, and why: " + e.getMessage());
      assertEquals(seq, Files.readString(small.resolve("full/seq")), "the counter is intact");
      assertEquals(0, sem.queueLength());
      Files.delete(filler);
      sem.acquire(1).release();
    } finally {
      run("umount", small.toString());
    }
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + out);
  }

  @Test
  void damagedLimitFile_isReportedWithTheRepairAndSetLimitRepairsIt() throws Exception {
    HostSemaphore sem = open("lim", 2);
    for (String damage : List.of("0", "-3", "garbage", "")) {
      Files.writeString(directory.resolve("lim/limit"), damage);
      UncheckedIOException e = assertThrows(UncheckedIOException.class, sem::limit);
      assertTrue(
          e.getMessage().contains("damaged") && e.getMessage().contains("jeton limit --name lim"),
          e.getMessage());
    }
    sem.setLimit(3);
    assertEquals(3, sem.limit());
    assertEquals(3, HostSemaphore.builder("lim").directory(directory).open().available());
  }

  // ---------------------------------------------------------------- counts and records

  @Test
  void loweringTheLimit_neverGrantsARequestThatHadGatheredPartWhileRetiredSlotsAreHeld()
      throws Exception {
    HostSemaphore sem = open("shrink", 3);
    Permit a = sem.acquire(1); // slot 0
    Permit b = sem.acquire(1); // slot 1
    Permit c = sem.acquire(1); // slot 2
    b.release();
    CompletableFuture<Permit> big = sem.acquireAsync(2); // gathers slot 1, waits for another
    awaitHeldBy(1);
    sem.setLimit(2);
    a.release();
    awaitHeldBy(0); // the waiter gathered slot 0 too: with slot 2 still held, 3 > 2
    Thread.sleep(50); // polls (every 2 ms at most, at the head) that would have granted it
    assertFalse(big.isDone(), "granted 2 while slot 2 is held under limit 2");
    c.release();
    assertEquals(2, big.get(30, TimeUnit.SECONDS).permits());
  }

  private void awaitHeldBy(int slot) throws Exception {
    Path file = directory.resolve("shrink/slots/" + slot);
    HostDirectory trusted = HostDirectory.trust(directory, false);
    while (!LockFiles.probe(trusted, file).held) {
      Thread.sleep(5);
    }
  }

  @Test
  void status_neverShowsTheRecordOfAHolderWhoseSlotAWaiterGathered() throws Exception {
    HostSemaphore first =
        HostSemaphore.builder("rec").directory(directory).limit(2).command("first").open();
    HostSemaphore second =
        HostSemaphore.builder("rec").directory(directory).command("second").open();
    HostSemaphore third = HostSemaphore.builder("rec").directory(directory).command("third").open();
    Permit one = first.acquire(1); // slot 0
    Permit two = second.acquire(1); // slot 1
    CompletableFuture<Permit> both = third.acquireAsync(2);
    awaitQueued(third, 1);
    one.release(); // the waiter gathers slot 0, keeping "first"'s record unless it clears it
    HostDirectory trusted = HostDirectory.trust(directory, false);
    while (!LockFiles.probe(trusted, directory.resolve("rec/slots/0")).held) {
      Thread.sleep(5);
    }
    // What another process's status reads in the file (this JVM's own locks it knows itself).
    String slot0 = Files.readString(directory.resolve("rec/slots/0"));
    assertFalse(slot0.contains("first"), "the released holder's record is still there: " + slot0);
    List<String> holders = third.status().holders().stream().map(Holder::command).toList();
    assertEquals(List.of("second"), holders);
    two.release();
    both.get(30, TimeUnit.SECONDS).release();
  }

  private static void awaitQueued(HostSemaphore sem, int length) throws InterruptedException {
    while (sem.queueLength() < length) {
      Thread.sleep(5);
    }
  }
}
