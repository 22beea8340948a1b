package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jspecify.annotations.Nullable;

/**
 * The channel, model-checked: a buffered channel of capacity 1 is linearizable against a sequential
 * model of buffer, dual queue and state under sends, receives (immediate and queued), close and
 * cancel; and, with futures cancelled as they race with matches, every value sent ends exactly
 * once, received or undelivered.
 */
public class ChannelLincheckTest {
  /**
   * Interleavings per scenario: 200 of each of 10, half the locks' 400, to keep CI inside its
   * budget (400 took 140 s for the two checks on the idle CI machine).
   */
  private static final int INTERLEAVINGS = 200;

  @LincheckRun
  void linearizable_againstTheSequentialModel() {
    TestThreads.checkLinearizable(Linearizability.class, Model.class, INTERLEAVINGS);
  }

  @LincheckRun
  void givingUp_neverLosesOrDuplicatesAValue() {
    TestThreads.checkSettles(Cancellation.class, INTERLEAVINGS);
  }

  /**
   * The async forms answer how they were served at the call: 0 at once, 1 queued, -1 refused or
   * ended. A queued request stays queued for the scenario (nobody cancels it here), so the queue is
   * part of the state every operation sees.
   */
  public static class Linearizability {
    private final Channel<Integer> channel = Channel.buffered(1);

    @Operation
    public boolean trySend(@Param(gen = IntGen.class, conf = "1:3") int v) {
      return channel.trySend(v);
    }

    @Operation
    public int sendAsync(@Param(gen = IntGen.class, conf = "1:3") int v) {
      CompletableFuture<Void> f = channel.sendAsync(v);
      return !f.isDone() ? 1 : f.isCompletedExceptionally() ? -1 : 0;
    }

    @Operation
    public int tryReceive() {
      return channel.tryReceive().orElse(-1);
    }

    /** The value received at once, -2 if queued, -1 if ended. */
    @Operation
    public int receiveAsync() {
      CompletableFuture<Optional<Integer>> f = channel.receiveOrClosedAsync();
      return !f.isDone() ? -2 : f.isCompletedExceptionally() ? -1 : f.join().orElse(-1);
    }

    @Operation
    public boolean close() {
      return channel.close();
    }

    @Operation
    public void cancel() {
      channel.cancel();
    }

    @Operation
    public int size() {
      return channel.size();
    }
  }

  /** The sequential specification: buffer, waiting senders' values or a count of receivers. */
  public static class Model {
    private final ArrayDeque<Integer> buffer = new ArrayDeque<>();
    private final ArrayDeque<Integer> senders = new ArrayDeque<>();
    private int receivers;
    private int state; // 0 open, 1 closed, 2 cancelled

    public boolean trySend(int v) {
      return sendAsync(v, false) == 0;
    }

    public int sendAsync(int v) {
      return sendAsync(v, true);
    }

    private int sendAsync(int v, boolean wait) {
      if (state != 0) {
        return -1;
      }
      if (receivers > 0) {
        receivers--;
        return 0;
      }
      if (buffer.isEmpty()) {
        buffer.add(v);
        return 0;
      }
      if (wait) {
        senders.add(v);
        return 1;
      }
      return -1;
    }

    public int tryReceive() {
      Integer v = buffer.poll();
      if (v != null) {
        if (!senders.isEmpty()) {
          buffer.add(senders.poll());
        }
        return v;
      }
      return senders.isEmpty() ? -1 : senders.poll();
    }

    public int receiveAsync() {
      int v = tryReceive();
      if (v != -1) {
        return v;
      }
      if (state == 0) {
        receivers++;
        return -2;
      }
      return -1;
    }

    public boolean close() {
      if (state != 0) {
        return false;
      }
      state = 1;
      receivers = 0;
      return true;
    }

    public void cancel() {
      state = 2;
      buffer.clear();
      senders.clear();
      receivers = 0;
    }

    public int size() {
      return buffer.size();
    }
  }

  /**
   * Sends of distinct values and receives, each thread cancelling its latest future, racing with
   * matches, closes and cancels. Afterwards (the channel cancelled, so nothing stays buffered or
   * queued) every value sent is in exactly one of: received, undelivered.
   */
  public static class Cancellation {
    private final Queue<Integer> undelivered = new ConcurrentLinkedQueue<>();
    private final Channel<Integer> channel =
        Channel.<Integer>builder().capacity(1).onUndelivered(undelivered::add).build();
    private final AtomicInteger nextValue = new AtomicInteger();
    private final Queue<Integer> sent = new ConcurrentLinkedQueue<>();
    private final Queue<Integer> received = new ConcurrentLinkedQueue<>();
    private final Queue<CompletableFuture<Optional<Integer>>> receives =
        new ConcurrentLinkedQueue<>();

    @SuppressWarnings("unchecked")
    private final @Nullable CompletableFuture<?>[] latest =
        new CompletableFuture[TestThreads.LINCHECK_THREADS + 2];

    @Operation
    public void sendAsync(@Param(gen = ThreadIdGen.class) int thread) {
      int v = nextValue.incrementAndGet();
      sent.add(v);
      latest[thread] = channel.sendAsync(v);
    }

    @Operation
    public void trySend() {
      int v = nextValue.incrementAndGet();
      if (channel.trySend(v)) {
        sent.add(v);
      }
    }

    @Operation
    public void receiveAsync(@Param(gen = ThreadIdGen.class) int thread) {
      CompletableFuture<Optional<Integer>> f = channel.receiveOrClosedAsync();
      receives.add(f);
      latest[thread] = f;
    }

    @Operation
    public void tryReceive() {
      channel.tryReceive().ifPresent(received::add);
    }

    @Operation
    public boolean cancelLatest(@Param(gen = ThreadIdGen.class) int thread) {
      CompletableFuture<?> f = latest[thread];
      latest[thread] = null;
      return f != null && f.cancel(false);
    }

    @Operation
    public boolean close() {
      return channel.close();
    }

    @Operation
    public void cancel() {
      channel.cancel();
    }

    @Validate
    public void everyValueEndsExactlyOnce() {
      channel.cancel();
      for (CompletableFuture<Optional<Integer>> f : receives) {
        if (!f.isDone()) {
          throw new IllegalStateException("a receive still pending after cancel: " + channel);
        }
        if (!f.isCompletedExceptionally()) {
          f.join().ifPresent(received::add);
        }
      }
      everyValueEndsOnce(sent, received, undelivered);
    }
  }

  /**
   * Throws unless every value of {@code sent} is in exactly one of {@code received} and {@code
   * undelivered}, once, and nothing else is in either.
   */
  static void everyValueEndsOnce(
      Collection<Integer> sent, Collection<Integer> received, Collection<Integer> undelivered) {
    Map<Integer, Integer> ends = new HashMap<>();
    List<Integer> all = new ArrayList<>(received);
    all.addAll(undelivered);
    for (int v : all) {
      ends.merge(v, 1, Integer::sum);
    }
    for (int v : sent) {
      if (ends.getOrDefault(v, 0) != 1) {
        throw new IllegalStateException(
            v
                + " ended "
                + ends.getOrDefault(v, 0)
                + " times: received "
                + received
                + ", undelivered "
                + undelivered);
      }
    }
    for (int v : ends.keySet()) {
      if (!sent.contains(v)) {
        throw new IllegalStateException(
            v + " was never sent but ended: received " + received + ", undelivered " + undelivered);
      }
    }
  }
}
