package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Selects under stress, over three channels (rendezvous, buffered(1), buffered(4) with a completion
 * executor): producer threads send with every plain form and with selects of send clauses (blocking
 * and async, biased and unbiased, with a timeout, a default or neither), and with selects that send
 * to one channel or receive from another; consumer threads receive with every plain form and with
 * selects of receive clauses; async select loops (each select made in the previous one's callback)
 * send and receive too. Threads are interrupted at random, async requests cancelled now or later,
 * loops cancelled from outside, and at the end the channels are closed, or cancelled (one of them
 * midway).
 *
 * <p>What must hold: every value given to a channel (by a plain send, or by a send clause that won)
 * ends exactly once, received or reported undelivered, on the channel it was given to; a send
 * clause that did not win (another clause won, the select gave up, or it failed on a closed
 * channel) never delivered its value and never reported it; each consumer gets each producer's
 * values on a channel in the order they were given; a blocking call that returns normally after an
 * interrupt reached it has its interrupt status set; every future completes, no thread is left
 * blocked, and nothing is left queued.
 *
 * <p>A value is a long: producer, channel and a per-producer sequence number, so that a value
 * received on the wrong channel is seen.
 */
class SelectStressTest {
  private static final int PRODUCERS = 3;
  private static final int CONSUMERS = 3;
  private static final int PRODUCER_LOOPS = 2;
  private static final int CONSUMER_LOOPS = 2;
  private static final int OPERATIONS = 6_000;
  private static final int LOOP_STEPS = 6_000;
  private static final long GUARD_MILLIS = TimeUnit.SECONDS.toMillis(TestThreads.GUARD_SECONDS);

  /** How the run ends. */
  enum Ending {
    /** Every channel closed once the producers are done; consumers drain them. */
    CLOSE,
    /** The buffered(1) channel cancelled while the producers run; the others closed. */
    CANCEL_ONE_MIDWAY,
    /** Every channel cancelled once the producers are done, with requests still queued. */
    CANCEL_ALL
  }

  @ParameterizedTest
  @EnumSource(Ending.class)
  void everyGivenValueEndsOnce_losingClausesNever_inOrder_nothingLeft(Ending ending)
      throws Exception {
    Run run = new Run();
    try {
      run.go(ending);
    } finally {
      run.completions.shutdownNow();
    }
    run.check();
  }

  /** What a select made of its winning clause. */
  private record Won(int kind, int channel, long value) {
    static final int SENT = 0;
    static final int RECEIVED = 1;
    static final int CLOSED = 2;
    static final int NONE = 3; // the timeout or the default

    static final Won NOTHING = new Won(NONE, -1, 0);
  }

  private static long value(int producer, int channel, long seq) {
    return ((long) producer << 40) | ((long) channel << 32) | seq;
  }

  private static int producerOf(long v) {
    return (int) (v >>> 40);
  }

  private static int channelOf(long v) {
    return (int) ((v >>> 32) & 0xff);
  }

  private static long seqOf(long v) {
    return v & 0xffff_ffffL;
  }

  /** A value as a message names it. */
  private static String name(long v) {
    return "value " + seqOf(v) + " of producer " + producerOf(v) + " to channel " + channelOf(v);
  }

  private static final class Run {
    final ExecutorService completions = Executors.newFixedThreadPool(2);
    final List<Channel<Long>> channels = new ArrayList<>();
    final Set<Long> given = ConcurrentHashMap.newKeySet();
    final Queue<Long> undelivered = new ConcurrentLinkedQueue<>();

    /** What each consumer (thread, loop, or producer that received in a select) got, in order. */
    final List<List<Long>> received = new CopyOnWriteArrayList<>();

    /** Every future made, or the one that runs its bookkeeping callback. */
    final Queue<CompletableFuture<?>> futures = new ConcurrentLinkedQueue<>();

    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final AtomicInteger interruptedAfterWin = new AtomicInteger();
    final AtomicInteger interruptedOut = new AtomicInteger();
    final AtomicInteger loopCancels = new AtomicInteger();
    final List<Worker> workers = new ArrayList<>();
    final List<Loop> loops = new ArrayList<>();

    Run() {
      channels.add(channel(0, Channel.<Long>builder()));
      channels.add(channel(1, Channel.<Long>builder().capacity(1)));
      channels.add(channel(2, Channel.<Long>builder().capacity(4).completionExecutor(completions)));
    }

    private Channel<Long> channel(int index, Channel.Builder<Long> builder) {
      return builder
          .onUndelivered(
              v -> {
                if (channelOf(v) != index) {
                  violations.add(name(v) + " reported undelivered by channel " + index);
                }
                undelivered.add(v);
              })
          .build();
    }

    void go(Ending ending) throws Exception {
      AtomicInteger producing = new AtomicInteger(PRODUCERS + PRODUCER_LOOPS);
      for (int p = 0; p < PRODUCERS; p++) {
        workers.add(new Worker(this, p, true, producing));
      }
      for (int c = 0; c < CONSUMERS; c++) {
        workers.add(new Worker(this, 100 + c, false, producing));
      }
      for (int p = 0; p < PRODUCER_LOOPS; p++) {
        loops.add(new Loop(this, PRODUCERS + p, true, producing));
      }
      for (int c = 0; c < CONSUMER_LOOPS; c++) {
        loops.add(new Loop(this, 200 + c, false, producing));
      }
      workers.forEach(w -> w.thread.start());
      loops.forEach(Loop::start);

      // Interrupts and cancels at random while the producers run; a cancel midway.
      SplittableRandom random = new SplittableRandom(7);
      boolean cancelledMidway = false;
      long rounds = 0;
      while (producing.get() > 0) {
        Worker w = workers.get(random.nextInt(workers.size()));
        w.interrupt();
        if (random.nextInt(4) == 0) {
          loops.get(random.nextInt(loops.size())).cancelCurrent();
        }
        if (ending == Ending.CANCEL_ONE_MIDWAY && !cancelledMidway && ++rounds == 2_000) {
          channels.get(1).cancel();
          cancelledMidway = true;
        }
        LockSupport.parkNanos(200_000);
      }
      if (ending == Ending.CANCEL_ONE_MIDWAY && !cancelledMidway) {
        channels.get(1).cancel();
      }
      for (Channel<Long> ch : channels) {
        if (ending == Ending.CANCEL_ALL) {
          ch.cancel();
        } else {
          ch.close();
        }
      }
      for (Worker w : workers) {
        w.thread.join(GUARD_MILLIS);
        if (w.thread.isAlive()) {
          throw new AssertionError(w.thread.getName() + " still runs\n" + threadDump());
        }
      }
      for (Loop loop : loops) {
        try {
          loop.finished.get(TestThreads.GUARD_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
          throw new AssertionError(
              "loop " + loop.id + " never finished: " + loop.current + "\n" + threadDump(), e);
        }
      }
      for (CompletableFuture<?> f : futures) {
        try {
          f.get(TestThreads.GUARD_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
          throw new AssertionError("a future never completed: " + f + "\n" + threadDump(), e);
        } catch (Exception expected) {
          // cancelled or failed: its callback has run
        }
      }
    }

    /** The channels a request may use now: those not closed (not ended, for a receiver). */
    List<Integer> open(boolean receiving) {
      List<Integer> open = new ArrayList<>();
      for (int i = 0; i < channels.size(); i++) {
        ChannelQueue q = (ChannelQueue) channels.get(i);
        if (receiving ? !q.hasEnded() : !q.isClosed()) {
          open.add(i);
        }
      }
      return open;
    }

    boolean allEnded() {
      return open(true).isEmpty();
    }

    /** {@code count} distinct channels of {@code open}, at random. */
    static List<Integer> pick(List<Integer> open, int count, SplittableRandom random) {
      List<Integer> left = new ArrayList<>(open);
      List<Integer> picked = new ArrayList<>();
      while (picked.size() < count && !left.isEmpty()) {
        picked.add(left.remove(random.nextInt(left.size())));
      }
      return picked;
    }

    /** A timeout clause (a short one), a default clause, or none. */
    static @Nullable SelectClause<Won> fallback(SplittableRandom random, boolean mayDefault) {
      switch (random.nextInt(mayDefault ? 4 : 3)) {
        case 0:
          return Select.onTimeout(Duration.ofNanos(random.nextInt(200_000)), () -> Won.NOTHING);
        case 1:
          return mayDefault ? Select.otherwise(() -> Won.NOTHING) : null;
        default:
          return null;
      }
    }

    SelectClause<Won> sendClause(int channel, long v) {
      return channels.get(channel).onSend(v, () -> new Won(Won.SENT, channel, v));
    }

    SelectClause<Won> receiveClause(int channel, boolean orClosed) {
      Channel<Long> ch = channels.get(channel);
      return orClosed
          ? ch.onReceiveOrClosed(
              v ->
                  v.map(x -> new Won(Won.RECEIVED, channel, x))
                      .orElse(new Won(Won.CLOSED, channel, 0)))
          : ch.onReceive(x -> new Won(Won.RECEIVED, channel, x));
    }

    static CompletableFuture<Won> selectAsync(List<SelectClause<Won>> clauses, boolean biased) {
      return biased ? Select.selectBiasedAsync(clauses) : Select.selectAsync(clauses);
    }

    /**
     * Books the outcome of a select: a sent value is given, a received one goes to {@code got}. A
     * failure is the select giving up or a closed channel; anything else is a violation.
     */
    void book(@Nullable Won won, @Nullable Throwable failure, List<Long> got, String who) {
      if (failure != null) {
        Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
        if (!(cause instanceof CancellationException
            || cause instanceof ChannelClosedException
            || cause instanceof InterruptedException)) {
          violations.add(who + ": a select failed with " + cause);
        }
        return;
      }
      switch (java.util.Objects.requireNonNull(won).kind()) {
        case Won.SENT:
          given.add(won.value());
          break;
        case Won.RECEIVED:
          receivedOn(won.channel(), won.value(), got);
          break;
        default:
          break;
      }
    }

    void receivedOn(int channel, long v, List<Long> got) {
      if (channelOf(v) != channel) {
        violations.add(name(v) + " received from channel " + channel);
      }
      got.add(v);
    }

    void check() {
      for (int i = 0; i < channels.size(); i++) {
        Channel<Long> ch = channels.get(i);
        assertEquals(0, ((FifoChannel<?>) ch).queueLength(), () -> "queued: " + ch);
        assertEquals(0, ch.size(), () -> "buffered: " + ch);
      }
      Map<Long, Integer> ends = new HashMap<>();
      for (List<Long> got : received) {
        Map<Long, Long> last = new HashMap<>(); // (producer, channel) -> seq
        for (long v : got) {
          ends.merge(v, 1, Integer::sum);
          long stream = v >>> 32;
          Long before = last.put(stream, seqOf(v));
          if (before != null && before >= seqOf(v)) {
            violations.add(
                "producer "
                    + producerOf(v)
                    + " on channel "
                    + channelOf(v)
                    + ": "
                    + seqOf(v)
                    + " received after "
                    + before);
          }
        }
      }
      undelivered.forEach(v -> ends.merge(v, 1, Integer::sum));
      for (long v : given) {
        int n = ends.getOrDefault(v, 0);
        if (n != 1) {
          violations.add(name(v) + " given, ended " + n + " times");
        }
      }
      ends.forEach(
          (v, n) -> {
            if (!given.contains(v)) {
              violations.add(name(v) + " never given (a losing clause's?), ended " + n + " times");
            }
          });
      TestThreads.assertNoViolations(violations);
      System.out.printf(
          "SelectStressTest: %d values given, %d undelivered, %d interrupted out, %d returned"
              + " interrupted after a win, %d loop cancels won%n",
          given.size(),
          undelivered.size(),
          interruptedOut.get(),
          interruptedAfterWin.get(),
          loopCancels.get());
    }
  }

  /** A platform thread that produces (and receives in some selects) or consumes. */
  private static final class Worker {
    final Run run;
    final int id;
    final boolean producer;
    final Thread thread;
    final SplittableRandom random;
    final List<Long> got = new ArrayList<>();
    final List<CompletableFuture<?>> pending = new ArrayList<>();
    long seq;

    /** Interrupts sent to this thread; guarded by `this`, changed with each interrupt. */
    private int interrupts;

    Worker(Run run, int id, boolean producer, AtomicInteger producing) {
      this.run = run;
      this.id = id;
      this.producer = producer;
      this.random = new SplittableRandom(id);
      run.received.add(got);
      this.thread =
          new Thread(
              () -> {
                try {
                  if (producer) {
                    try {
                      for (int i = 0; i < OPERATIONS && !run.open(false).isEmpty(); i++) {
                        once();
                        cancelSomePending();
                      }
                    } finally {
                      producing.decrementAndGet();
                    }
                  } else {
                    while (!run.allEnded()) {
                      once();
                    }
                  }
                } catch (Throwable e) {
                  run.violations.add("worker " + id + " failed: " + e);
                  e.printStackTrace();
                }
              },
              (producer ? "producer-" : "consumer-") + id);
      thread.setDaemon(true);
    }

    synchronized void interrupt() {
      interrupts++;
      thread.interrupt();
    }

    /** A blocking call, checked: if an interrupt reached it and it returned, the status is set. */
    interface Blocking<V> {
      V call() throws Exception;
    }

    <V> V blocking(Blocking<V> call) throws Exception {
      int before;
      synchronized (this) {
        Thread.interrupted();
        before = interrupts;
      }
      V v;
      try {
        v = call.call();
      } catch (InterruptedException e) {
        run.interruptedOut.incrementAndGet();
        throw e;
      }
      synchronized (this) {
        if (interrupts != before) {
          if (Thread.interrupted()) {
            run.interruptedAfterWin.incrementAndGet();
          } else {
            run.violations.add(
                thread.getName() + ": interrupted during a call that returned, status clear");
          }
        }
      }
      return v;
    }

    long next(int channel) {
      return value(id, channel, seq++);
    }

    /**
     * One request, sending ({@code producer}) or receiving, on the channels open to it; gives up
     * quietly where it may: a plain send's value then went to the hook, a select's stays ours.
     */
    void once() throws Exception {
      List<Integer> open = run.open(!producer);
      if (open.isEmpty()) {
        return;
      }
      int c = open.get(random.nextInt(open.size()));
      try {
        if (producer) {
          produce(open, c);
        } else {
          consume(open, c);
        }
      } catch (InterruptedException | TimeoutException | ChannelClosedException e) {
        // gave up, or the channel ended
      } catch (CompletionException e) {
        if (!(e.getCause() instanceof ChannelClosedException)) {
          throw e;
        }
      }
    }

    void produce(List<Integer> open, int c) throws Exception {
      Channel<Long> ch = run.channels.get(c);
      switch (random.nextInt(9)) {
        case 0:
          {
            long v = next(c);
            run.given.add(v);
            blocking(
                () -> {
                  ch.send(v);
                  return null;
                });
            break;
          }
        case 1:
          {
            long v = next(c);
            run.given.add(v);
            blocking(
                () -> {
                  ch.send(v, Duration.ofNanos(random.nextInt(100_000)));
                  return null;
                });
            break;
          }
        case 2:
          {
            long v = next(c);
            run.given.add(v);
            CompletableFuture<Void> f = ch.sendAsync(v);
            run.futures.add(f);
            keepOrCancel(f);
            break;
          }
        case 3:
          {
            long v = next(c);
            if (ch.trySend(v)) {
              run.given.add(v);
            }
            break;
          }
        case 4:
        case 5:
          selectSends(open, false);
          break;
        case 6:
          selectSends(open, true);
          break;
        default:
          sendOrReceive(open);
      }
    }

    /** A select of send clauses on 1 to 3 channels, blocking or async. */
    void selectSends(List<Integer> open, boolean async) throws Exception {
      List<SelectClause<Won>> clauses = new ArrayList<>();
      for (int c : Run.pick(open, 1 + random.nextInt(3), random)) {
        clauses.add(run.sendClause(c, next(c)));
      }
      SelectClause<Won> fallback = Run.fallback(random, true);
      if (fallback != null) {
        clauses.add(random.nextInt(clauses.size() + 1), fallback);
      }
      boolean biased = random.nextBoolean();
      if (async) {
        CompletableFuture<Won> f = Run.selectAsync(clauses, biased);
        run.futures.add(f.whenComplete((won, e) -> run.book(won, e, List.of(), "async send")));
        keepOrCancel(f);
        return;
      }
      Won won = blocking(() -> biased ? Select.selectBiased(clauses) : Select.select(clauses));
      run.book(won, null, got, thread.getName());
    }

    /** A blocking select that sends to one channel or receives from another. */
    void sendOrReceive(List<Integer> open) throws Exception {
      List<Integer> two = Run.pick(open, 2, random);
      if (two.size() < 2 || ((ChannelQueue) run.channels.get(two.get(1))).hasEnded()) {
        return;
      }
      List<SelectClause<Won>> clauses = new ArrayList<>();
      clauses.add(run.sendClause(two.get(0), next(two.get(0))));
      clauses.add(run.receiveClause(two.get(1), random.nextBoolean()));
      SelectClause<Won> fallback = Run.fallback(random, true);
      if (fallback != null) {
        clauses.add(fallback);
      }
      boolean biased = random.nextBoolean();
      Won won = blocking(() -> biased ? Select.selectBiased(clauses) : Select.select(clauses));
      run.book(won, null, got, thread.getName());
    }

    void consume(List<Integer> open, int c) throws Exception {
      Channel<Long> ch = run.channels.get(c);
      switch (random.nextInt(8)) {
        case 0:
          {
            Optional<Long> v = blocking(ch::receiveOrClosed);
            v.ifPresent(x -> run.receivedOn(c, x, got));
            break;
          }
        case 1:
          {
            long v = blocking(() -> ch.receive(Duration.ofNanos(random.nextInt(100_000))));
            run.receivedOn(c, v, got);
            break;
          }
        case 2:
          {
            CompletableFuture<Long> f = ch.receiveAsync();
            run.futures.add(f);
            if (random.nextInt(4) == 0 && f.cancel(false)) {
              break;
            }
            run.receivedOn(c, f.join(), got);
            break;
          }
        case 3:
          ch.tryReceive().ifPresent(x -> run.receivedOn(c, x, got));
          break;
        default:
          selectReceives(open, random.nextInt(3) == 0);
      }
    }

    /** A select of receive clauses on 1 to 3 channels, blocking or async (joined at once). */
    void selectReceives(List<Integer> open, boolean async) throws Exception {
      List<SelectClause<Won>> clauses = new ArrayList<>();
      for (int c : Run.pick(open, 1 + random.nextInt(3), random)) {
        clauses.add(run.receiveClause(c, random.nextBoolean()));
        if (random.nextInt(8) == 0) {
          clauses.add(run.receiveClause(c, random.nextBoolean())); // two clauses, one channel
        }
      }
      SelectClause<Won> fallback = Run.fallback(random, !async);
      if (fallback != null) {
        clauses.add(random.nextInt(clauses.size() + 1), fallback);
      }
      boolean biased = random.nextBoolean();
      if (async) {
        CompletableFuture<Won> f = Run.selectAsync(clauses, biased);
        run.futures.add(f);
        if (random.nextInt(4) == 0 && f.cancel(false)) {
          return;
        }
        Won won;
        try {
          won = f.join();
        } catch (CompletionException e) {
          run.book(null, e, got, thread.getName());
          return;
        }
        run.book(won, null, got, thread.getName());
        return;
      }
      Won won = blocking(() -> biased ? Select.selectBiased(clauses) : Select.select(clauses));
      run.book(won, null, got, thread.getName());
    }

    /** Cancels {@code f} now, later (one of the pending ones, now and then), or never. */
    void keepOrCancel(CompletableFuture<?> f) {
      switch (random.nextInt(6)) {
        case 0:
          f.cancel(false);
          break;
        case 1:
        case 2:
          pending.add(f);
          break;
        default:
          break;
      }
    }

    void cancelSomePending() {
      if (!pending.isEmpty() && random.nextInt(3) == 0) {
        pending.remove(random.nextInt(pending.size())).cancel(false);
      }
    }
  }

  /**
   * An async select loop: each select is made when the previous one completed (in a loop while they
   * complete at once, so that the stack stays flat), sending {@link #LOOP_STEPS} times or receiving
   * until every channel has ended. The test cancels its select in flight now and then.
   */
  private static final class Loop {
    final Run run;
    final int id;
    final boolean producer;
    final AtomicInteger producing;
    final SplittableRandom random;
    final List<Long> got = new ArrayList<>();
    final CompletableFuture<Void> finished = new CompletableFuture<>();
    volatile @Nullable CompletableFuture<Won> current;
    int steps;
    long seq;

    Loop(Run run, int id, boolean producer, AtomicInteger producing) {
      this.run = run;
      this.id = id;
      this.producer = producer;
      this.producing = producing;
      this.random = new SplittableRandom(id);
      run.received.add(got);
    }

    void start() {
      if (producer) {
        finished.whenComplete((v, e) -> producing.decrementAndGet());
      }
      go();
    }

    void cancelCurrent() {
      CompletableFuture<Won> f = current;
      if (f != null && f.cancel(false)) {
        run.loopCancels.incrementAndGet();
      }
    }

    /** Selects until one waits; its completion goes on. */
    void go() {
      try {
        for (; ; ) {
          CompletableFuture<Won> f = step();
          if (f == null) {
            finished.complete(null);
            return;
          }
          current = f;
          if (!f.isDone()) {
            f.whenComplete(
                (won, e) -> {
                  run.book(won, e, got, "loop " + id);
                  go();
                });
            return;
          }
          Won won = null;
          Throwable failure = null;
          try {
            won = f.join();
          } catch (CancellationException | CompletionException e) {
            failure = e;
          }
          run.book(won, failure, got, "loop " + id);
        }
      } catch (Throwable e) {
        run.violations.add("loop " + id + " failed: " + e);
        finished.completeExceptionally(e);
      }
    }

    /** The next select, or null when the loop is done. */
    @Nullable CompletableFuture<Won> step() {
      List<Integer> open = run.open(!producer);
      if (open.isEmpty() || (producer && steps++ == LOOP_STEPS)) {
        return null;
      }
      List<SelectClause<Won>> clauses = new ArrayList<>();
      for (int c : Run.pick(open, 1 + random.nextInt(3), random)) {
        clauses.add(producer ? run.sendClause(c, value(id, c, seq++)) : run.receiveClause(c, true));
      }
      if (random.nextInt(3) == 0) {
        clauses.add(Select.onTimeout(Duration.ofNanos(random.nextInt(200_000)), () -> Won.NOTHING));
      }
      return Run.selectAsync(clauses, random.nextBoolean());
    }
  }

  private static String threadDump() {
    StringBuilder dump = new StringBuilder();
    Thread.getAllStackTraces()
        .forEach(
            (t, stack) -> {
              dump.append('"').append(t.getName()).append("\" ").append(t.getState()).append('\n');
              for (StackTraceElement e : stack) {
                dump.append("    at ").append(e).append('\n');
              }
            });
    return dump.toString();
  }
}
