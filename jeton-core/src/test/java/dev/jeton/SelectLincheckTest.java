package dev.jeton;

import dev.jeton.contract.LincheckRun;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.BooleanGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jspecify.annotations.Nullable;

/**
 * Select over two rendezvous channels, model-checked: async selects that send to both or receive
 * from both, against each other and against plain sends and receives, any of them cancelled as
 * it races with the matches, with a close and a cancel of the channels. Afterwards (both
 * channels cancelled, so nothing stays queued) every value given ends exactly once, received or
 * undelivered: a plain send's, and a select's send clause's if it won; the value of a send
 * clause that lost, or whose select was cancelled or failed on a closed channel, ends nowhere.
 */
public class SelectLincheckTest {
  /**
   * Many scenarios, few interleavings each (10 of 50, not the locks' 10 of 400): an invocation
   * here costs several times one of the lock checks, and the bugs looked for need the right
   * operations together more than a rare interleaving (the rare ones are SelectRaceTest's). About
   * a minute on a loaded 2-core machine.
   */
  @LincheckRun
  void givingUp_neverLosesOrDuplicatesAValue_andLosingClausesNeverSend() {
    new ModelCheckingOptions()
        .iterations(10)
        .invocationsPerIteration(50)
        .threads(TestThreads.LINCHECK_THREADS)
        .actorsPerThread(2)
        .check(Selects.class);
  }

  /** See the class comment. Values are distinct; -1 stands for "closed" in a receive. */
  public static class Selects {
    private final Queue<Integer> undelivered = new ConcurrentLinkedQueue<>();
    private final Channel<Integer> a =
        Channel.<Integer>builder().onUndelivered(undelivered::add).build();
    private final Channel<Integer> b =
        Channel.<Integer>builder().onUndelivered(undelivered::add).build();
    private final AtomicInteger nextValue = new AtomicInteger();
    private final Queue<Integer> given = new ConcurrentLinkedQueue<>();
    private final Queue<Integer> received = new ConcurrentLinkedQueue<>();

    /** Select sends: a completed one gives the value it returns. */
    private final Queue<CompletableFuture<Integer>> sends = new ConcurrentLinkedQueue<>();

    /** Receives, plain or selects: a completed one received the value it returns, or -1. */
    private final Queue<CompletableFuture<Integer>> receives = new ConcurrentLinkedQueue<>();

    @Operation
    public void selectSend(@Param(gen = BooleanGen.class) boolean cancel) {
      int va = nextValue.incrementAndGet();
      int vb = nextValue.incrementAndGet();
      sends.add(
          cancelled(cancel, Select.selectAsync(a.onSend(va, () -> va), b.onSend(vb, () -> vb))));
    }

    @Operation
    public void selectReceive(@Param(gen = BooleanGen.class) boolean cancel) {
      receives.add(
          cancelled(
              cancel,
              Select.selectAsync(a.onReceive(v -> v), b.onReceiveOrClosed(v -> v.orElse(-1)))));
    }

    /** A plain send, to {@code a} from the even threads, to {@code b} from the odd ones. */
    @Operation
    public void sendAsync(
        @Param(gen = ThreadIdGen.class) int thread, @Param(gen = BooleanGen.class) boolean cancel) {
      int v = nextValue.incrementAndGet();
      given.add(v);
      var unused = cancelled(cancel, (thread % 2 == 0 ? a : b).sendAsync(v));
    }

    /** A plain receive, from {@code b} on the even threads, from {@code a} on the odd ones. */
    @Operation
    public void receiveAsync(
        @Param(gen = ThreadIdGen.class) int thread, @Param(gen = BooleanGen.class) boolean cancel) {
      receives.add(cancelled(cancel, (thread % 2 == 0 ? b : a).receiveAsync()));
    }

    /**
     * {@code f}, cancelled at once if {@code cancel}: the other threads' steps can still come
     * between its queueing and its cancel, which is the race this test is after.
     */
    private static <T> CompletableFuture<T> cancelled(boolean cancel, CompletableFuture<T> f) {
      if (cancel) {
        var unused = f.cancel(false);
      }
      return f;
    }

    @Operation
    public boolean closeB() {
      return b.close();
    }

    @Operation
    public void cancelA() {
      a.cancel();
    }

    @Validate
    public void everyGivenValueEndsExactlyOnce() {
      a.cancel();
      b.cancel();
      for (CompletableFuture<Integer> f : sends) {
        Integer v = outcome(f);
        if (v != null) {
          given.add(v);
        }
      }
      for (CompletableFuture<Integer> f : receives) {
        Integer v = outcome(f);
        if (v != null && v != -1) {
          received.add(v);
        }
      }
      ChannelLincheckTest.everyValueEndsOnce(given, received, undelivered); // a lost clause's: never
      if (((FifoChannel<?>) a).queueLength() + ((FifoChannel<?>) b).queueLength() != 0) {
        throw new IllegalStateException("left queued: " + a + ", " + b);
      }
    }

    /** The value of a completed future; null if it failed or was cancelled. */
    private static @Nullable Integer outcome(CompletableFuture<Integer> f) {
      if (!f.isDone()) {
        throw new IllegalStateException("a future still pending after both channels' cancel");
      }
      return f.isCompletedExceptionally() ? null : f.join();
    }
  }
}
