package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jspecify.annotations.Nullable;

/**
 * Select over two channels, model-checked: biased selects (receiving from either, sending to
 * either) among plain sends, receives and closes are linearizable against a sequential model in
 * which a waiting select stands in both channels' queues and leaves both when one serves it; and,
 * with unbiased selects and futures cancelled as they race with matches, every value sent ends
 * exactly once, received or undelivered, and no value of a select's losing send ends at all.
 */
public class SelectLincheckTest {
  /**
   * Interleavings per scenario: a select's every step is traced, so 400 (the other checks') take
   * minutes on the CI machine; 100 of each of 10 scenarios (150 took 105 s for the two checks on
   * the idle CI machine, over CI's budget with the other model checks).
   */
  private static final int INTERLEAVINGS = 100;

  @LincheckRun
  void linearizable_againstTheSequentialModel() {
    TestThreads.checkLinearizable(Linearizability.class, Model.class, INTERLEAVINGS);
  }

  @LincheckRun
  void givingUp_neverLosesOrDuplicatesAValue() {
    TestThreads.checkSettles(Cancellation.class, INTERLEAVINGS);
  }

  /**
   * Both channels hold one value. Every answer is decided at the call: a request that waits answers
   * nothing about its outcome, which another thread may bring about before the caller looks (so
   * "served at once" would not be an answer of the call). What it changes, the other operations
   * see: a waiting select receive takes the next value sent to either channel, a waiting select
   * send is the value the next receive of either channel gets.
   */
  public static class Linearizability {
    private final List<Channel<Integer>> channels =
        List.of(Channel.buffered(1), Channel.buffered(1));

    @Operation
    public boolean trySend(
        @Param(gen = IntGen.class, conf = "0:1") int ch,
        @Param(gen = IntGen.class, conf = "1:3") int v) {
      return channels.get(ch).trySend(v);
    }

    /** Accepted (at once or queued), or refused: a queued send fails only by a cancel. */
    @Operation
    public boolean sendAsync(
        @Param(gen = IntGen.class, conf = "0:1") int ch,
        @Param(gen = IntGen.class, conf = "1:3") int v) {
      return !channels.get(ch).sendAsync(v).isCompletedExceptionally();
    }

    @Operation
    public int tryReceive(@Param(gen = IntGen.class, conf = "0:1") int ch) {
      return channels.get(ch).tryReceive().orElse(-1);
    }

    @Operation
    public void receiveAsync(@Param(gen = IntGen.class, conf = "0:1") int ch) {
      var unused = channels.get(ch).receiveOrClosedAsync();
    }

    /** The value from channel 0, 100 + the value from channel 1, -1 for "0 ended", -9 none. */
    @Operation
    public int selectReceiveOrDefault() {
      SelectClause<Integer>[] c = receiveClauses();
      return Select.selectBiasedAsync(c[0], c[1], Select.otherwise(() -> -9)).join();
    }

    @Operation
    public void selectReceive() {
      var unused = Select.selectBiasedAsync(List.of(receiveClauses()));
    }

    /** The channel the value went to, -1 refused (channel 0, or full 0 and closed 1), -9 none. */
    @Operation
    public int selectSendOrDefault(@Param(gen = IntGen.class, conf = "1:3") int v) {
      CompletableFuture<Integer> f =
          Select.selectBiasedAsync(
              channels.get(0).onSend(v, () -> 0),
              channels.get(1).onSend(v, () -> 1),
              Select.otherwise(() -> -9));
      return f.isCompletedExceptionally() ? -1 : f.join();
    }

    /** Accepted (at once or queued), or refused: a queued select send fails only by a cancel. */
    @Operation
    public boolean selectSend(@Param(gen = IntGen.class, conf = "1:3") int v) {
      return !Select.selectBiasedAsync(
              channels.get(0).onSend(v, () -> 0), channels.get(1).onSend(v, () -> 1))
          .isCompletedExceptionally();
    }

