package dev.jeton.bench;

import dev.jeton.Channel;
import dev.jeton.bench.LockWaiterMemory.AsyncCase;
import dev.jeton.bench.LockWaiterMemory.BlockingCase;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.function.Function;
import java.util.function.Supplier;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.intrinsics.IntrinsicsKt;
import kotlinx.coroutines.channels.BufferOverflow;
import kotlinx.coroutines.channels.ChannelKt;
import org.jspecify.annotations.Nullable;
import org.openjdk.jol.info.GraphLayout;

/**
 * Bytes of heap a channel retains per buffered value and per waiting sender and receiver, measured
 * with JOL: Jeton's {@code Channel} beside kotlinx's, the JDK's blocking queues and (built on JDK
 * 21+, {@code JoxChannelMemory}) jox's. Not a JMH benchmark: run it from the benchmarks jar,
 *
 * <pre>
 * java -Djdk.attach.allowAttachSelf=true -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.ChannelMemory
 * </pre>
 *
 * <p><b>Buffered values</b>: {@value #VALUES} sends, without waiting, of one and the same value
 * into a channel of capacity {@value #VALUES} (or an unlimited one). Per value = (retained size of
 * the channel holding them - retained size of the same channel empty) / {@value #VALUES}: what the
 * channel adds per value, the value itself (one object) aside. A channel that allocates its buffer
 * up front ({@code ArrayBlockingQueue}) grows by nothing: its cost is in the empty size, which the
 * table shows beside.
 *
 * <p><b>Waiting senders and receivers</b>: {@link LockWaiterMemory}'s method (that is, {@link
 * QueuedWaiterMemory}'s) with the channel as the lock. Senders wait on a rendezvous channel (an
 * {@code ArrayBlockingQueue} of 1 that is full), receivers on an empty one. Asynchronous ({@value
 * QueuedWaiterMemory#ASYNC_WAITERS}): Jeton's {@code sendAsync}/{@code receiveAsync}; kotlinx's
 * suspend {@code send}/{@code receive}, their continuation a {@link KotlinxLimiter.ResumingFuture}
 * (the size of a plain future), measured with JOL's {@code GraphLayout} over the channel and the
 * futures. Blocking ({@value QueuedWaiterMemory#BLOCKED_THREADS} parked platform threads): Jeton's
 * {@code send}/{@code receive}, {@code SynchronousQueue} and {@code ArrayBlockingQueue}'s {@code
 * put}/{@code take}, and kotlinx's suspend {@code send}/{@code receive} in a {@code runBlocking} on
 * each thread (ChannelBenchmark's fair shape: what is counted then includes the coroutine and its
 * event loop, which exist only while the thread waits), measured by the walk from the channel with
 * {@code Thread} objects left out.
 */
public final class ChannelMemory {
  static final int VALUES = 10_000;

  /** What every send passes: one object (not one of Integer's cached ones), counted once. */
  static final Integer VALUE = Integer.valueOf(1_000_000);

  private static final int WAITERS = QueuedWaiterMemory.ASYNC_WAITERS;
  private static final Object SUSPENDED = IntrinsicsKt.getCOROUTINE_SUSPENDED();

  private ChannelMemory() {}

  /**
   * {@value #VALUES} values sent into {@code channel} by {@code trySend} (each must be accepted)
   * and then taken back out by {@code tryReceive} (each must be there).
   */
  record BufferedCase(String label, Object channel, TrySend trySend, TryReceive tryReceive) {}

  interface TrySend {
    boolean send(Integer value);
  }

  interface TryReceive {
    @Nullable Object receive() throws InterruptedException;
  }

  /** Every case of one run; {@code JoxChannelMemory} adds jox's to these. */
  static final class Cases {
    final List<BufferedCase> buffered = new ArrayList<>();
    final List<AsyncCase> async = new ArrayList<>();
    final List<BlockingCase> blocking = new ArrayList<>();
  }

  public static void main(String[] args) throws Exception {
    run(ChannelMemory.class, cases());
  }

