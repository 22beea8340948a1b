package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static dev.jeton.TestThreads.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SelectTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  private final List<Object> undelivered = new CopyOnWriteArrayList<>();

  private <T> Channel<T> rendezvous() {
    return Channel.<T>builder().onUndelivered(undelivered::add).build();
  }

  private <T> Channel<T> buffered(int capacity) {
    return Channel.<T>builder().capacity(capacity).onUndelivered(undelivered::add).build();
  }

  private static int waiting(Channel<?> channel) {
    return ((FifoChannel<?>) channel).queueLength();
  }

  // ---------------------------------------------------------------- ready at once

  @Test
  void aClauseReadyAtOnce_wins_andNothingIsQueued() throws Exception {
    Channel<String> a = buffered(1);
    Channel<String> b = buffered(1);
    b.send("x");
    String got = Select.select(a.onReceive(v -> "a" + v), b.onReceive(v -> "b" + v));
    assertEquals("bx", got);
    assertEquals(0, waiting(a));
    assertEquals(0, waiting(b));
  }

  @Test
  void aSendClauseReadyAtOnce_sends() throws Exception {
    Channel<String> full = buffered(1);
    full.send("old");
    Channel<String> room = buffered(1);
    String got = Select.select(full.onSend("x", () -> "full"), room.onSend("y", () -> "room"));
    assertEquals("room", got);
    assertEquals(Optional.of("y"), room.tryReceive());
    assertEquals(Optional.of("old"), full.tryReceive());
    assertEquals(Optional.empty(), full.tryReceive(), "the losing send's value was never sent");
    assertEquals(List.of(), undelivered);
  }

  @Test
  void aReceiveClause_takesFromAWaitingSender() throws Exception {
    Channel<Integer> ch = rendezvous();
    CompletableFuture<Void> sent = ch.sendAsync(7);
    assertEquals(8, Select.<Integer>select(ch.onReceive(v -> v + 1)));
    done(sent);
  }

  @Test
  void unbiased_choosesAtRandomAmongTheReadyClauses() throws Exception {
    Channel<Integer> a = Channel.unlimited();
    Channel<Integer> b = Channel.unlimited();
    int firsts = 0;
    for (int i = 0; i < 2000; i++) {
      a.send(i);
      b.send(i);
      firsts += Select.select(a.onReceive(v -> 1), b.onReceive(v -> 0));
      // one value is left, in the clause that lost: empty both for the next round
      assertEquals(1, a.size() + b.size());
      a.tryReceive();
      b.tryReceive();
    }
    // Binomial(2000, 1/2): below 800 or above 1200 has a probability under 1e-18.
    assertTrue(firsts > 800 && firsts < 1200, "the first clause won " + firsts + " of 2000");
  }

  /**
   * Over three clauses, two ready: each wins half the time (a random first clause then going round,
   * which serves two clauses, would give the one after the empty clause two thirds).
   */
  @Test
  void unbiased_overThreeClauses_choosesEachReadyOneEqually() throws Exception {
    Channel<Integer> a = Channel.unlimited();
    Channel<Integer> empty = Channel.unlimited();
    Channel<Integer> c = Channel.unlimited();
    int firsts = 0;
    for (int i = 0; i < 3000; i++) {
      a.send(i);
      c.send(i);
      firsts += Select.select(a.onReceive(v -> 1), empty.onReceive(v -> 0), c.onReceive(v -> 0));
      assertEquals(1, a.size() + c.size());
      a.tryReceive();
      c.tryReceive();
    }
    // Binomial(3000, 1/2): outside 1300 to 1700 has a probability under 1e-13; two thirds
    // would be 2000.
    assertTrue(firsts > 1300 && firsts < 1700, "the first clause won " + firsts + " of 3000");
  }

  /** A select of a timeout alone waits it out; of a default alone, returns at once. */
  @Test
  void aSelectWithNoChannelClause_endsByItsTimeoutOrDefault() throws Exception {
    assertEquals("late", Select.select(Select.onTimeout(Duration.ofMillis(1), () -> "late")));
    assertEquals("now", Select.select(Select.otherwise(() -> "now")));
    assertEquals(
        "late", done(Select.selectAsync(Select.onTimeout(Duration.ofMillis(1), () -> "late"))));
  }

  @Test
  void biased_choosesTheFirstReadyClauseInTheOrderGiven() throws Exception {
    Channel<Integer> a = Channel.unlimited();
    Channel<Integer> b = Channel.unlimited();
    Channel<Integer> empty = Channel.unlimited();
    for (int i = 0; i < 100; i++) {
      a.send(i);
      b.send(i);
      assertEquals(
          "b",
          Select.selectBiased(
              empty.onReceive(v -> "empty"), b.onReceive(v -> "b"), a.onReceive(v -> "a")));
      assertEquals(Optional.of(i), a.tryReceive());
    }
  }

  @Test
  void otherwise_winsOnlyIfNothingIsReady() throws Exception {
    Channel<String> ch = buffered(1);
    assertEquals("none", Select.select(ch.onReceive(v -> v), Select.otherwise(() -> "none")));
    assertEquals(0, waiting(ch));
    ch.send("x");
    assertEquals("x", Select.select(ch.onReceive(v -> v), Select.otherwise(() -> "none")));
    Channel<String> full = buffered(1);
    full.send("old");
    assertEquals(
        "none", Select.select(full.onSend("y", () -> "sent"), Select.otherwise(() -> "none")));
    assertEquals(List.of(), undelivered, "a send that did not win reports nothing");
  }

  // ---------------------------------------------------------------- waiting

  @Test
  void aWaitingSelect_isServedByTheFirstChannel_andLeavesTheOthers() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    CompletableFuture<String> got = new CompletableFuture<>();
    threads.start(
        () -> got.complete(Select.select(a.onReceive(v -> "a" + v), b.onReceive(v -> "b" + v))));
    awaitTrue(() -> waiting(a) == 1 && waiting(b) == 1, "the select to wait on both");
    b.send("x");
    assertEquals("bx", done(got));
    awaitTrue(() -> waiting(a) == 0, "the select to leave a");
    assertFalse(a.trySend("y"), "nobody receives on a any more");
  }

  @Test
  void aWaitingSendClause_isTakenByAReceiver_theOtherValueStaysTheCallers() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    CompletableFuture<String> got =
        Select.selectAsync(a.onSend("to a", () -> "a"), b.onSend("to b", () -> "b"));
    assertFalse(got.isDone());
    assertEquals("to b", b.receive());
    assertEquals("b", done(got));
    awaitTrue(() -> waiting(a) == 0, "the select to leave a");
    assertEquals(Optional.empty(), a.tryReceive());
    assertEquals(List.of(), undelivered);
  }

  @Test
  void aWaitingSelect_queuesBehindEarlierReceivers() throws Exception {
    Channel<String> ch = rendezvous();
    CompletableFuture<String> first = ch.receiveAsync();
    CompletableFuture<String> selected = Select.selectAsync(ch.onReceive(v -> v));
    ch.send("1");
    ch.send("2");
    assertEquals("1", done(first));
    assertEquals("2", done(selected));
  }

  @Test
  void twoSelects_matchEachOther() throws Exception {
    Channel<Integer> a = rendezvous();
    Channel<Integer> b = rendezvous();
    CompletableFuture<String> receiver =
        Select.selectAsync(a.onReceive(v -> "a" + v), b.onReceive(v -> "b" + v));
    String sender = Select.select(a.onSend(1, () -> "sent a"), b.onSend(2, () -> "sent b"));
    String got = done(receiver);
    assertTrue(sender.equals("sent a") ? got.equals("a1") : got.equals("b2"), sender + " / " + got);
    awaitTrue(() -> waiting(a) + waiting(b) == 0, "both selects to leave the other channel");
    assertEquals(List.of(), undelivered);
  }

  @Test
  void twoReceiveClausesOnOneChannel_takeOneValue() throws Exception {
    Channel<Integer> ch = rendezvous();
    CompletableFuture<Integer> got =
        Select.selectAsync(ch.onReceive(v -> v), ch.onReceive(v -> -v));
    ch.send(5);
    assertEquals(5, Math.abs(done(got)));
    awaitTrue(() -> waiting(ch) == 0, "the other clause to leave");
    assertFalse(ch.trySend(6));
  }

  // ---------------------------------------------------------------- timeouts

  @Test
  void onTimeout_winsIfNothingHappens_andWithdrawsEveryClause() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    String got =
        Select.select(
            a.onReceive(v -> v),
            b.onSend("kept", () -> "sent"),
            Select.onTimeout(Duration.ofMillis(20), () -> "timeout"));
    assertEquals("timeout", got);
    assertEquals(0, waiting(a));
    assertEquals(0, waiting(b));
    assertFalse(a.trySend("late"));
    assertEquals(List.of(), undelivered, "the send clause's value stays the caller's");
  }

  @Test
  void onTimeout_async() throws Exception {
    Channel<String> a = rendezvous();
    CompletableFuture<String> got =
        Select.selectAsync(
            a.onReceive(v -> v), Select.onTimeout(Duration.ofMillis(5), () -> "timeout"));
    assertEquals("timeout", done(got));
    awaitTrue(() -> waiting(a) == 0, "the receive clause to leave");
  }

  @Test
  void onTimeout_doesNotFire_onceAClauseWon() throws Exception {
    Channel<String> a = rendezvous();
    CompletableFuture<String> got =
        Select.selectAsync(
            a.onReceive(v -> v), Select.onTimeout(Duration.ofHours(1), () -> "timeout"));
    a.send("x");
    assertEquals("x", done(got));
  }

  @Test
  void anAsyncSelect_completedFromOutside_withdraws() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    CompletableFuture<String> got =
        Select.selectAsync(a.onReceive(v -> v), b.onSend("kept", () -> "sent"));
    got.orTimeout(1, java.util.concurrent.TimeUnit.MILLISECONDS);
    assertInstanceOf(TimeoutException.class, failureOf(got));
    awaitTrue(() -> waiting(a) + waiting(b) == 0, "both clauses to leave");
    assertEquals(List.of(), undelivered);
  }

  // ---------------------------------------------------------------- giving up

  @Test
  void cancel_withdrawsEveryClause_andAfterAWinIsRefused() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    CompletableFuture<String> cancelled =
        Select.selectAsync(a.onReceive(v -> v), b.onReceive(v -> v));
    assertTrue(cancelled.cancel(false));
    assertEquals(0, waiting(a) + waiting(b));
    assertFalse(a.trySend("x"));

    CompletableFuture<String> won = Select.selectAsync(a.onReceive(v -> v), b.onReceive(v -> v));
    a.send("y");
    assertFalse(won.cancel(false), "a select that won keeps its value");
    assertEquals("y", done(won));
  }

  @Test
  void interrupt_endsABlockingSelect_andWithdrawsEveryClause() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread t =
        threads.start(
            () -> {
              try {
                Select.select(a.onReceive(v -> v), b.onSend("kept", () -> "sent"));
              } catch (InterruptedException e) {
                thrown.set(e);
              }
            });
    awaitTrue(() -> waiting(a) == 1 && waiting(b) == 1, "the select to wait");
    t.interrupt();
    t.join();
    assertInstanceOf(InterruptedException.class, thrown.get());
    assertEquals(0, waiting(a) + waiting(b));
    assertEquals(List.of(), undelivered);
  }

  @Test
  void anInterruptedThread_doesNotSelect() {
    Channel<String> a = buffered(1);
    assertTrue(a.trySend("x"));
    Thread.currentThread().interrupt();
    assertThrows(InterruptedException.class, () -> Select.select(a.onReceive(v -> v)));
    assertEquals(1, a.size());
  }

  // ---------------------------------------------------------------- closing

  @Test
  void closedChannels_winAndFail_orAnswerClosed() throws Exception {
    Channel<String> closed = rendezvous();
    closed.close();
    Channel<String> open = rendezvous();
    assertThrows(
        ChannelClosedException.class,
        () -> Select.select(closed.onReceive(v -> v), open.onReceive(v -> v)));
    assertEquals(
        "closed",
        Select.select(closed.onReceiveOrClosed(v -> v.orElse("closed")), open.onReceive(v -> v)));
    assertThrows(
        ChannelClosedException.class, () -> Select.select(closed.onSend("x", () -> "sent")));
    assertEquals(0, waiting(open));
    assertEquals(List.of(), undelivered, "a select's refused send value stays the caller's");
  }

  @Test
  void closingAChannel_endsASelectWaitingOnIt() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    CompletableFuture<String> plain = Select.selectAsync(a.onReceive(v -> v), b.onReceive(v -> v));
    CompletableFuture<String> orClosed =
        Select.selectAsync(a.onReceiveOrClosed(v -> v.orElse("closed")), b.onReceive(v -> v));
    a.close();
    assertInstanceOf(ChannelClosedException.class, failureOf(plain));
    assertEquals("closed", done(orClosed));
    awaitTrue(() -> waiting(b) == 0, "both selects to leave b");
  }

  @Test
  void cancellingAChannel_failsASelectSendingToIt_withoutReportingItsValue() throws Exception {
    Channel<String> a = rendezvous();
    Channel<String> b = rendezvous();
    CompletableFuture<String> sending =
        Select.selectAsync(a.onSend("x", () -> "a"), b.onSend("y", () -> "b"));
    a.cancel();
    assertInstanceOf(ChannelClosedException.class, failureOf(sending));
    awaitTrue(() -> waiting(b) == 0, "the select to leave b");
    assertEquals(List.of(), undelivered);
  }

  @Test
  void aClosedChannelInALosingClause_doesNotStealAWonSelect() throws Exception {
    // Completions wait in `deferred`: the select has won on a, but has not yet withdrawn its
    // node in b (that is done on finishing, which a's completion runs) when b closes.
    List<Runnable> deferred = new ArrayList<>();
    Channel<String> a = Channel.<String>builder().completionExecutor(deferred::add).build();
    Channel<String> b = Channel.<String>builder().completionExecutor(deferred::add).build();
    CompletableFuture<String> got = Select.selectAsync(a.onReceive(v -> v), b.onReceive(v -> v));
    assertTrue(a.trySend("x"), "the select took it");
    assertEquals(1, waiting(b), "its losing node is still in b");
    assertTrue(b.close());
    assertEquals(0, waiting(b), "close took the losing node out");
    assertFalse(got.isDone());
    assertEquals(1, deferred.size(), "only a's completion: close failed no select in b");
    deferred.forEach(Runnable::run);
    assertEquals("x", done(got));
  }

  // ---------------------------------------------------------------- the clause's function

  @Test
  void whatTheFunctionThrows_theSelectThrows_afterTheValueWasTaken() throws Exception {
    Channel<String> ch = buffered(1);
    ch.send("x");
    IllegalStateException e = new IllegalStateException("boom");
    assertThrows(
        IllegalStateException.class,
        () ->
            Select.select(
                ch.<String>onReceive(
                    v -> {
                      throw e;
                    })));
    assertEquals(0, ch.size());
    ch.send("y");
    CompletableFuture<String> async =
        Select.selectAsync(
            ch.<String>onReceive(
                v -> {
                  throw e;
                }));
    assertEquals(e, failureOf(async));
  }

  @Test
  void aClauseMayBeReused() throws Exception {
    Channel<Integer> ch = Channel.unlimited();
    SelectClause<Integer> twice = ch.onReceive(v -> v * 2);
    List<Integer> got = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ch.send(i);
      got.add(Select.select(List.of(twice)));
    }
    assertEquals(List.of(0, 2, 4), got);
  }

  // ---------------------------------------------------------------- bad input

  @Test
  void badInput_isRefusedWithAClearMessage() {
    Channel<String> a = rendezvous();
    assertEquals(
        "a select needs at least one clause",
        assertThrows(IllegalArgumentException.class, () -> Select.<String>select()).getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> Select.select(Select.onTimeout(Duration.ZERO, () -> 1), Select.otherwise(() -> 2)));
    assertThrows(
        IllegalArgumentException.class,
        () -> Select.select(Select.otherwise(() -> 1), Select.otherwise(() -> 2)));
    IllegalArgumentException both =
        assertThrows(
            IllegalArgumentException.class,
            () -> Select.select(a.onReceive(v -> v), a.onSend("x", () -> "sent")));
    assertTrue(both.getMessage().contains("both send to and receive from"), both.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> Select.onTimeout(Duration.ofMillis(-1), () -> 1));
    assertThrows(NullPointerException.class, () -> a.onSend(null, () -> 1));
    assertThrows(NullPointerException.class, () -> Select.select(a.onReceive(v -> v), null));
    assertEquals(0, waiting(a));
  }
}