    @SuppressWarnings("unchecked")
    private SelectClause<Integer>[] receiveClauses() {
      return new SelectClause[] {
        channels.get(0).onReceiveOrClosed(o -> o.orElse(-1)),
        channels.get(1).onReceiveOrClosed(o -> o.map(v -> 100 + v).orElse(-101))
      };
    }

    @Operation
    public boolean close(@Param(gen = IntGen.class, conf = "0:1") int ch) {
      return channels.get(ch).close();
    }
  }

  /** The sequential specification: each channel's buffer and queue of waiters. */
  public static class Model {
    /** A waiting send or receive; a select's stands in both queues at once. */
    private static final class Waiter {
      final boolean send;
      final int value;

      Waiter(boolean send, int value) {
        this.send = send;
        this.value = value;
      }
    }

    private static final int CAPACITY = 1;
    private final List<ArrayDeque<Integer>> buffers =
        List.of(new ArrayDeque<>(), new ArrayDeque<>());
    private final List<ArrayDeque<Waiter>> queues = List.of(new ArrayDeque<>(), new ArrayDeque<>());
    private final boolean[] closed = new boolean[2];

    public boolean trySend(int ch, int v) {
      return offer(ch, v) == 0;
    }

    public boolean sendAsync(int ch, int v) {
      int r = offer(ch, v);
      if (r == 1) {
        queues.get(ch).add(new Waiter(true, v));
      }
      return r != -1;
    }

    public int tryReceive(int ch) {
      Integer v = poll(ch);
      return v == null ? -1 : v;
    }

    public void receiveAsync(int ch) {
      if (poll(ch) == null && !closed[ch]) {
        queues.get(ch).add(new Waiter(false, 0));
      }
    }

    public int selectReceiveOrDefault() {
      for (int ch = 0; ch < 2; ch++) {
        Integer v = poll(ch);
        if (v != null) {
          return ch == 0 ? v : 100 + v;
        }
        if (closed[ch]) {
          return ch == 0 ? -1 : -101;
        }
      }
      return -9;
    }

    public void selectReceive() {
      if (selectReceiveOrDefault() == -9) {
        Waiter w = new Waiter(false, 0);
        queues.get(0).add(w);
        queues.get(1).add(w);
      }
    }

    public int selectSendOrDefault(int v) {
      for (int ch = 0; ch < 2; ch++) {
        int r = offer(ch, v);
        if (r != 1) {
          return r == 0 ? ch : -1;
        }
      }
      return -9;
    }

    public boolean selectSend(int v) {
      int r = selectSendOrDefault(v);
      if (r == -9) {
        Waiter w = new Waiter(true, v);
        queues.get(0).add(w);
        queues.get(1).add(w);
      }
      return r != -1;
    }

    public boolean close(int ch) {
      if (closed[ch]) {
        return false;
      }
      closed[ch] = true;
      Waiter w;
      while ((w = queues.get(ch).peek()) != null && !w.send) {
        take(ch); // waiting receivers end: "closed", a select's wins with it
      }
      return true;
    }

    /** 0 accepted, 1 full, -1 closed. */
    private int offer(int ch, int v) {
      if (closed[ch]) {
        return -1;
      }
      Waiter w = queues.get(ch).peek();
      if (w != null && !w.send) {
        take(ch);
        return 0;
      }
      if (buffers.get(ch).size() < CAPACITY) {
        buffers.get(ch).add(v);
        return 0;
      }
      return 1;
    }

    /** The next value, or null. */
    private @Nullable Integer poll(int ch) {
      Integer v = buffers.get(ch).poll();
      Waiter w = queues.get(ch).peek();
      if (w != null && w.send) {
        take(ch);
        if (v == null) {
          return w.value;
        }
        buffers.get(ch).add(w.value);
      }
      return v;
    }

    /** Takes the head waiter of {@code ch} out of every queue it stands in. */
    private void take(int ch) {
      Waiter w = queues.get(ch).poll();
      queues.get(1 - ch).removeIf(other -> other == w);
    }
  }

