package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static dev.jeton.TestThreads.done;
import static dev.jeton.TestThreads.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Channel.Overflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ChannelTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  private final List<Object> undelivered = new CopyOnWriteArrayList<>();

  private <T> Channel.Builder<T> recording() {
    return Channel.<T>builder().onUndelivered(undelivered::add);
  }

  private static int waiting(Channel<?> channel) {
    return ((FifoChannel<?>) channel).queueLength();
  }

  // ---------------------------------------------------------------- capacities

  @Test
  void rendezvous_sendWaitsForAReceiver() throws Exception {
    Channel<String> ch = Channel.rendezvous();
    assertFalse(ch.trySend("a"));
    CompletableFuture<Void> sent = ch.sendAsync("a");
    assertFalse(sent.isDone());
    assertEquals(0, ch.size());
    assertEquals("a", ch.receive());
    assertNull(done(sent));
  }

  @Test
  void rendezvous_receiverWaitsForASender() throws Exception {
    Channel<String> ch = Channel.rendezvous();
    CompletableFuture<String> got = ch.receiveAsync();
    assertFalse(got.isDone());
    assertTrue(ch.trySend("a"));
    assertEquals("a", done(got));
  }

  @Test
  void rendezvous_blockingSenderAndReceiver_meet() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    threads.start(() -> ch.send(1));
    assertEquals(1, ch.receive());
    CompletableFuture<Integer> got = new CompletableFuture<>();
    threads.start(() -> got.complete(ch.receive()));
    awaitTrue(() -> waiting(ch) == 1, "the receiver to wait");
    ch.send(2);
    assertEquals(2, done(got));
  }

  @Test
  void buffered_acceptsUpToItsCapacity_thenSendsWait() throws Exception {
    Channel<Integer> ch = Channel.buffered(2);
    assertTrue(ch.trySend(1));
    ch.send(2);
    assertFalse(ch.trySend(3));
    assertThrows(TimeoutException.class, () -> ch.send(3, Duration.ZERO));
    CompletableFuture<Void> third = ch.sendAsync(3);
    assertEquals(2, ch.size());
    assertEquals(1, ch.receive());
    assertNull(done(third)); // moved into the buffer
    assertEquals(List.of(2, 3), List.of(ch.receive(), ch.receive()));
    assertEquals(Optional.empty(), ch.tryReceive());
  }

  @Test
  void unlimited_neverMakesASendWait() {
    Channel<Integer> ch = Channel.unlimited();
    for (int i = 0; i < 10_000; i++) {
      assertTrue(ch.trySend(i));
    }
    assertEquals(10_000, ch.size());
    assertEquals(Integer.MAX_VALUE, ch.capacity());
    assertEquals(Optional.of(0), ch.tryReceive());
  }

  @Test
  void dropOldest_keepsTheLatest_andReportsTheDropped() throws Exception {
    Channel<Integer> conflated =
        this.<Integer>recording().capacity(1).overflow(Overflow.DROP_OLDEST).build();
    conflated.send(1);
    assertTrue(conflated.trySend(2));
    assertNull(done(conflated.sendAsync(3)));
    assertEquals(3, conflated.receive());
    assertEquals(List.of(1, 2), undelivered);
  }

  @Test
  void dropNewest_keepsTheBuffer_andReportsTheSentValue() throws Exception {
    Channel<Integer> ch =
        this.<Integer>recording().capacity(2).overflow(Overflow.DROP_NEWEST).build();
    ch.send(1);
    ch.send(2);
    ch.send(3);
    assertTrue(ch.trySend(4));
    assertEquals(List.of(1, 2), List.of(ch.receive(), ch.receive()));
    assertEquals(List.of(3, 4), undelivered);
  }

  @Test
  void dropPolicy_handsToAWaitingReceiverFirst() throws Exception {
    Channel<Integer> ch =
        this.<Integer>recording().capacity(1).overflow(Overflow.DROP_NEWEST).build();
    CompletableFuture<Integer> got = ch.receiveAsync();
    ch.send(1);
    ch.send(2);
    assertEquals(1, done(got));
    assertEquals(2, ch.receive());
    assertEquals(List.of(), undelivered);
  }

  // ---------------------------------------------------------------- order

  @Test
  void waitingSenders_areServedInArrivalOrder_blockingAndAsyncAlike() throws Exception {
    Channel<Integer> ch = Channel.buffered(1);
    ch.send(0);
    CompletableFuture<Void> one = ch.sendAsync(1);
    threads.start(() -> ch.send(2));
    awaitTrue(() -> waiting(ch) == 2, "two senders to wait");
    CompletableFuture<Void> three = ch.sendAsync(3);
    List<Integer> got = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      got.add(ch.receive());
    }
    assertEquals(List.of(0, 1, 2, 3), got);
    assertTrue(one.isDone() && three.isDone());
  }

  @Test
  void waitingReceivers_areServedInArrivalOrder_blockingAndAsyncAlike() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    CompletableFuture<Integer> first = ch.receiveAsync();
    CompletableFuture<Integer> second = new CompletableFuture<>();
    threads.start(() -> second.complete(ch.receive()));
    awaitTrue(() -> waiting(ch) == 2, "two receivers to wait");
    CompletableFuture<Optional<Integer>> third = ch.receiveOrClosedAsync();
    assertTrue(ch.trySend(9));
    ch.send(10);
    ch.send(11);
    assertEquals(9, done(first));
    assertEquals(10, done(second));
    assertEquals(Optional.of(11), done(third));
  }

  @Test
  void tryReceive_takesFromAWaitingSender() throws Exception {
    Channel<String> ch = Channel.rendezvous();
    CompletableFuture<Void> sent = ch.sendAsync("x");
    assertEquals(Optional.of("x"), ch.tryReceive());
    assertNull(done(sent));
    assertEquals(Optional.empty(), ch.tryReceive());
  }

  // ---------------------------------------------------------------- giving up

  @Test
  void cancelledAsyncSend_leavesTheQueue_andReportsItsValue() throws Exception {
    Channel<String> ch = this.<String>recording().build();
    CompletableFuture<Void> a = ch.sendAsync("a");
    CompletableFuture<Void> b = ch.sendAsync("b");
    assertTrue(a.cancel(false));
    assertEquals(List.of("a"), undelivered);
    assertEquals("b", ch.receive());
    assertNull(done(b));
    assertEquals(0, waiting(ch));
  }

  @Test
  void asyncSendCancelledTwice_reportsItsValueOnce() throws Exception {
    // Regression: the second cancel (CompletableFuture answers true again) withdrew again, and
    // the value reached onUndelivered twice; a Scope's cancel did that to its tasks' sends.
    Channel<String> ch = this.<String>recording().build();
    CompletableFuture<Void> a = ch.sendAsync("a");
    assertTrue(a.cancel(false));
    assertTrue(a.cancel(true));
    assertEquals(List.of("a"), undelivered);
    assertEquals(0, waiting(ch));
  }

  @Test
  void cancelAfterTheValueWasTaken_isRefused() throws Exception {
    Channel<String> ch = this.<String>recording().completionExecutor(r -> {}).build();
    CompletableFuture<Void> sent = ch.sendAsync("a"); // completions are never run: stays pending
    assertEquals("a", ch.receive());
    assertFalse(sent.cancel(false));
    assertFalse(sent.completeExceptionally(new TimeoutException()));
    assertEquals(List.of(), undelivered);
    CompletableFuture<String> got = ch.receiveAsync();
    ch.send("b");
    assertFalse(got.cancel(false));
  }

  @Test
  void timedOutSends_reportTheirValues() throws Exception {
    Channel<String> ch = this.<String>recording().build();
    assertThrows(TimeoutException.class, () -> ch.send("a", Duration.ofMillis(1)));
    Throwable t = failureOf(ch.sendAsync("b", Duration.ofMillis(1)));
    assertInstanceOf(TimeoutException.class, t);
    awaitTrue(() -> undelivered.size() == 2, "both values reported");
    assertEquals(List.of("a", "b"), undelivered);
    assertEquals(0, waiting(ch));
  }

  @Test
  void timedOutReceives_leaveTheQueue() throws Exception {
    Channel<String> ch = Channel.rendezvous();
    assertThrows(TimeoutException.class, () -> ch.receive(Duration.ofMillis(1)));
    assertInstanceOf(TimeoutException.class, failureOf(ch.receiveAsync(Duration.ofMillis(1))));
    // The timer's thread withdraws the request just after completing the future.
    awaitTrue(() -> waiting(ch) == 0, "the timed-out receive left the queue");
    assertFalse(ch.trySend("a"));
  }

  @Test
  void interruptedBlockedSend_throws_andReportsItsValue() throws Exception {
    Channel<String> ch = this.<String>recording().build();
    TestThreads.Blocked b = threads.startBlocked(() -> ch.send("a"));
    awaitTrue(() -> waiting(ch) == 1, "the sender to wait");
    b.thread().interrupt();
    assertInstanceOf(InterruptedException.class, done(b.thrown()));
    assertEquals(List.of("a"), undelivered);
    assertEquals(0, waiting(ch));
  }

  @Test
  void interruptedBlockedReceive_throws() throws Exception {
    Channel<String> ch = Channel.rendezvous();
    TestThreads.Blocked b = threads.startBlocked(ch::receive);
    awaitTrue(() -> waiting(ch) == 1, "the receiver to wait");
    b.thread().interrupt();
    assertInstanceOf(InterruptedException.class, done(b.thrown()));
    assertFalse(ch.trySend("a"));
  }

  @Test
  void sendWhileInterrupted_throws_andReportsItsValue() {
    Channel<String> ch = this.<String>recording().capacity(1).build();
    Thread.currentThread().interrupt();
    assertThrows(InterruptedException.class, () -> ch.send("a"));
    assertEquals(List.of("a"), undelivered);
    assertEquals(0, ch.size());
  }

  // ---------------------------------------------------------------- closing

  @Test
  void close_letsReceiversDrain_thenSaysClosed() throws Exception {
    Channel<Integer> ch = Channel.buffered(2);
    ch.send(1);
    ch.send(2);
    CompletableFuture<Void> third = ch.sendAsync(3); // waiting before the close: still delivered
    assertTrue(ch.close());
    assertFalse(ch.close());
    assertTrue(ch.isClosed());
    assertThrows(ChannelClosedException.class, () -> ch.send(4));
    assertFalse(ch.trySend(4));
    assertInstanceOf(ChannelClosedException.class, failureOf(ch.sendAsync(4)));
    assertEquals(1, ch.receive());
    assertEquals(Optional.of(2), ch.receiveOrClosed());
    assertEquals(Optional.of(3), ch.tryReceive());
    assertNull(done(third));
    assertEquals(Optional.empty(), ch.receiveOrClosed());
    assertEquals(Optional.empty(), done(ch.receiveOrClosedAsync()));
    ChannelClosedException e = assertThrows(ChannelClosedException.class, ch::receive);
    assertNull(e.getCause());
    assertInstanceOf(ChannelClosedException.class, failureOf(ch.receiveAsync()));
  }

  @Test
  void close_endsWaitingReceivers() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    CompletableFuture<Integer> plain = ch.receiveAsync();
    CompletableFuture<Optional<Integer>> optional = ch.receiveOrClosedAsync();
    CompletableFuture<Optional<Integer>> blocked = new CompletableFuture<>();
    threads.start(() -> blocked.complete(ch.receiveOrClosed()));
    awaitTrue(() -> waiting(ch) == 3, "three receivers to wait");
    ch.close();
    assertInstanceOf(ChannelClosedException.class, failureOf(plain));
    assertEquals(Optional.empty(), done(optional));
    assertEquals(Optional.empty(), done(blocked));
  }

  @Test
  void closeWithCause_failsReceiversWithIt_afterTheyDrain() throws Exception {
    Channel<Integer> ch = Channel.buffered(1);
    IllegalStateException cause = new IllegalStateException("upstream failed");
    ch.send(1);
    assertTrue(ch.close(cause));
    assertEquals(1, ch.receive());
    ChannelClosedException e = assertThrows(ChannelClosedException.class, ch::receiveOrClosed);
    assertSame(cause, e.getCause());
    assertSame(cause, failureOf(ch.receiveOrClosedAsync()).getCause());
    assertSame(cause, assertThrows(ChannelClosedException.class, () -> ch.send(2)).getCause());
  }

  @Test
  void cancel_dropsTheBuffer_andFailsEveryone() throws Exception {
    Channel<Integer> full = this.<Integer>recording().capacity(2).build();
    full.send(1);
    full.send(2);
    CompletableFuture<Void> sender = full.sendAsync(3);
    full.cancel();
    full.cancel();
    assertEquals(List.of(1, 2, 3), undelivered);
    assertInstanceOf(ChannelClosedException.class, failureOf(sender));
    assertThrows(ChannelClosedException.class, full::receive);
    assertThrows(ChannelClosedException.class, full::receiveOrClosed);
    assertEquals(Optional.empty(), full.tryReceive());
    assertThrows(ChannelClosedException.class, () -> full.send(4));
    assertEquals(List.of(1, 2, 3, 4), undelivered);

    Channel<Integer> empty = Channel.rendezvous();
    CompletableFuture<Optional<Integer>> receiver = empty.receiveOrClosedAsync();
    empty.close();
    empty.cancel(); // after a close: still cancels
    assertEquals(Optional.empty(), done(receiver));
    assertThrows(ChannelClosedException.class, empty::receiveOrClosed);
  }

  @Test
  void cancel_failsABlockedSender() throws Exception {
    Channel<Integer> ch = this.<Integer>recording().build();
    TestThreads.Blocked b = threads.startBlocked(() -> ch.send(7));
    awaitTrue(() -> waiting(ch) == 1, "the sender to wait");
    ch.cancel();
    assertInstanceOf(ChannelClosedException.class, done(b.thrown()));
    assertEquals(List.of(7), undelivered);
  }

  // ---------------------------------------------------------------- iterating

  @Test
  void iteration_endsAtClose() throws Exception {
    Channel<Integer> ch = Channel.buffered(10);
    for (int i = 0; i < 5; i++) {
      ch.send(i);
    }
    ch.close();
    List<Integer> got = new ArrayList<>();
    for (int v : ch) {
      got.add(v);
    }
    assertEquals(List.of(0, 1, 2, 3, 4), got);
    Iterator<Integer> it = ch.iterator();
    assertFalse(it.hasNext());
    assertThrows(java.util.NoSuchElementException.class, it::next);
  }

  @Test
  void stream_receivesWhileAProducerSends() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    threads.start(
        () -> {
          for (int i = 0; i < 100; i++) {
            ch.send(i);
          }
          ch.close();
        });
    assertEquals(4950, ch.stream().mapToInt(Integer::intValue).sum());
  }

  @Test
  void iterator_interrupted_throwsCancellation() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    TestThreads.Blocked b = threads.startBlocked(() -> assertFalse(ch.iterator().hasNext()));
    awaitTrue(() -> waiting(ch) == 1, "the iterator to wait");
    b.thread().interrupt();
    assertInstanceOf(CancellationException.class, done(b.thrown()));
  }

  @Test
  void forEachAsync_handsOnEveryValue_andCompletesAtClose() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    List<Integer> got = new CopyOnWriteArrayList<>();
    CompletableFuture<Void> loop = ch.forEachAsync(got::add);
    for (int i = 0; i < 100_000; i++) {
      ch.send(i); // each send completes the waiting receive, which receives again: flat stack
    }
    assertFalse(loop.isDone());
    ch.close();
    assertNull(done(loop));
    assertEquals(100_000, got.size());
    assertEquals(99_999, got.get(99_999));
  }

  @Test
  void forEachAsync_failsWithWhatTheActionThrows_andStopsWhenCancelled() throws Exception {
    Channel<Integer> ch = Channel.unlimited();
    ch.send(1);
    IllegalStateException boom = new IllegalStateException("boom");
    assertSame(
        boom,
        failureOf(
            ch.forEachAsync(
                v -> {
                  throw boom;
                })));
    CompletableFuture<Void> loop = ch.forEachAsync(v -> {});
    awaitTrue(() -> waiting(ch) == 1, "the loop to wait");
    loop.cancel(false);
    assertEquals(0, waiting(ch));
    ch.send(2);
    assertEquals(2, ch.receive());
  }

  @Test
  void publisher_deliversOnlyWhatIsRequested_andCancelWithdrawsTheReceive() throws Exception {
    Channel<Integer> ch = Channel.unlimited();
    for (int i = 0; i < 5; i++) {
      ch.send(i);
    }
    List<Integer> got = new CopyOnWriteArrayList<>();
    CompletableFuture<java.util.concurrent.Flow.Subscription> subscribed =
        new CompletableFuture<>();
    ch.asPublisher()
        .subscribe(
            new java.util.concurrent.Flow.Subscriber<Integer>() {
              @Override
              public void onSubscribe(java.util.concurrent.Flow.Subscription s) {
                subscribed.complete(s);
              }

              @Override
              public void onNext(Integer item) {
                got.add(item);
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onComplete() {}
            });
    java.util.concurrent.Flow.Subscription s = done(subscribed);
    s.request(2);
    assertEquals(List.of(0, 1), got);
    assertEquals(3, ch.size());
    s.request(4);
    assertEquals(List.of(0, 1, 2, 3, 4), got);
    assertEquals(1, waiting(ch)); // the fourth request's receive
    s.cancel();
    assertEquals(0, waiting(ch));
    ch.send(5);
    assertEquals(5, ch.receive());
  }

  // ---------------------------------------------------------------- bad input

  @Test
  void badInput_failsWithAClearMessage() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Channel.buffered(-1));
    assertEquals("capacity must be 0 or more, was -1", e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Channel.builder().overflow(Overflow.DROP_OLDEST).build());
    assertTrue(e.getMessage().contains("DROP_OLDEST needs a bounded capacity"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> Channel.builder().unlimited().overflow(Overflow.DROP_NEWEST).build());
    Channel<String> ch = Channel.unlimited();
    assertThrows(NullPointerException.class, () -> ch.send(null));
    assertThrows(NullPointerException.class, () -> ch.trySend(null));
    assertThrows(NullPointerException.class, () -> ch.sendAsync(null));
    assertThrows(IllegalArgumentException.class, () -> ch.receive(Duration.ofSeconds(-1)));
    assertThrows(NullPointerException.class, () -> ch.close(null));
  }

  @Test
  void toString_showsTheState() throws Exception {
    Channel<Integer> ch = Channel.buffered(4);
    ch.send(1);
    assertEquals("Channel[capacity=4, size=1, waiting=0]", ch.toString());
    ch.close();
    assertTrue(ch.toString().endsWith(", closed]"), ch.toString());
    assertEquals(
        "[1]", ch.stream().map(String::valueOf).collect(Collectors.joining(",", "[", "]")));
  }
}
