package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PrioritySchedulerTest {
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPool() throws InterruptedException {
    pool.shutdownNow();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
  }

  /** Async tasks that record the order they start in and finish when the test says. */
  static final class Recorder {
    final List<String> started = new ArrayList<>();
    final List<CompletableFuture<String>> stages = new ArrayList<>();

    synchronized CompletableFuture<String> start(String name) {
      started.add(name);
      CompletableFuture<String> stage = new CompletableFuture<>();
      stages.add(stage);
      return stage;
    }

    /** Starts, and finishes at once. */
    synchronized CompletableFuture<String> run(String name) {
      started.add(name);
      return CompletableFuture.completedFuture(name);
    }

    synchronized List<String> started() {
      return List.copyOf(started);
    }

    synchronized CompletableFuture<String> stage(int i) {
      return stages.get(i);
    }
  }

  private final Recorder rec = new Recorder();

  private PriorityScheduler limitOne() {
    return PriorityScheduler.builder().limit(1).executor(pool).build();
  }

  /** Occupies the scheduler's one slot until the returned stage is completed. */
  private CompletableFuture<String> hold(PriorityScheduler s) {
    var unused = s.submitAsync(Priority.CRITICAL, () -> rec.start("hold"));
    return rec.stage(0);
  }

  @Test
  void submit_runsHigherPrioritiesFirst() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    s.submitAsync(Priority.LOW, () -> rec.run("low"));
    s.submitAsync(Priority.NORMAL, () -> rec.run("normal"));
    s.submitAsync(7, () -> rec.run("seven"));
    s.submitAsync(Priority.CRITICAL, () -> rec.run("critical"));
    s.submitAsync(Priority.HIGH, () -> rec.run("high"));
    hold.complete("done");
    assertEquals(List.of("hold", "seven", "critical", "high", "normal", "low"), rec.started());
  }

  @Test
  void submit_keepsFifoWithinAPriority() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    for (int i = 0; i < 5; i++) {
      String name = "t" + i;
      s.submitAsync(Priority.NORMAL, () -> rec.run(name));
    }
    hold.complete("done");
    assertEquals(List.of("hold", "t0", "t1", "t2", "t3", "t4"), rec.started());
  }

  @Test
  void grant_startsTheBestTaskQueuedAtThatMoment_evenOneThatCameLate() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    s.submitAsync(Priority.LOW, () -> rec.run("early low")); // the pump waits with this queued
    s.submitAsync(Priority.HIGH, () -> rec.run("late high"));
    hold.complete("done");
    assertEquals(List.of("hold", "late high", "early low"), rec.started());
  }

  @Test
  void aging_letsALowTaskThatWaitedLongEnoughPassAHighOne() {
    AtomicLong now = new AtomicLong();
    long second = TimeUnit.SECONDS.toNanos(1);
    PriorityScheduler s =
        PriorityScheduler.builder().limit(1).aging(Duration.ofSeconds(1)).ticker(now::get).build();
    CompletableFuture<String> hold = hold(s);
    s.submitAsync(Priority.LOW, () -> rec.run("low at 0s"));
    now.set(second); // the low task now ranks like NORMAL; HIGH still beats it
    s.submitAsync(Priority.HIGH, () -> rec.run("high at 1s"));
    now.set(3 * second); // two levels up from 0s: LOW at 0s ranks like HIGH at 2s
    s.submitAsync(Priority.HIGH, () -> rec.run("high at 3s"));
    s.submitAsync(Priority.NORMAL, () -> rec.run("normal at 3s"));
    hold.complete("done");
    assertEquals(
        List.of("hold", "high at 1s", "low at 0s", "high at 3s", "normal at 3s"), rec.started());
  }

  @Test
  void aging_withExtremePrioritiesAndTimes_doesNotOverflow() {
    AtomicLong now = new AtomicLong(Long.MAX_VALUE - 5);
    PriorityScheduler s =
        PriorityScheduler.builder()
            .limit(1)
            .aging(Duration.ofDays(365 * 1000L))
            .ticker(now::get)
            .build();
    CompletableFuture<String> hold = hold(s);
    s.submitAsync(Integer.MIN_VALUE, () -> rec.run("min"));
    s.submitAsync(Integer.MAX_VALUE, () -> rec.run("max"));
    s.submitAsync(0, () -> rec.run("zero"));
    hold.complete("done");
    assertEquals(List.of("hold", "max", "zero", "min"), rec.started());
  }

  /**
   * Regression (issue 30): ranks were {@code now - priority * aging} clamped to a long, so with an
   * aging of an hour or more (or any aging, on a clock near its ends) distinct priorities clamped
   * to one rank and ran first come first served: {@code Integer.MAX_VALUE - 1} before {@code
   * Integer.MAX_VALUE}. The same extremes as admission's order (QueuedModeTest).
   */
  @Test
  void aging_extremePrioritiesKeepTheirOrderUnderLongAgingAndAnyClock() {
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
    for (Duration aging : List.of(Duration.ofSeconds(1), Duration.ofHours(1), forever)) {
      for (long clock : new long[] {0, Long.MIN_VALUE + 1_000, Long.MAX_VALUE - 1_000}) {
        higherRunsFirst(aging, clock, Integer.MAX_VALUE - 1, Integer.MAX_VALUE);
        higherRunsFirst(aging, clock, Integer.MIN_VALUE, Integer.MIN_VALUE + 1);
        higherRunsFirst(aging, clock, Integer.MIN_VALUE, Integer.MAX_VALUE);
        higherRunsFirst(aging, clock, 5, 6);
      }
    }
  }

  /** Submits {@code lower}, then {@code higher} at the same instant: {@code higher} runs first. */
  private static void higherRunsFirst(Duration aging, long clock, int lower, int higher) {
    Recorder order = new Recorder();
    PriorityScheduler s =
        PriorityScheduler.builder().limit(1).aging(aging).ticker(() -> clock).build();
    var unused = s.submitAsync(Priority.NORMAL, () -> order.start("hold"));
    s.submitAsync(lower, () -> order.run("lower"));
    s.submitAsync(higher, () -> order.run("higher"));
    order.stage(0).complete("done");
    assertEquals(
        List.of("hold", "higher", "lower"),
        order.started(),
        () -> "priorities " + lower + " and " + higher + ", aging " + aging + ", clock " + clock);
  }

  @Test
  void cancel_beforeStart_neverRunsCompletesCancelledAndLeavesTheQueue() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    CompletableFuture<String> f = s.submitAsync(Priority.HIGH, () -> rec.run("cancelled"));
    assertEquals(1, s.queued(Priority.HIGH));
    assertEquals(1, s.queued(Priority.HIGH.value()));
    assertEquals(0, s.queued(Priority.NORMAL));
    assertTrue(f.cancel(false));
    assertTrue(f.isCancelled());
    assertEquals(0, s.queued());
    assertEquals(0, s.queued(Priority.HIGH));
    hold.complete("done");
    assertEquals(List.of("hold"), rec.started());
  }

  /**
   * completeAsync is a completion from outside like complete (issue 30: the task is a
   * WithdrawingFuture): the task leaves the queue before its callbacks run. Before, the JDK's
   * completeAsync bypassed complete(), and the withdrawal came from a callback registered at
   * submission, which ran after the caller's: its callback counted the task still queued.
   */
  @Test
  void completeAsync_beforeStart_withdrawsTheTaskBeforeItsCallbacksRun() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    CompletableFuture<String> f = s.submitAsync(Priority.HIGH, () -> rec.run("completed"));
    CompletableFuture<Integer> queuedInCallback = new CompletableFuture<>();
    var unused = f.whenComplete((value, failure) -> queuedInCallback.complete(s.queued()));
    var alsoUnused = f.completeAsync(() -> "from outside", Runnable::run);
    assertEquals("from outside", f.join());
    assertEquals(0, queuedInCallback.join(), "queued, read in the future's callback");
    hold.complete("done");
    assertEquals(List.of("hold"), rec.started());
  }

  @Test
  void completeExceptionally_beforeStart_withdrawsTheTask() throws Exception {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    CompletableFuture<String> failed = s.submitAsync(Priority.HIGH, () -> rec.run("failed"));
    CompletableFuture<String> completed = s.submitAsync(Priority.HIGH, () -> rec.run("done"));
    failed.completeExceptionally(new IllegalStateException("no"));
    completed.complete("by hand");
    assertEquals(0, s.queued());
    hold.complete("done");
    assertEquals(List.of("hold"), rec.started());
    assertEquals("by hand", completed.get());
  }

  @Test
  void cancelTrue_interruptsARunningBlockingTask_andItsSlotIsHeldUntilItLeaves() throws Exception {
    PriorityScheduler s = limitOne();
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch interrupted = new CountDownLatch(1);
    CountDownLatch leave = new CountDownLatch(1);
    CompletableFuture<String> f =
        s.submit(
            Priority.NORMAL,
            () -> {
              running.countDown();
              try {
                Thread.sleep(60_000);
              } catch (InterruptedException e) {
                interrupted.countDown();
              }
              leave.await();
              return "late";
            });
    CompletableFuture<String> next = s.submitAsync(Priority.NORMAL, () -> rec.run("next"));
    assertTrue(running.await(10, TimeUnit.SECONDS));
    assertTrue(f.cancel(true));
    assertTrue(interrupted.await(10, TimeUnit.SECONDS));
    assertEquals(1, s.running());
    assertEquals(1, s.running(Priority.NORMAL));
    assertEquals(1, s.queued());
    assertEquals(List.of(), rec.started());
    leave.countDown();
    assertEquals("next", next.get(10, TimeUnit.SECONDS));
    assertTrue(f.isCancelled());
  }

  @Test
  void cancelFalse_doesNotInterruptARunningBlockingTask() throws Exception {
    PriorityScheduler s = limitOne();
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch leave = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    CompletableFuture<String> f =
        s.submit(
            Priority.NORMAL,
            () -> {
              running.countDown();
              try {
                leave.await();
              } catch (InterruptedException e) {
                interrupted.set(true);
              }
              return "finished";
            });
    assertTrue(running.await(10, TimeUnit.SECONDS));
    assertTrue(f.cancel(false));
    assertEquals(1, s.running());
    leave.countDown();
    s.close();
    assertFalse(interrupted.get());
    assertEquals(0, s.running());
  }

  @Test
  void submitAsync_holdsTheSlotUntilTheStageCompletes_evenIfTheFutureIsCancelled() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> first = s.submitAsync(Priority.NORMAL, () -> rec.start("first"));
    s.submitAsync(Priority.NORMAL, () -> rec.run("second"));
    assertTrue(first.cancel(true));
    assertEquals(1, s.running());
    assertEquals(List.of("first"), rec.started());
    assertFalse(rec.stage(0).isCancelled(), "an async task's stage is never cancelled");
    rec.stage(0).complete("first");
    assertEquals(List.of("first", "second"), rec.started());
    assertEquals(0, s.running());
  }

  @Test
  void submitAsync_aNullStageOrAThrowingSupplier_failsTheFutureAndFreesTheSlot() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> nullStage = s.submitAsync(Priority.NORMAL, () -> null);
    CompletableFuture<String> throwing =
        s.submitAsync(
            Priority.NORMAL,
            () -> {
              throw new IllegalStateException("boom");
            });
    ExecutionException e = assertThrows(ExecutionException.class, nullStage::get);
    assertInstanceOf(NullPointerException.class, e.getCause());
    e = assertThrows(ExecutionException.class, throwing::get);
    assertEquals("boom", e.getCause().getMessage());
    assertEquals(0, s.running());
    s.submitAsync(Priority.NORMAL, () -> rec.run("after"));
    assertEquals(List.of("after"), rec.started());
  }

  @Test
  void submit_aCheckedException_failsTheFutureWithIt() {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> f =
        s.submit(
            1,
            () -> {
              throw new IOException("disk");
            });
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
    assertInstanceOf(IOException.class, e.getCause());
  }

  @Test
  void queuedAndRunning_countPerPriority_andForgetPrioritiesAtZero() {
    PriorityScheduler s = PriorityScheduler.builder().limit(2).build();
    s.submitAsync(Priority.LOW, () -> rec.start("a"));
    s.submitAsync(5, () -> rec.start("b"));
    s.submitAsync(5, () -> rec.start("c"));
    s.submitAsync(Priority.LOW, () -> rec.start("d"));
    s.submitAsync(Priority.HIGH, () -> rec.start("e"));
    assertEquals(2, s.running());
    assertEquals(1, s.running(Priority.LOW.value()));
    assertEquals(1, s.running(5));
    assertEquals(3, s.queued());
    assertEquals(1, s.queued(5));
    assertEquals(1, s.queued(Priority.LOW.value()));
    assertEquals(1, s.queued(Priority.HIGH.value()));
    assertEquals(0, s.queued(42));
    rec.stage(0).complete("a"); // frees a slot: c (5) starts before e (HIGH) and d (LOW)
    assertEquals(List.of("a", "b", "c"), rec.started());
    assertEquals(2, s.running(5));
    assertEquals(0, s.running(Priority.LOW.value()));
    assertEquals(0, s.queued(5));
  }

  @Test
  void shutdown_refusesNewTasksAndFinishesQueuedOnes() throws Exception {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    CompletableFuture<String> queued = s.submitAsync(Priority.NORMAL, () -> rec.run("queued"));
    s.shutdown();
    assertTrue(s.isShutdown());
    assertFalse(s.isTerminated());
    RejectedExecutionException e =
        assertThrows(
            RejectedExecutionException.class, () -> s.submitAsync(1, () -> rec.run("late")));
    assertTrue(e.getMessage().contains("shut down"), e.getMessage());
    assertThrows(RejectedExecutionException.class, () -> s.submit(1, () -> "late"));
    assertThrows(RejectedExecutionException.class, () -> s.execute(() -> {}));
    hold.complete("done");
    assertEquals("queued", queued.get(10, TimeUnit.SECONDS));
    s.terminated().get(10, TimeUnit.SECONDS);
    assertTrue(s.isTerminated());
  }

  @Test
  void shutdownNow_cancelsQueuedTasksReturnsHowManyAndLetsRunningOnesFinish() throws Exception {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    CompletableFuture<String> a = s.submitAsync(Priority.NORMAL, () -> rec.run("a"));
    CompletableFuture<String> b = s.submitAsync(Priority.LOW, () -> rec.run("b"));
    assertEquals(2, s.shutdownNow());
    assertTrue(a.isCancelled());
    assertTrue(b.isCancelled());
    assertEquals(0, s.queued());
    assertEquals(1, s.running());
    CompletableFuture<Void> terminated = s.terminated();
    assertFalse(terminated.isDone());
    hold.complete("done");
    terminated.get(10, TimeUnit.SECONDS);
    assertEquals(List.of("hold"), rec.started());
    assertEquals(0, s.shutdownNow());
  }

  @Test
  void terminated_completesAtOnceWhenShutDownIdle_andCancellingTheCopyChangesNothing() {
    PriorityScheduler s = limitOne();
    CompletableFuture<Void> t = s.terminated();
    assertTrue(t.cancel(false));
    assertFalse(s.isTerminated());
    s.shutdown();
    assertTrue(s.terminated().isDone());
    assertTrue(s.isTerminated());
  }

  @Test
  void close_waitsForQueuedAndRunningTasks() throws Exception {
    PriorityScheduler s = limitOne();
    List<String> done = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String name = "t" + i;
      s.submit(
          Priority.NORMAL,
          () -> {
            Thread.sleep(20);
            synchronized (done) {
              done.add(name);
            }
            return name;
          });
    }
    s.close();
    assertTrue(s.isTerminated());
    synchronized (done) {
      assertEquals(List.of("t0", "t1", "t2"), done);
    }
  }

  @Test
  void close_whenInterrupted_cancelsQueuedTasksWaitsForRunningOnesAndKeepsTheInterrupt()
      throws Exception {
    PriorityScheduler s = limitOne();
    CompletableFuture<String> hold = hold(s);
    CompletableFuture<String> queued = s.submitAsync(Priority.NORMAL, () -> rec.run("queued"));
    Thread.currentThread().interrupt();
    CompletableFuture<?> finisher =
        CompletableFuture.runAsync(
            () -> {
              while (!queued.isDone()) {
                Thread.onSpinWait();
              }
              hold.complete("done");
            },
            pool);
    s.close();
    assertTrue(Thread.interrupted(), "the interrupt is re-asserted");
    assertTrue(queued.isCancelled());
    assertTrue(hold.isDone(), "close waited for the running task");
    assertTrue(s.isTerminated());
    finisher.get(10, TimeUnit.SECONDS);
  }

  @Test
  void builder_badInput_failsAtOnceWithMessages() {
    PriorityScheduler.Builder b = PriorityScheduler.builder();
    var e = assertThrows(IllegalArgumentException.class, () -> b.limit(0));
    assertEquals("limit must be at least 1, was 0", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> b.aging(Duration.ZERO));
    assertTrue(e.getMessage().contains("positive"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> b.aging(Duration.ofSeconds(-1)));
    var npe = assertThrows(NullPointerException.class, () -> b.executor(null));
    assertEquals("executor", npe.getMessage());
    npe = assertThrows(NullPointerException.class, () -> b.semaphore(null));
    assertEquals("semaphore", npe.getMessage());
    var ise = assertThrows(IllegalStateException.class, b::build);
    assertTrue(ise.getMessage().contains("neither"), ise.getMessage());
    b.limit(2).semaphore(Semaphore.create(3));
    ise = assertThrows(IllegalStateException.class, b::build);
    assertTrue(ise.getMessage().contains("both"), ise.getMessage());
  }

  @Test
  void submitBlocking_withoutAnExecutor_saysToSetOne() {
    PriorityScheduler s = PriorityScheduler.builder().limit(1).build();
    var e = assertThrows(IllegalStateException.class, () -> s.submit(1, () -> "x"));
    assertTrue(e.getMessage().contains("executor"), e.getMessage());
    assertThrows(IllegalStateException.class, () -> s.execute(() -> {}));
    assertThrows(NullPointerException.class, () -> s.submitAsync(1, null));
    assertThrows(NullPointerException.class, () -> s.submitAsync((Priority) null, () -> null));
    assertEquals(0, s.queued());
  }

  /**
   * Regression (issue 30): a blocking task submitted without an executor to an idle scheduler took
   * the free permit on the idle fast path, then failed to be made, and the permit was never given
   * back: the next task waited for ever.
   */
  @Test
  void submitBlocking_withoutAnExecutor_leavesTheSlotFree() {
    PriorityScheduler s = PriorityScheduler.builder().limit(1).build();
    assertThrows(IllegalStateException.class, () -> s.submit(1, () -> "x"));
    CompletableFuture<String> next = s.submitAsync(1, () -> CompletableFuture.completedFuture("y"));
    assertTrue(next.isDone(), "the next task starts at once: " + s);
    assertEquals("y", next.join());
    assertEquals(1, s.limit());
    assertEquals(0, s.running());
  }

  @Test
  void setLimit_growingStartsMoreTasks_andBadValuesAreRefused() {
    PriorityScheduler s = PriorityScheduler.builder().limit(1).build();
    for (int i = 0; i < 4; i++) {
      String name = "t" + i;
      s.submitAsync(Priority.NORMAL, () -> rec.start(name));
    }
    assertEquals(1, s.running());
    s.setLimit(3);
    assertEquals(3, s.limit());
    assertEquals(3, s.running());
    assertEquals(List.of("t0", "t1", "t2"), rec.started());
    var e = assertThrows(IllegalArgumentException.class, () -> s.setLimit(0));
    assertEquals("limit must be at least 1, was 0", e.getMessage());
  }

  @Test
  void semaphore_givenAndShared_boundsTasksWithItsOtherUsers_andIsNotClosed() throws Exception {
    Semaphore shared = Semaphore.create(2);
    Permit other = shared.acquire(1); // another user of the same semaphore
    PriorityScheduler s = PriorityScheduler.builder().semaphore(shared).build();
    s.submitAsync(Priority.NORMAL, () -> rec.start("a"));
    CompletableFuture<String> b = s.submitAsync(Priority.NORMAL, () -> rec.run("b"));
    assertEquals(List.of("a"), rec.started());
    assertEquals(1, shared.queueLength(), "the scheduler's one pending acquire");
    b.cancel(false);
    assertEquals(0, shared.queueLength(), "withdrawn once nothing is queued");
    s.submitAsync(Priority.NORMAL, () -> rec.run("c"));
    other.release();
    assertEquals(List.of("a", "c"), rec.started());
    rec.stage(0).complete("a");
    s.close();
    assertEquals(2, shared.available());
    assertTrue(shared.tryAcquire(1).isPresent(), "not closed by the scheduler");
    assertTrue(s.toString().contains("semaphore="), s.toString());
  }

  /**
   * Under a semaphore that is not the in-process one (here a key of a KeyedSemaphore; a
   * machine-wide or Redis one in production) every task starts through the pump's acquireAsync,
   * never a direct tryAcquire: the order and the limit still hold.
   */
  @Test
  void semaphore_ofAnotherKind_startsEveryTaskThroughThePumpInPriorityOrder() {
    KeyedSemaphore<String> keyed = KeyedSemaphore.create(1);
    PriorityScheduler s = PriorityScheduler.builder().semaphore(keyed.forKey("jobs")).build();
    var unused = s.submitAsync(Priority.CRITICAL, () -> rec.start("hold"));
    s.submitAsync(Priority.LOW, () -> rec.run("low"));
    s.submitAsync(Priority.HIGH, () -> rec.run("high"));
    assertEquals(List.of("hold"), rec.started());
    assertEquals(1, keyed.forKey("jobs").queueLength(), "the scheduler's one pending acquire");
    rec.stage(0).complete("done");
    assertEquals(List.of("hold", "high", "low"), rec.started());
    s.close();
    assertEquals(0, keyed.keyCount(), "every permit back, the key's entry gone");
  }

  @Test
  void givenSemaphoreClosed_failsQueuedTasks() {
    Semaphore shared = Semaphore.create(1);
    PriorityScheduler s = PriorityScheduler.builder().semaphore(shared).build();
    s.submitAsync(Priority.NORMAL, () -> rec.start("a"));
    CompletableFuture<String> b = s.submitAsync(Priority.NORMAL, () -> rec.run("b"));
    shared.close();
    ExecutionException e = assertThrows(ExecutionException.class, b::get);
    assertInstanceOf(SemaphoreClosedException.class, e.getCause());
    assertEquals(0, s.queued());
  }

  @Test
  void execute_runsTheCommandAsANormalBlockingTask() throws Exception {
    PriorityScheduler s = limitOne();
    CountDownLatch ran = new CountDownLatch(1);
    s.execute(ran::countDown);
    assertTrue(ran.await(10, TimeUnit.SECONDS));
  }

  @Test
  void toString_showsLimitCountsAndState() {
    PriorityScheduler s = PriorityScheduler.builder().limit(3).aging(Duration.ofSeconds(2)).build();
    s.submitAsync(1, () -> rec.start("a"));
    s.shutdown();
    assertEquals(
        "PriorityScheduler[limit=3, queued=0, running=1, aging=PT2S, shut down]", s.toString());
  }

  @Test
  void cancelledFuture_reportsCancellationException() {
    PriorityScheduler s = limitOne();
    hold(s);
    CompletableFuture<String> f = s.submitAsync(1, () -> rec.run("x"));
    f.cancel(true);
    assertThrows(CancellationException.class, f::join);
  }
}
