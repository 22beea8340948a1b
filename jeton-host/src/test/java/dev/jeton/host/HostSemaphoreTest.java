package dev.jeton.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Permit;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** What only the machine-wide semaphore has: stored limits, names, records, and dying holders. */
class HostSemaphoreTest {
  @TempDir Path directory;

  private HostSemaphore open(String name, int limit) throws IOException {
    return HostSemaphore.builder(name).directory(directory).limit(limit).open();
  }

  @Test
  void releaseOfSeveralPermits_isSeenWholeByTheOtherThreadsOfTheProcess() throws Exception {
    // Regression: a release frees its slots one file at a time, and a thread that looked in
    // between was granted one permit, then refused the second with no holder left.
    HostSemaphore semaphore = open("whole", 2);
    HostSemaphore other = open("whole", 2); // another handle of this JVM: the same slots
    Permit both = semaphore.tryAcquire(2).orElseThrow();
    List<Optional<Permit>> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    Thread looker =
        new Thread(
            () -> {
              seen.add(other.tryAcquire(1));
              seen.add(other.tryAcquire(1));
            });
    HostPermit.betweenSlotsForTest =
        () -> {
          looker.start();
          // Until the looker is done, or held back until the release is whole.
          java.util.concurrent.locks.ReentrantLock settling = semaphore.slots.settling();
          while (looker.isAlive() && !settling.hasQueuedThread(looker)) {
            Thread.onSpinWait();
          }
        };
    try {
      both.release();
    } finally {
      HostPermit.betweenSlotsForTest = null;
    }
    looker.join();
    assertEquals(2, seen.size());
    assertTrue(
        seen.get(0).isPresent() && seen.get(1).isPresent(), "both permits were free: " + seen);
    seen.forEach(p -> p.ifPresent(Permit::release));
  }

  @Test
  void open_storesTheLimitAndLaterOpenersShareIt() throws Exception {
    HostSemaphore first = open("db", 3);
    HostSemaphore second = HostSemaphore.builder("db").directory(directory).open();
    assertEquals(3, second.limit());
    Permit held = first.acquire(2);
    assertEquals(1, second.available(), "the two handles share the permits");
    held.release();
    assertEquals(List.of("db"), HostSemaphore.list(directory));
  }

