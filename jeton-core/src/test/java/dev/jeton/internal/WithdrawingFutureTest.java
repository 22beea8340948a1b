package dev.jeton.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** The first completion wins, and only a completion from outside that wins withdraws, once. */
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
}