  static Cases cases() {
    Cases cases = new Cases();
    for (Channel<Integer> ch :
        List.of(Channel.<Integer>buffered(VALUES), Channel.<Integer>unlimited())) {
      String label = ch.capacity() == VALUES ? "jeton buffered" : "jeton unlimited";
      cases.buffered.add(
          new BufferedCase(label, ch, ch::trySend, () -> ch.tryReceive().orElse(null)));
    }
    cases.buffered.add(queue("abq", new ArrayBlockingQueue<>(VALUES)));
    cases.buffered.add(queue("lbq", new LinkedBlockingQueue<>()));
    for (int capacity : new int[] {VALUES, kotlinx.coroutines.channels.Channel.UNLIMITED}) {
      kotlinx.coroutines.channels.Channel<Integer> ch = kotlinx(capacity);
      String label = capacity == VALUES ? "kotlinx buffered" : "kotlinx unlimited";
      cases.buffered.add(
          new BufferedCase(
              label,
              ch,
              v -> KotlinxChannels.trySendOk(ch, v),
              () -> KotlinxChannels.tryReceiveOrNull(ch)));
    }

    Channel<Integer> jetonSend = Channel.rendezvous();
    cases.async.add(
        async(
            "jeton send", jetonSend, () -> jetonSend.sendAsync(VALUE), jetonReceiveAll(jetonSend)));
    Channel<Integer> jetonReceive = Channel.rendezvous();
    cases.async.add(
        async(
            "jeton receive",
            jetonReceive,
            jetonReceive::receiveAsync,
            sendAll(jetonReceive::trySend)));
    kotlinx.coroutines.channels.Channel<Integer> kotlinxSend = kotlinx(0);
    cases.async.add(
        async(
            "kotlinx send",
            kotlinxSend,
            () -> suspended(f -> kotlinxSend.send(VALUE, f)),
            receiveAll(() -> KotlinxChannels.tryReceiveOrNull(kotlinxSend))));
    kotlinx.coroutines.channels.Channel<Integer> kotlinxReceive = kotlinx(0);
    cases.async.add(
        async(
            "kotlinx receive",
            kotlinxReceive,
            () -> suspended(f -> kotlinxReceive.receive(continuation(f))),
            sendAll(v -> KotlinxChannels.trySendOk(kotlinxReceive, v))));

    Channel<Integer> jeton = Channel.rendezvous();
    cases.blocking.add(blocking("jeton send", jeton, () -> jeton.send(VALUE), jeton::receive));
    Channel<Integer> jeton2 = Channel.rendezvous();
    cases.blocking.add(
        blocking("jeton receive", jeton2, jeton2::receive, () -> jeton2.send(VALUE)));
    SynchronousQueue<Integer> sync = new SynchronousQueue<>();
    cases.blocking.add(blocking("sync send", sync, () -> sync.put(VALUE), sync::take));
    SynchronousQueue<Integer> sync2 = new SynchronousQueue<>();
    cases.blocking.add(blocking("sync receive", sync2, sync2::take, () -> sync2.put(VALUE)));
    ArrayBlockingQueue<Integer> full = new ArrayBlockingQueue<>(1, false, List.of(VALUE));
    cases.blocking.add(blocking("abq(1) send", full, () -> full.put(VALUE), full::take));
    ArrayBlockingQueue<Integer> empty = new ArrayBlockingQueue<>(1);
    cases.blocking.add(blocking("abq(1) receive", empty, empty::take, () -> empty.put(VALUE)));
    kotlinx.coroutines.channels.Channel<Integer> kSend = kotlinx(0);
    cases.blocking.add(
        blocking(
            "kotlinx send",
            kSend,
            () -> KotlinxChannels.sendOne(kSend, VALUE),
            () -> KotlinxChannels.receiveOne(kSend)));
    kotlinx.coroutines.channels.Channel<Integer> kReceive = kotlinx(0);
    cases.blocking.add(
        blocking(
            "kotlinx receive",
            kReceive,
            () -> KotlinxChannels.receiveOne(kReceive),
            () -> KotlinxChannels.sendOne(kReceive, VALUE)));
    return cases;
  }

  // ------------------------------------------------------------------ building cases

  static BufferedCase queue(String label, BlockingQueue<Integer> q) {
    return new BufferedCase(label, q, q::offer, q::poll);
  }

  private static kotlinx.coroutines.channels.Channel<Integer> kotlinx(int capacity) {
    return ChannelKt.Channel(capacity, BufferOverflow.SUSPEND, null);
  }

  private static Runnable jetonReceiveAll(Channel<Integer> ch) {
    return receiveAll(() -> ch.tryReceive().orElse(null));
  }