  @Test
  void open_withAnotherLimitFailsAndChangesNothing() throws Exception {
    open("db", 3);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open("db", 5));
    assertTrue(e.getMessage().contains("limit 3") && e.getMessage().contains("5"), e.getMessage());
    assertEquals(3, open("db", 3).limit());
  }

  @Test
  void open_withoutALimitFailsWhenTheSemaphoreDoesNotExist() throws Exception {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> HostSemaphore.builder("nope").directory(directory).open());
    assertTrue(e.getMessage().contains("nope"), e.getMessage());
    assertDirectoryEmpty();
  }

  @Test
  void badNames_areRefusedWithAMessageAndCreateNothing() throws Exception {
    // One rule with the Redis semaphore (Arguments.checkName): what one backend takes, so does
    // the other.
    for (String bad :
        List.of(
            "",
            "a/b",
            "..",
            "x..y",
            ".",
            ".hidden",
            "a b",
            "a:b",
            "é",
            "tab\there",
            "nl\nx",
            "a\\b")) {
      assertBadInput(() -> HostSemaphore.builder(bad).directory(directory).limit(1).open());
    }
    assertBadInput(() -> HostSemaphore.builder("x".repeat(201)));
    assertDirectoryEmpty();
  }

  @Test
  void badLimitsAndWeights_areRefusedWithAMessageAndChangeNothing() throws Exception {
    assertBadInput(() -> HostSemaphore.builder("a").limit(0));
    assertBadInput(() -> HostSemaphore.builder("a").limit(-2));
    HostSemaphore sem = open("a", 2);
    assertBadInput(() -> sem.acquire(3));
    assertBadInput(() -> sem.acquire(0));
    assertBadInput(() -> sem.setLimit(0));
    assertEquals(2, sem.limit());
    assertEquals(2, sem.available());
    assertEquals(0, sem.queueLength());
  }

  @Test
  void missingDirectory_isMadePrivateWhenASemaphoreIsCreated() throws Exception {
    Path missing = directory.resolve("missing");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> HostSemaphore.builder("a").directory(missing).open());
    assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    assertFalse(Files.exists(missing), "opening an existing semaphore makes nothing");

    HostSemaphore.builder("a").directory(missing).limit(1).open().acquire(1).release();
    assertEquals(
        "rwx------",
        java.nio.file.attribute.PosixFilePermissions.toString(
            Files.getPosixFilePermissions(missing)));

    Path orphan = directory.resolve("no/parent");
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> HostSemaphore.builder("a").directory(orphan).limit(1).open());
    assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
  }

  @Test
  void unwritableDirectory_isRefusedWithAMessage() throws Exception {
    Path readOnly = Files.createDirectory(directory.resolve("read-only"));
    boolean mounted = makeUnwritable(readOnly);
    try {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> HostSemaphore.builder("a").directory(readOnly).limit(1).open());
      assertTrue(e.getMessage().contains("not writable"), e.getMessage());
    } finally {
      if (mounted) {
        new ProcessBuilder("umount", readOnly.toString()).inheritIO().start().waitFor();
      }
      readOnly.toFile().setWritable(true);
    }
  }

  /**
   * Makes {@code dir} unwritable for this process: by its mode, or, for root (whom modes do not
   * stop), by mounting a read-only tmpfs on it. Returns whether it mounted.
   */
  private static boolean makeUnwritable(Path dir) throws Exception {
    assertTrue(dir.toFile().setWritable(false, false));
    if (!Files.isWritable(dir)) {
      return false;
    }
    Process mount =
        new ProcessBuilder("mount", "-t", "tmpfs", "-o", "ro,mode=700", "tmpfs", dir.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(
        0,
        mount.waitFor(),
        "running as root, this test needs to mount a read-only tmpfs (or run it as another user): "
            + out);
    assertFalse(Files.isWritable(dir), "the read-only mount is not writable");
    return true;
  }

  @Test
  void setLimit_isStoredForEveryHandle() throws Exception {
    HostSemaphore first = open("jobs", 1);
    HostSemaphore second = HostSemaphore.builder("jobs").directory(directory).open();
    first.setLimit(4);
    assertEquals(4, second.limit());
    assertEquals(4, HostSemaphore.builder("jobs").directory(directory).limit(4).open().limit());
  }

  @Test
  void status_showsWhoHoldsAndWhoWaits() throws Exception {
    HostSemaphore sem =
        HostSemaphore.builder("s").directory(directory).limit(3).command("deploy.sh").open();
    Permit held = sem.acquire(2);
    CompletableFuture<Permit> waiting = sem.acquireAsync(3);
    HostSemaphore.Status status = sem.status();
    assertEquals(3, status.limit());
    assertEquals(1, status.holders().size());
    Holder holder = status.holders().get(0);
    assertEquals(ProcessHandle.current().pid(), holder.pid());
    assertEquals(2, holder.permits());
    assertEquals("deploy.sh", holder.command());
    assertEquals(2, status.held());
    assertEquals(1, status.waiters().size());
    assertEquals(3, status.waiters().get(0).permits());
    waiting.cancel(false);
    held.release();
    assertEquals(List.of(), sem.status().holders());
    assertEquals(List.of(), sem.status().waiters());
  }

  @Test
  void status_neverShowsTheStaleRecordOfAHolderThatIsGone() throws Exception {
    HostSemaphore sem = open("s", 2);
    String record = Holder.ofThisProcess(1).withCommand("long gone").serialize();
    Files.writeString(directory.resolve("s/slots/0"), record, StandardCharsets.UTF_8);
    Files.writeString(directory.resolve("s/queue/0000000000000000099"), record);
    assertEquals(List.of(), sem.status().holders(), "an unlocked slot is free, whatever it says");
    assertEquals(List.of(), sem.status().waiters());
    assertEquals(2, sem.available());
    sem.acquire(2).release();
  }

  @Test
  void threadsOfOneJvm_shareOneSemaphoreThroughSeveralHandles() throws Exception {
    HostSemaphore a = open("shared", 2);
    HostSemaphore b = HostSemaphore.builder("shared").directory(directory).open();
    Permit fromA = a.acquire(1);
    Permit fromB = b.acquire(1);
    assertTrue(a.tryAcquire(1).isEmpty());
    CompletableFuture<Permit> waiting = b.acquireAsync(1);
    fromA.release();
    waiting.get(10, TimeUnit.SECONDS).release();
    fromB.release();
    assertEquals(2, a.available());
  }

  @Test
  void takingAPlace_whileSomeoneProbesItsFile_succeeds() throws Exception {
    // Regression: a probe (status, a waiter scanning the queue) holds a shared lock on a place
    // file for a moment; a place being created at that instant failed to lock and the request
    // failed with "could not lock the new place".
    HostSemaphore sem = open("probed", 1);
    Path queue = directory.resolve("probed/queue");
    HostDirectory trusted = HostDirectory.trust(directory, false);
    java.util.concurrent.atomic.AtomicBoolean stop =
        new java.util.concurrent.atomic.AtomicBoolean();
    Thread prober =
        new Thread(
            () -> {
              long n = 1;
              while (!stop.get()) {
                try {
                  for (long next = n; next < n + 3; next++) { // the next places to be created
                    LockFiles.probe(trusted, queue.resolve(String.format("%019d", next)));
                    LockFiles.probe(trusted, queue.resolve(String.format("%019d", next) + ".try"));
                  }
                  String seq = Files.readString(directory.resolve("probed/seq")).trim();
                  n = Long.parseLong(seq) + 1;
                } catch (IOException | NumberFormatException e) {
                  // the seq file may not exist yet or be mid-write; probe again
                }
              }
            });
    prober.start();
    try {
      for (int i = 0; i < 300; i++) {
        sem.tryAcquire(1).orElseThrow().release();
      }
    } finally {
      stop.set(true);
      prober.join();
    }
  }

  @Test
  void interrupts_atAnyMoment_neverLeakAPlaceOrAPermit() throws Exception {
    // Regression: an interrupt arriving during file I/O closes the channel. It used to surface
    // as UncheckedIOException, and a place half-taken at that moment stayed counted as queued.
    HostSemaphore sem = open("interrupted", 1);
    Permit held = sem.acquire(1);
    java.util.SplittableRandom random = new java.util.SplittableRandom(7);
    for (int round = 0; round < 150; round++) {
      java.util.concurrent.CompletableFuture<Throwable> thrown =
          new java.util.concurrent.CompletableFuture<>();
      Thread waiter =
          new Thread(
              () -> {
                try {
                  sem.acquire(1).release();
                  thrown.complete(new AssertionError("acquired a held permit"));
                } catch (Throwable e) {
                  thrown.complete(e);
                }
              });
      waiter.start();
      java.util.concurrent.locks.LockSupport.parkNanos(random.nextInt(3_000_000));
      waiter.interrupt();
      Throwable e = thrown.get(30, TimeUnit.SECONDS);
      assertTrue(e instanceof InterruptedException, "round " + round + ": " + e);
      waiter.join();
      assertEquals(0, sem.queueLength(), "round " + round + ": the place was left behind");
    }
    held.release();
    assertEquals(1, sem.available());
  }

  @Test
  void killedHolder_freesItsPermitsAtOnce() throws Exception {
    HostSemaphore sem = open("crash", 1);
    Process child =
        dev.jeton.contract.Processes.java(
            HoldForever.class, directory.toString(), "crash", "1", "1");
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("held", out.readLine(), "the child took the permit");
      assertTrue(sem.tryAcquire(1).isEmpty());
      assertEquals(child.pid(), sem.status().holders().get(0).pid());
      CompletableFuture<Permit> waiting = sem.acquireAsync(1, Duration.ofSeconds(30));
      child.destroyForcibly(); // SIGKILL: no shutdown hook, no cleanup
      assertTrue(child.waitFor(30, TimeUnit.SECONDS));
      waiting.get(30, TimeUnit.SECONDS).release();
      assertEquals(List.of(), sem.status().holders());
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void holdWhileSessionRuns_keepsThePermitHeldAfterItsHolderIsKilled() throws Exception {
    // What jeton run does for its command: if jeton is killed (its locks with it), the
    // command's session still holds the permit, for every process, until its last member exits.
    HostSemaphore sem = open("session", 1);
    Path childPid = directory.resolve("child-pid");
    Process holder =
        dev.jeton.contract.Processes.java(
            HoldForSession.class, directory.toString(), "session", childPid.toString());
    long leader = 0;
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      assertTrue(line != null && line.startsWith("held "), String.valueOf(line));
      leader = Long.parseLong(line.substring("held ".length()));
      holder.destroyForcibly(); // SIGKILL: its locks are gone
      assertTrue(holder.waitFor(30, TimeUnit.SECONDS));
      assertTrue(sem.tryAcquire(1).isEmpty(), "the session holds the permit");
      assertEquals(1, sem.status().held());
      assertEquals(leader, sem.status().holders().get(0).session());
      CompletableFuture<Permit> next = sem.acquireAsync(1);
      long child = Long.parseLong(Files.readString(childPid).trim());
      ProcessHandle.of(leader).ifPresent(ProcessHandle::destroy); // a member still runs
      while (dev.jeton.contract.Processes.runs(leader)) {
        Thread.sleep(5);
      }
      assertFalse(next.isDone(), "a member of the session still runs");
      assertTrue(sem.tryAcquire(1).isEmpty());
      ProcessHandle.of(child).ifPresent(ProcessHandle::destroy);
      next.get(30, TimeUnit.SECONDS).release();
      assertEquals("", Files.readString(directory.resolve("session/slots/0")), "release empties");
    } finally {
      holder.destroyForcibly();
      ProcessHandle.of(leader).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  private static void assertBadInput(Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertFalse(String.valueOf(e.getMessage()).isBlank());
  }

  private void assertDirectoryEmpty() throws IOException {
    try (Stream<Path> entries = Files.list(directory)) {
      assertEquals(List.of(), entries.toList());
    }
  }
}
