package dev.jeton.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The engine's pump alone, over a source of permits the test completes by hand. */
class PermitPumpTest {
  private record Entry(String name, int priority, long enqueuedNanos, long seq)
      implements RankOrder.Ranked {}

  /** A queue owner that logs what the pump does, refusing one entry per failure. */
  private static final class Owner extends PermitPump<Entry, String> {
    final List<CompletableFuture<String>> acquires = new ArrayList<>();
    final List<String> log = new ArrayList<>();
    Optional<String> free = Optional.empty();
    boolean acquireAtOnce; // acquires complete at once with "p"
    boolean joinBlocks; // acquires whose join() would block, as a Redis request's may
    Consumer<Entry> onGrant = entry -> {};
    private long seq;

    Owner() {
      super(RankOrder.byPriority(0));
    }

    Entry offer(String name, int priority) {
      Entry entry = new Entry(name, priority, 0, seq++);
      boolean start;
      lock.lock();
      try {
        queue.add(entry);
        start = startPumpLocked();
      } finally {
        lock.unlock();
      }
      if (start) {
        pump();
      }
      return entry;
    }

    CompletableFuture<String> lastAcquire() {
      return acquires.get(acquires.size() - 1);
    }

    @Override
    protected CompletableFuture<String> acquire() {
      CompletableFuture<String> acquiring =
          acquireAtOnce
              ? CompletableFuture.completedFuture("p")
              : joinBlocks ? new JoinBlocks() : new CompletableFuture<>();
      acquires.add(acquiring);
      return acquiring;
    }

    @Override
    protected Optional<String> tryAcquire() {
      return free;
    }

    @Override
    protected void release(String permit) {
      log.add("released " + permit);
    }

    @Override
    protected void grant(Entry entry, String permit) {
      log.add(entry.name() + " got " + permit);
      onGrant.accept(entry);
    }

    @Override
    @GuardedBy("lock")
    protected List<Entry> refusedLocked(Throwable failure) {
      return List.of(Objects.requireNonNull(queue.pollFirst()));
    }

    @Override
    protected void refuse(List<Entry> refused, Throwable failure, int left) {
      for (Entry e : refused) {
        log.add(
            e.name() + " refused (" + failure.getClass().getSimpleName() + "), " + left + " left");
      }
    }
  }

  /** A future whose join() would block (fails here instead), as a Redis request's may. */
  private static final class JoinBlocks extends CompletableFuture<String> {
    @Override
    public String join() {
      throw new AssertionError("join() on a parked acquire, from its own callback");
    }
  }

  private final Owner owner = new Owner();

  /**
   * Regression (issue 30): the pump read a parked acquire's outcome with join(), from its callback;
   * a Redis request's join waits for its grant's hand-off, so on a cancelled request the timer
   * thread that cancelled it blocked for ever, and every timeout behind it with it (found by
   * RedisUnavailableIntegrationTest, which hung). The outcome comes with the callback.
   */
  @Test
  void aParkedAcquireIsReadFromItsCallback_neverByJoin() {
    owner.joinBlocks = true;
    owner.offer("a", 0);
    owner.offer("b", 0);
    owner.lastAcquire().complete("p1");
    owner.lastAcquire().completeExceptionally(new IllegalStateException("closed"));
    assertEquals(List.of("a got p1", "b refused (IllegalStateException), 0 left"), owner.log);
  }

  @Test
  void aPermitGoesToTheBestEntryQueuedWhenItComes_thenThePumpEndsWithTheQueue() {
    owner.offer("early low", 1);
    owner.offer("late high", 5);
    assertEquals(1, owner.acquires.size(), "one acquire at a time");
    owner.lastAcquire().complete("p1");
    owner.lastAcquire().complete("p2");
    assertEquals(List.of("late high got p1", "early low got p2"), owner.log);
    assertEquals(2, owner.acquires.size(), "no acquire once the queue is empty");
    assertFalse(owner.isPumping());
  }

  @Test
  void withdrawingTheLastEntryCancelsThePendingAcquire_andThePumpEnds() {
    Entry a = owner.offer("a", 0);
    assertEquals(0, owner.withdraw(a));
    assertTrue(owner.acquires.get(0).isCancelled());
    assertEquals(-1, owner.withdraw(a), "withdrawn once");
    assertFalse(owner.isPumping());
    owner.offer("b", 0); // a new pump
    owner.lastAcquire().complete("p");
    assertEquals(List.of("b got p"), owner.log);
  }

  @Test
  void aFailedAcquireRefusesWhomTheOwnerSays_andThePumpAsksAgainForTheRest() {
    owner.offer("a", 0);
    owner.offer("b", 0);
    owner.lastAcquire().completeExceptionally(new IllegalStateException("closed"));
    owner.lastAcquire().complete("p");
    assertEquals(List.of("a refused (IllegalStateException), 1 left", "b got p"), owner.log);
  }

  @Test
  void aNullPermitIsAFailure() {
    owner.offer("a", 0);
    owner.lastAcquire().complete(null);
    assertEquals(List.of("a refused (NullPointerException), 0 left"), owner.log);
  }

  @Test
  void theIdleFastPath_takesAFreePermitOnlyWithNobodyQueuedAndTheOwnerWilling() {
    owner.free = Optional.of("idle");
    assertEquals("idle", owner.tryAcquireIfIdle(() -> true));
    assertNull(owner.tryAcquireIfIdle(() -> false));
    assertEquals(List.of("released idle"), owner.log, "refused by the owner: given back");
    owner.offer("a", 0); // the pump now waits
    assertNull(owner.tryAcquireIfIdle(() -> true), "a pump runs: the permit is the queue's");
  }

  /**
   * What a grant queues waits for the running pump (P1), which goes on in constant stack: a grant
   * that queues the next entry, 100 000 times over, with permits that come at once.
   */
  @Test
  void entriesQueuedByAGrant_areServedByTheSamePump_inConstantStack() {
    int n = 100_000;
    owner.acquireAtOnce = true;
    int[] granted = {0};
    owner.onGrant =
        entry -> {
          if (++granted[0] < n) {
            owner.offer("next", 0);
          }
        };
    owner.offer("first", 0);
    assertEquals(n, granted[0]);
    assertFalse(owner.isPumping());
  }
}
