package dev.jeton.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The first completion wins, and only a completion from outside that wins withdraws, once; in the
 * order its class chooses; and the outcome is delivered once the winner's completion returned.
 */
class WithdrawingFutureTest {
  /** Counts its withdrawals. */
  private static final class Counting extends WithdrawingFuture<String> {
    int withdrawals;
    int timeouts;

    @Override
    protected void withdraw(boolean timedOut) {
      withdrawals++;
      if (timedOut) {
        timeouts++;
      }
    }
  }

  @Test
  void cancelledTwice_withdrawsOnce() {
    // CompletableFuture.cancel answers true for a future cancelled before too: a second cancel
    // (a Scope cancels a task's future and the wait it tracks, which can be the same future)
    // withdrew a channel's send again, reporting its value undelivered twice.
    Counting f = new Counting();
    assertTrue(f.cancel(false));
    assertTrue(f.cancel(true), "still cancelled, as CompletableFuture answers");
    assertTrue(f.isCancelled());
    assertEquals(1, f.withdrawals);
  }

  @Test
  void cancelAfterAnInsideFailureWithACancellation_doesNotWithdraw() {
    Counting f = new Counting();
    assertTrue(f.settleExceptionally(new CancellationException("from inside")));
    assertTrue(f.cancel(false), "cancelled, as CompletableFuture answers");
    assertEquals(0, f.withdrawals);
  }

  @Test
  void completionsFromOutsideAfterTheFirst_doNotWithdraw() {
    Counting f = new Counting();
    assertTrue(f.completeExceptionally(new TimeoutException()));
    assertFalse(f.cancel(false));
    assertFalse(f.complete("late"));
    assertFalse(f.completeExceptionally(new TimeoutException()));
    assertEquals(1, f.withdrawals);
    assertEquals(1, f.timeouts);
  }

  @Test
  void settledFirst_refusesEveryCompletionFromOutside() {
    Counting f = new Counting();
    assertTrue(f.settle("granted"));
    assertFalse(f.cancel(false));
    assertFalse(f.complete("other"));
    assertEquals("granted", f.join());
    assertEquals(0, f.withdrawals);
  }

  /** Withdraws before it completes, as the in-process queues do, and records the order. */
  private static final class WithdrawingFirst extends WithdrawingFuture<String> {
    final Queue<String> events = new ConcurrentLinkedQueue<>();

    @Override
    protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
      events.add(isDone() ? "withdrawn after completing" : "withdrawn");
      complete.run();
    }
  }

  @Test
  void aClassThatWithdrawsFirst_isOutOfItsQueueBeforeItsCallbacksRun() {
    WithdrawingFirst f = new WithdrawingFirst();
    var unused = f.whenComplete((v, e) -> f.events.add("callback"));
    assertTrue(f.cancel(false));
    assertEquals(List.of("withdrawn", "callback"), List.copyOf(f.events));
  }

  @Test
  void byDefault_theFutureCompletesFirst_thenWithdraws() {
    Counting f = new Counting();
    List<Integer> withdrawalsSeenByTheCallback = new ArrayList<>();
    var unused = f.whenComplete((v, e) -> withdrawalsSeenByTheCallback.add(f.withdrawals));
    assertTrue(f.completeExceptionally(new IllegalStateException()));
    assertEquals(List.of(0), withdrawalsSeenByTheCallback);
    assertEquals(1, f.withdrawals);
  }

  @Test
  void givenUp_fromTheClaim_beforeTheFutureIsDone_soTheOwnersSettleFails() {
    WithdrawingFuture<String> f =
        new WithdrawingFuture<>() {
          @Override
          protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
            assertTrue(isGivenUp() && !isDone(), "claimed, not done yet");
            assertFalse(settle("granted meanwhile"), "the owner's settle loses");
            complete.run();
          }
        };
    assertFalse(f.isGivenUp());
    assertTrue(f.cancel(false));
    assertTrue(f.isGivenUp() && f.isCancelled());
  }

  @Test
  void whenDelivered_runsAfterTheCallbacksOfTheCompletionThatWon() {
    Counting f = new Counting();
    Queue<String> events = new ConcurrentLinkedQueue<>();
    var unused = f.thenAccept(v -> events.add("callback"));
    f.whenDelivered(() -> events.add("delivered"));
    assertTrue(events.isEmpty());
    assertTrue(f.settle("granted"));
    assertEquals(List.of("callback", "delivered"), List.copyOf(events));
    f.whenDelivered(() -> events.add("at once"));
    assertEquals(List.of("callback", "delivered", "at once"), List.copyOf(events));
  }

  @Test
  void whenDelivered_afterACompletionFromOutside_runsOnceItHasWithdrawn() {
    Counting f = new Counting();
    List<Integer> withdrawalsWhenDelivered = new ArrayList<>();
    f.whenDelivered(() -> withdrawalsWhenDelivered.add(f.withdrawals));
    f.whenDelivered(() -> withdrawalsWhenDelivered.add(f.withdrawals));
    assertTrue(f.cancel(false));
    assertEquals(List.of(1, 1), withdrawalsWhenDelivered, "each action once, after withdrawing");
  }

  @Test
  void completeAsync_isACompletionFromOutside_andWithdraws() {
    Counting f = new Counting();
    var unused = f.completeAsync(() -> "late", Runnable::run);
    assertEquals("late", f.join());
    assertEquals(1, f.withdrawals);
  }

  /**
   * A second cancel while the first is withdrawing answers whether the future is cancelled: it
   * waits for the first to complete it, rather than answer false for a future about to be.
   */
  @Test
  void aSecondCancel_whileTheFirstWithdraws_answersTrue() throws Exception {
    CountDownLatch withdrawing = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    WithdrawingFuture<String> f =
        new WithdrawingFuture<>() {
          @Override
          protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
            withdrawing.countDown();
            await(finish);
            complete.run();
          }
        };
    CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> f.cancel(false));
    await(withdrawing);
    CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> f.cancel(false));
    finish.countDown();
    assertTrue(first.get(120, TimeUnit.SECONDS));
    assertTrue(second.get(120, TimeUnit.SECONDS));
  }

  @Test
  void aWithdrawalThatThrows_stillCompletesTheFuture_soNothingWaitsForItForever() {
    WithdrawingFuture<String> f =
        new WithdrawingFuture<>() {
          @Override
          protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
            throw new IllegalStateException("a broken withdrawal");
          }
        };
    List<String> delivered = new ArrayList<>();
    f.whenDelivered(() -> delivered.add("delivered"));
    assertThrows(IllegalStateException.class, () -> f.cancel(false));
    assertTrue(f.isCancelled());
    assertTrue(f.cancel(false), "a second cancel answers at once");
    assertEquals(List.of("delivered"), delivered);
  }

  private static void await(CountDownLatch latch) {
    try {
      assertTrue(latch.await(120, TimeUnit.SECONDS), "hang guard");
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }
}