  /** An async case whose futures complete once {@code letGo} has run; nothing to give back. */
  static AsyncCase async(
      String label, Object channel, Supplier<CompletableFuture<?>> request, Runnable letGo) {
    return new AsyncCase(label, channel, request, letGo, grant -> {});
  }

  /** A blocking case: each thread runs {@code waiter}; {@code counterpart} runs once for each. */
  static BlockingCase blocking(
      String label,
      Object channel,
      QueuedWaiterMemory.BlockingAcquire waiter,
      QueuedWaiterMemory.BlockingAcquire counterpart) {
    return new BlockingCase(
        label,
        channel,
        waiter,
        null, // channels do not count their waiters: the threads' being parked is checked
        () -> {
          try {
            for (int i = 0; i < QueuedWaiterMemory.BLOCKED_THREADS; i++) {
              counterpart.run();
            }
          } catch (InterruptedException e) {
            throw new IllegalStateException("interrupted while letting the waiters go", e);
          }
        });
  }

  /** Lets {@value QueuedWaiterMemory#ASYNC_WAITERS} queued senders go: a value from each. */
  static Runnable receiveAll(TryReceive tryReceive) {
    return () -> {
      for (int i = 0; i < WAITERS; i++) {
        try {
          if (tryReceive.receive() == null) {
            throw new IllegalStateException("no sender was waiting");
          }
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      }
    };
  }

  /** Lets {@value QueuedWaiterMemory#ASYNC_WAITERS} queued receivers go: a value to each. */
  static Runnable sendAll(TrySend trySend) {
    return () -> {
      for (int i = 0; i < WAITERS; i++) {
        if (!trySend.send(VALUE)) {
          throw new IllegalStateException("no receiver was waiting");
        }
      }
    };
  }

  /** A suspend call, given a future as its continuation: the future, which must be pending. */
  private static CompletableFuture<?> suspended(
      Function<KotlinxLimiter.ResumingFuture, @Nullable Object> call) {
    KotlinxLimiter.ResumingFuture future = new KotlinxLimiter.ResumingFuture();
    if (call.apply(future) != SUSPENDED) {
      throw new IllegalStateException("a kotlinx send or receive did not suspend");
    }
    return future;
  }

  /** A future as the continuation of a suspend call that returns a value it ignores. */
  @SuppressWarnings("unchecked")
  private static <T> Continuation<T> continuation(KotlinxLimiter.ResumingFuture future) {
    return (Continuation<T>) (Continuation<?>) future;
  }

  // ------------------------------------------------------------------ measuring

  static void run(Class<?> program, Cases cases) throws Exception {
    long plainFuture = QueuedWaiterMemory.start(program);

    List<String[]> rows = new ArrayList<>();
    for (BufferedCase c : cases.buffered) {
      rows.add(buffered(c));
    }
    QueuedWaiterMemory.print(
        new String[] {"channel", "values", "empty B", "holding B", "B/value"}, rows);
    System.out.println();
    System.out.println(
        "buffered: retained growth of the channel per value (one shared value object), JOL"
            + " GraphLayout; 'empty' is the same channel before the first send.");
    System.out.println();

    List<String[]> waiters = new ArrayList<>();
    List<String> breakdowns = new ArrayList<>();
    for (AsyncCase c : cases.async) {
      waiters.add(LockWaiterMemory.async(c, plainFuture, breakdowns));
    }
    for (BlockingCase c : cases.blocking) {
      waiters.add(LockWaiterMemory.blocking(c, breakdowns));
    }
    LockWaiterMemory.printWaiters("channel", plainFuture, waiters, breakdowns);
  }

  static String[] buffered(BufferedCase c) throws InterruptedException {
    long empty = GraphLayout.parseInstance(c.channel()).totalSize();
    for (int i = 0; i < VALUES; i++) {
      if (!c.trySend().send(VALUE)) {
        throw new IllegalStateException(c.label() + ": send " + i + " was refused");
      }
    }
    long holding = GraphLayout.parseInstance(c.channel()).totalSize();
    for (int i = 0; i < VALUES; i++) {
      if (c.tryReceive().receive() == null) {
        throw new IllegalStateException(c.label() + ": value " + i + " is missing");
      }
    }
    return new String[] {
      c.label(),
      Integer.toString(VALUES),
      Long.toString(empty),
      Long.toString(holding),
      QueuedWaiterMemory.format((double) (holding - empty) / VALUES)
    };
  }
}
