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
 * How a select plugs into the channels' wait-queue engine: who runs the undelivered hook for a
 * sender it passes, the delivery trampoline, the completion executor, and what a finished select
 * leaves behind.
 */
class SelectEngineTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  // ---------------------------------------------------------------- the undelivered hook

  // A cancel's callbacks run before its withdrawal: a receive or select made in them finds the
  // sender given up but still queued, and unlinks it. Its value is the cancel's to report, not
  // theirs: a hook that throws must not make them throw with a node queued for nobody, nor keep
  // a delivery they made from its receiver.

  private final List<String> reported = new ArrayList<>();
  private final IllegalStateException boom = new IllegalStateException("the hook threw");

  /** A rendezvous channel whose hook records the value, then throws {@link #boom}. */
  private Channel<String> throwingHook() {
    return Channel.<String>builder()
        .onUndelivered(
            v -> {
              reported.add(v);
              throw boom;
            })
        .build();
  }

  /** Cancels {@code givenUp}, whose value its withdrawal reports: the hook throws from cancel. */
  private void cancelReportingOnce(CompletableFuture<Void> givenUp, String value) {
    assertSame(
        boom,
        assertThrows(IllegalStateException.class, () -> givenUp.cancel(false)),
        "the given-up value is reported by the cancel that gave it up");
    assertEquals(List.of(value), reported);
  }

  @Test
  void aThrowingHook_neverStrandsAReceiveThatPassedAGivenUpSender() throws Exception {
    Channel<String> ch = throwingHook();
    CompletableFuture<Void> givenUp = ch.sendAsync("given up");
    AtomicReference<CompletableFuture<String>> received = new AtomicReference<>();
    givenUp.whenComplete((v, e) -> received.set(ch.receiveAsync()));
    cancelReportingOnce(givenUp, "given up");
    assertTrue(ch.trySend("y"));
    assertEquals("y", received.get().getNow(null), "the receive still waits, and is served");
  }

  @Test
  void aThrowingHook_neverStrandsASelectThatPassedAGivenUpSender() throws Exception {
    Channel<String> ch = throwingHook();
    Channel<String> other = Channel.rendezvous();
    CompletableFuture<Void> givenUp = ch.sendAsync("given up");
    AtomicReference<CompletableFuture<String>> selected = new AtomicReference<>();
    givenUp.whenComplete(
        (v, e) -> selected.set(Select.selectAsync(ch.onReceive(x -> x), other.onReceive(x -> x))));
    cancelReportingOnce(givenUp, "given up");
    assertTrue(other.trySend("y"));
    assertEquals("y", selected.get().getNow(null), "the select still waits, and is served");
  }

  @Test
  void aThrowingHook_onALosingClausesChannel_doesNotStrandTheWinningHandover() throws Exception {
    Channel<String> losing = throwingHook(); // created first: its lock is taken first
    Channel<String> winning = Channel.rendezvous();
    CompletableFuture<String> receiver = winning.receiveAsync();
    CompletableFuture<Void> givenUp = losing.sendAsync("given up");
    AtomicReference<String> selected = new AtomicReference<>();
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
    cancelReportingOnce(givenUp, "given up");
    assertEquals("sent", selected.get());
    assertEquals("x", receiver.getNow(null), "the receiver served on the other channel is told");
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
