package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How a select plugs into the channels' wait-queue engine: what runs once the channels' locks are
 * released (deliveries and the undelivered hook), the delivery trampoline, and what a finished
 * select leaves behind.
 */
class SelectEngineTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  // ---------------------------------------------------------------- after the locks

  @Test
  void aThrowingHook_onALosingClausesChannel_doesNotStrandTheWinningHandover() throws Exception {
    IllegalStateException boom = new IllegalStateException("the hook threw");
    // Created first, so its lock is taken first, and what it decided runs first.
    Channel<String> losing =
        Channel.<String>builder()
            .onUndelivered(
                v -> {
                  throw boom;
                })
            .build();
    Channel<String> winning = Channel.rendezvous();
    CompletableFuture<String> receiver = winning.receiveAsync();
    CompletableFuture<Void> givenUp = losing.sendAsync("given up");
    AtomicReference<String> selected = new AtomicReference<>();
    // A cancel's callbacks run before its withdrawal: this select finds the sender given up but
    // still queued and unlinks it; then its send clause hands "x" to the receiver waiting on the
    // other channel.
    givenUp.whenComplete(
        (v, e) -> {
          try {
            selected.set(
                Select.selectBiased(
                    losing.onReceive(x -> "received"), winning.onSend("x", () -> "sent")));
          } catch (InterruptedException unexpected) {
            throw new AssertionError(unexpected);
          }
        });
    assertSame(
        boom,
        assertThrows(IllegalStateException.class, () -> givenUp.cancel(false)),
        "the given-up value is reported by the cancel that gave it up, not by the select");
    assertEquals("sent", selected.get());
    assertEquals("x", receiver.getNow(null), "the receiver served is told");
  }

  @Test
  void aThrowingHook_neverStrandsASelectThatPassedAGivenUpSender() throws Exception {
    IllegalStateException boom = new IllegalStateException("the hook threw");
    List<String> reported = new ArrayList<>();
    Channel<String> ch =
        Channel.<String>builder()
            .onUndelivered(
                v -> {
                  reported.add(v);
                  throw boom;
                })
            .build();
    Channel<String> other = Channel.rendezvous();
    CompletableFuture<Void> givenUp = ch.sendAsync("given up");
    AtomicReference<CompletableFuture<String>> selected = new AtomicReference<>();
    // The select, made in the cancel's callbacks (before its withdrawal), finds the sender given
    // up but still queued, passes it, and queues on both channels.
    givenUp.whenComplete(
        (v, e) -> selected.set(Select.selectAsync(ch.onReceive(x -> x), other.onReceive(x -> x))));
    assertSame(
        boom,
        assertThrows(IllegalStateException.class, () -> givenUp.cancel(false)),
        "the given-up value is reported by the cancel that gave it up");
    assertEquals(List.of("given up"), reported);
    assertTrue(other.trySend("y"));
    assertEquals("y", selected.get().getNow(null), "the select still waits, and is served");
  }

  // ---------------------------------------------------------------- the trampoline

  @Test
  void asyncSelects_thatSelectAgainInTheirCallbacks_runInConstantStack() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    Channel<Integer> other = Channel.rendezvous();
    int steps = 100_000;
    List<CompletableFuture<Integer>> chain = new ArrayList<>(steps);
    for (int i = 0; i < steps; i++) {
      chain.add(
          Select.selectAsync(ch.onReceive(v -> v), other.onReceive(v -> -1))
              .thenApply(
                  v -> {
                    // hands the next value to the select queued behind this one
                    var unused =
                        Select.selectAsync(
                            ch.onSend(v + 1, () -> true), Select.otherwise(() -> false));
                    return v;
                  }));
    }
    assertTrue(ch.trySend(0)); // recursion would overflow the 1 MB stack long before 100,000
    for (int i = 0; i < steps; i++) {
      assertEquals(i, done(chain.get(i)));
    }
    assertEquals(0, ((FifoChannel<?>) ch).queueLength());
    assertEquals(0, ((FifoChannel<?>) other).queueLength(), "every losing clause withdrawn");
  }

  // ---------------------------------------------------------------- completions

  @Test
  void anAsyncSelect_completesOnTheCompletionExecutorOfTheChannelThatServedIt() throws Exception {
    ExecutorService onA = Executors.newSingleThreadExecutor(r -> new Thread(r, "a-completions"));
    ExecutorService onB = Executors.newSingleThreadExecutor(r -> new Thread(r, "b-completions"));
    try {
      Channel<String> a = Channel.<String>builder().completionExecutor(onA).build();
      Channel<String> b = Channel.<String>builder().completionExecutor(onB).build();
      CompletableFuture<String> served =
          Select.selectAsync(a.onReceive(v -> threadName()), b.onReceive(v -> threadName()));
      b.send("x");
      assertEquals("b-completions", done(served));
      CompletableFuture<String> closed =
          Select.selectAsync(
              a.onReceiveOrClosed(v -> threadName()), b.onReceiveOrClosed(v -> threadName()));
      a.close();
      assertEquals("a-completions", done(closed), "the channel that closed served it");
      awaitTrue(() -> waiting(b) == 0, "the losing clauses to leave b");
    } finally {
      onA.shutdownNow();
      onB.shutdownNow();
    }
  }

  // ---------------------------------------------------------------- memory

  @Test
  void finishedSelects_areNotKeptByTheChannelsTheyWaitedOn() throws Exception {
    Channel<String> a = Channel.rendezvous();
    Channel<String> b = Channel.rendezvous(); // waited on by every select below, alive to the end
    List<WeakReference<Object>> finished = new ArrayList<>();
    finished.add(asyncServedBy(a, b));
    finished.add(asyncCancelled(a, b));
    finished.add(asyncTimedOut(a, b));
    finished.add(asyncServedBeforeItsTimeout(a, b));
    finished.add(blockingTimedOut(a, b));
    awaitTrue(
        () -> {
          System.gc();
          return finished.stream().allMatch(r -> r.get() == null);
        },
        "the finished selects to be collected");
    assertEquals(0, waiting(a) + waiting(b));
  }

  /** A select served by {@code a}: a reference to its future. */
  private static WeakReference<Object> asyncServedBy(Channel<String> a, Channel<String> b)
      throws Exception {
    CompletableFuture<String> f = Select.selectAsync(a.onReceive(v -> v), b.onReceive(v -> v));
    a.send("x");
    assertEquals("x", done(f));
    return new WeakReference<>(f);
  }

  private static WeakReference<Object> asyncCancelled(Channel<String> a, Channel<String> b) {
    CompletableFuture<String> f = Select.selectAsync(a.onReceive(v -> v), b.onReceive(v -> v));
    assertTrue(f.cancel(false));
    return new WeakReference<>(f);
  }

  private static WeakReference<Object> asyncTimedOut(Channel<String> a, Channel<String> b)
      throws Exception {
    CompletableFuture<String> f =
        Select.selectAsync(
            a.onReceive(v -> v),
            b.onReceive(v -> v),
            Select.onTimeout(Duration.ofMillis(1), () -> "timeout"));
    assertEquals("timeout", done(f));
    return new WeakReference<>(f);
  }

  /** Its timer, started for an hour, must not keep it. */
  private static WeakReference<Object> asyncServedBeforeItsTimeout(
      Channel<String> a, Channel<String> b) throws Exception {
    CompletableFuture<String> f =
        Select.selectAsync(
            a.onReceive(v -> v),
            b.onReceive(v -> v),
            Select.onTimeout(Duration.ofHours(1), () -> "timeout"));
    a.send("y");
    assertEquals("y", done(f));
    return new WeakReference<>(f);
  }

  /** A reference to what its clauses hold, which the select holds while it waits. */
  private static WeakReference<Object> blockingTimedOut(Channel<String> a, Channel<String> b)
      throws Exception {
    Object held = new Object();
    Object got =
        Select.select(
            a.onReceive(v -> held),
            b.onReceive(v -> held),
            Select.onTimeout(Duration.ofMillis(1), () -> "timeout"));
    assertEquals("timeout", got);
    return new WeakReference<>(held);
  }

  private static String threadName() {
    return Thread.currentThread().getName();
  }

  private static int waiting(Channel<?> channel) {
    return ((FifoChannel<?>) channel).queueLength();
  }
}