  /**
   * Plain and select sends of distinct values, plain and select receives, unbiased, each thread
   * cancelling its latest future, racing with matches and closes. Afterwards (both channels
   * cancelled) every value sent is in exactly one of: received, undelivered; a select's send counts
   * as sent only if its future says it won.
   */
  public static class Cancellation {
    private final Queue<Integer> undelivered = new ConcurrentLinkedQueue<>();
    private final List<Channel<Integer>> channels =
        List.of(
            Channel.<Integer>builder().capacity(1).onUndelivered(undelivered::add).build(),
            Channel.<Integer>builder().onUndelivered(undelivered::add).build());
    private final AtomicInteger nextValue = new AtomicInteger();
    private final Queue<Integer> sent = new ConcurrentLinkedQueue<>();
    private final Queue<Integer> received = new ConcurrentLinkedQueue<>();
    private final Queue<CompletableFuture<Optional<Integer>>> receives =
        new ConcurrentLinkedQueue<>();
    private final Map<Integer, CompletableFuture<Integer>> selectSends = new ConcurrentHashMap<>();

    @SuppressWarnings("unchecked")
    private final @Nullable CompletableFuture<?>[] latest =
        new CompletableFuture[TestThreads.LINCHECK_THREADS + 2];

    @Operation
    public void sendAsync(
        @Param(gen = ThreadIdGen.class) int thread,
        @Param(gen = IntGen.class, conf = "0:1") int ch) {
      int v = nextValue.incrementAndGet();
      sent.add(v);
      latest[thread] = channels.get(ch).sendAsync(v);
    }

    @Operation
    public void selectSend(@Param(gen = ThreadIdGen.class) int thread) {
      int v = nextValue.incrementAndGet();
      CompletableFuture<Integer> f =
          Select.selectAsync(
              channels.get(0).onSend(v, () -> 0), channels.get(1).onSend(v, () -> 1));
      selectSends.put(v, f);
      latest[thread] = f;
    }

    @Operation
    public void selectReceive(@Param(gen = ThreadIdGen.class) int thread) {
      CompletableFuture<Optional<Integer>> f =
          Select.selectAsync(
              channels.get(0).onReceiveOrClosed(o -> o), channels.get(1).onReceiveOrClosed(o -> o));
      receives.add(f);
      latest[thread] = f;
    }

    @Operation
    public void tryReceive(@Param(gen = IntGen.class, conf = "0:1") int ch) {
      channels.get(ch).tryReceive().ifPresent(received::add);
    }

    @Operation
    public boolean cancelLatest(@Param(gen = ThreadIdGen.class) int thread) {
      CompletableFuture<?> f = latest[thread];
      latest[thread] = null;
      return f != null && f.cancel(false);
    }

    @Operation
    public boolean close(@Param(gen = IntGen.class, conf = "0:1") int ch) {
      return channels.get(ch).close();
    }

    @Validate
    public void everyValueEndsExactlyOnce() {
      channels.forEach(Channel::cancel);
      for (CompletableFuture<Optional<Integer>> f : receives) {
        if (!f.isDone()) {
          throw new IllegalStateException("a select still pending after cancel: " + channels);
        }
        if (!f.isCompletedExceptionally()) {
          f.join().ifPresent(received::add);
        }
      }
      selectSends.forEach(
          (v, f) -> {
            if (!f.isDone()) {
              throw new IllegalStateException("a select send still pending after cancel");
            }
            if (!f.isCompletedExceptionally()) {
              sent.add(v);
            }
          });
      // A losing select clause's value is not in `sent`: ending anywhere, it fails the check.
      ChannelLincheckTest.everyValueEndsOnce(sent, received, undelivered);
      for (Channel<Integer> c : channels) {
        if (((FifoChannel<?>) c).queueLength() != 0) {
          throw new IllegalStateException("a waiter left in " + c);
        }
      }
    }
  }
}
