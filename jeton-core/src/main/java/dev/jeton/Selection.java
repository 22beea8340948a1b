package dev.jeton;

import dev.jeton.internal.engine.Spin;
import dev.jeton.internal.engine.Timer;
import dev.jeton.internal.engine.WaitNode;
import dev.jeton.internal.engine.WithdrawingFuture;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * One run of a {@link Select}: waits on several channels at once, and runs exactly the clause that
 * wins.
 */
final class Selection<R> implements Spin.Awaited, WaitNode.Claimant {
  /*
   * Algorithm (Go's select, on the channels' wait queues)
   *
   * 1. Look. With the locks of all its channels held (taken in ChannelQueue.id order, so that two
   *    selects over the same channels never deadlock), the clauses are tried in random order (in
   *    their own order when biased) with the channel's own locked send or receive, which never
   *    waits: the first that can happen now happens, and wins. Its channel may hand its value to
   *    (or take one from) another select's node, by claiming that select, as any matcher does.
   *    If none can and there is a default clause, it wins.
   * 2. Queue. Still under all the locks, one node per channel clause is queued on its channel,
   *    pointing to this Selection (a WaitNode.Claimant: the engine asks it, and tells it, in place
   *    of a thread or a future). Then every lock is released and what the channels decided
   *    (deliveries, undelivered values) is done: only the winning clause's channel decides
   *    anything, since a clause that cannot happen leaves its channel as it was (but for the
   *    given-up nodes it unlinks, whose values their own withdrawals report). An async select that
   *    queued is tracked by the Scope task running on this thread, if any (ScopeTask.trackWait, as
   *    the engine's WaitQueue.futureOf does for every other wait): the scope's cancel cancels its future, which
   *    gives up below.
   * 3. Wait. A channel that matches one of the nodes first claims it: claimForOutcome on a
   *    select's node is claim() here, a CAS of `state` from OPEN to the clause's index. The first
   *    claim wins; the other nodes cannot be claimed any more, and a channel that meets one
   *    unlinks it. The channel then finishes the node as usual (outcome, status, delivery), and
   *    delivered() wakes the selecting thread, or finishes an async select. A blocking select
   *    spins briefly before it first parks when its channels' scores say it pays (the engine's Spin,
   *    as a channel's waiter does). A timeout, an interrupt or a cancel of the future competes by
   *    the same CAS (to the timeout clause's index, or GIVEN_UP), so exactly one thing ends the
   *    select.
   * 4. Withdraw. The winner (or the thread that gave up) withdraws every other node from its
   *    channel; a node already unlinked is left alone.
   *
   * Invariants:
   *   S1. `state` leaves OPEN at most once: to a clause's index or to GIVEN_UP.
   *   S2. Only the winning clause's channel operation takes effect: a losing send clause's value
   *       was never handed to anyone (its node could not be claimed), a losing receive clause
   *       never took a value. Steps 1 and 2 hold all the locks, so no channel can match a node
   *       of this select before all are queued.
   *   S3. The result is made (the clause's function run) only after the winning node's status
   *       is final, once, by the selecting thread or, for an async select, the thread that
   *       finished it.
   *
   * Field access: `state` is volatile, changed by CAS (STATE) after the nodes are queued;
   * written plainly only in step 1, before anyone else can see the selection. `nodes` is filled
   * in steps 1 and 2, under the channels' locks, and read after they are released (by a
   * channel only under its lock): the locks publish it.
   */

  private static final int OPEN = -1;
  private static final int GIVEN_UP = -2;
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Selection.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final SelectClause<? extends R>[] clauses;

  /** The node of each channel clause, once tried or queued; null for the others. */
  private final @Nullable WaitNode[] nodes;

  /** The thread of a blocking select; null for an async one. */
  private final @Nullable Thread thread;

  /** The future of an async select; null for a blocking one. */
  private final @Nullable SelectFuture<R> future;

  private volatile int state = OPEN;

  private Selection(SelectClause<? extends R>[] clauses, boolean async) {
    this.clauses = clauses;
    this.nodes = new WaitNode[clauses.length];
    this.thread = async ? null : Thread.currentThread();
    this.future = async ? new SelectFuture<>(this) : null;
  }

  /** A blocking select; the clauses are checked. */
  static <R> R select(SelectClause<? extends R>[] clauses, boolean biased)
      throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    long start = System.nanoTime();
    Selection<R> s = new Selection<>(clauses, false);
    int won = s.lookThenQueue(biased);
    if (won == OPEN) {
      won = s.await(start);
    }
    return s.result(won);
  }

  /** An async select; the clauses are checked. */
  static <R> CompletableFuture<R> selectAsync(SelectClause<? extends R>[] clauses, boolean biased) {
    Selection<R> s = new Selection<>(clauses, true);
    SelectFuture<R> f = Objects.requireNonNull(s.future);
    int timeout = s.indexOf(SelectClause.TIMEOUT);
    if (timeout >= 0) {
      f.expectTimer();
    }
    int won = s.lookThenQueue(biased);
    if (won != OPEN) {
      s.finish(won);
      return f;
    }
    ScopeTask.trackWait(f); // step 2: withdrawn if the scope of a task on this thread is cancelled
    if (timeout >= 0) {
      f.setTimer(
          Timer.shared()
              .schedule(
                  () -> {
                    if (STATE.compareAndSet(s, OPEN, timeout)) {
                      s.finish(timeout);
                    }
                  },
                  clauses[timeout].nanos));
    }
    return f;
  }

  /** Steps 1 and 2: the clause that won at once, or OPEN if every channel clause was queued. */
  private int lookThenQueue(boolean biased) {
    ChannelQueue[] channels = channelsInLockOrder();
    @Nullable AfterUnlock after = channels.length == 0 ? null : new AfterUnlock(channels[0]);
    int won = OPEN;
    for (ChannelQueue c : channels) {
      c.lockForSelect();
    }
    try {
      won = look(biased, after);
      if (won == OPEN) {
        queueAll();
      } else {
        state = won; // nobody else can see this selection yet
        for (int i = 0; i < nodes.length; i++) {
          if (i != won) {
            nodes[i] = null; // tried, never queued: nothing to withdraw
          }
        }
      }
    } finally {
      for (int k = channels.length - 1; k >= 0; k--) {
        channels[k].unlockForSelect();
      }
    }
    if (after != null) {
      after.run(); // the winning channel's decisions: a try that failed decided nothing
    }
    return won;
  }

  /** Step 2, all locks held: queues the node of each channel clause on its channel. */
  // The checker cannot follow locks taken in a loop over an array: lookThenQueue holds every
  // channel's lock (lockForSelect) around this call.
  @SuppressWarnings("GuardedBy")
  private void queueAll() {
    for (int i = 0; i < clauses.length; i++) {
      ChannelQueue c = clauses[i].channel;
      if (c != null) {
        c.appendForSelect(Objects.requireNonNull(nodes[i]));
      }
    }
  }

  /**
   * Step 1, all locks held: the index of the clause that happened, or OPEN. {@code after} goes from
   * channel to channel with the tries, and holds what the winning one decided.
   */
  private int look(boolean biased, @Nullable AfterUnlock after) {
    int n = clauses.length;
    int[] order = biased ? null : shuffled(n);
    int first = biased || order != null || n == 1 ? 0 : ThreadLocalRandom.current().nextInt(n);
    for (int j = 0; j < n; j++) {
      int i = order != null ? order[j] : (first + j) % n;
      SelectClause<? extends R> clause = clauses[i];
      ChannelQueue c = clause.channel;
      if (c == null) {
        continue;
      }
      WaitNode w = WaitNode.claimedBy(this, clause.kind);
      w.setOutcome(clause.value);
      nodes[i] = w;
      AfterUnlock decided = Objects.requireNonNull(after).moveTo(c);
      // c's lock is held: lookThenQueue took every channel's lock (lockForSelect) in a loop over
      // an array, which the checker cannot follow.
      @SuppressWarnings("GuardedBy")
      boolean happened = clause.isSend() ? c.sendLocked(w, decided) : c.receiveLocked(w, decided);
      if (happened) {
        return i;
      }
    }
    return indexOf(SelectClause.DEFAULT) >= 0 ? indexOf(SelectClause.DEFAULT) : OPEN;
  }

  /** Step 3 for a blocking select begun at {@code start}: the index of the clause that won. */
  private int await(long start) throws InterruptedException {
    int timeout = indexOf(SelectClause.TIMEOUT);
    long nanos = timeout >= 0 ? clauses[timeout].nanos : 0L;
    boolean interrupted = false;
    briefSpin(); // the loop below sees what happened meanwhile
    int won;
    for (; ; ) {
      won = state;
      if (won >= 0) {
        WaitNode w = nodes[won];
        if (w == null || w.isFinal()) {
          break;
        }
        LockSupport.park(this); // claimed: its channel is finishing it, and will unpark us
      } else if (Thread.interrupted()) {
        if (STATE.compareAndSet(this, OPEN, GIVEN_UP)) {
          withdrawAll(GIVEN_UP);
          throw new InterruptedException();
        }
        interrupted = true; // a channel won first: what it handed over is ours
      } else if (timeout < 0) {
        LockSupport.park(this);
      } else {
        long remaining = nanos - (System.nanoTime() - start);
        if (remaining <= 0L) {
          var unused = STATE.compareAndSet(this, OPEN, timeout); // or a channel won first
        } else {
          LockSupport.parkNanos(this, remaining);
        }
      }
    }
    withdrawAll(won);
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return won;
  }

  /**
   * Yields if the process is crowded (asked once: every channel's score counts on the same census);
   * else spins briefly if any of its channels' scores says spinning pays there, and tells each of
   * them how it went.
   */
  private void briefSpin() {
    boolean asked = false;
    boolean spins = false;
    for (SelectClause<? extends R> clause : clauses) {
      ChannelQueue c = clause.channel;
      if (c == null) {
        continue;
      }
      if (!asked && c.briefSpin.crowded()) {
        Spin.yieldWhilePending(this);
        return;
      }
      asked = true;
      spins |= c.briefSpin.spins();
    }
    if (spins) {
      int steps = Spin.await(this);
      for (SelectClause<? extends R> clause : clauses) {
        ChannelQueue c = clause.channel;
        if (c != null) {
          c.briefSpin.record(steps);
        }
      }
    }
  }

  /** Whether nothing has ended this blocking select yet: no clause won, or its node not final. */
  @Override
  public boolean isPending() {
    int won = state;
    if (won == OPEN) {
      return true;
    }
    WaitNode w = won >= 0 ? nodes[won] : null;
    return w != null && !w.isFinal();
  }

  /** Claims this selection for the clause of {@code node}: the first claim wins (S1). */
  @Override
  public boolean claim(WaitNode node) {
    return state == OPEN && STATE.compareAndSet(this, OPEN, indexOf(node));
  }

  /** A node of this select was delivered by its channel: the winner's ends the wait. */
  @Override
  public void delivered(WaitNode node) {
    int won = state;
    if (won < 0 || nodes[won] != node) {
      return; // a loser, unlinked by a channel that could not claim it
    }
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    } else {
      Objects.requireNonNull(clauses[won].channel).runCompletion(() -> finish(won));
    }
  }

  /** Gives up, for a completion of the async future from outside: false if a clause won. */
  boolean giveUp() {
    int s = state;
    return s == GIVEN_UP || (s == OPEN && STATE.compareAndSet(this, OPEN, GIVEN_UP));
  }

  /** Step 4 and the result, for an async select. */
  private void finish(int won) {
    SelectFuture<R> f = Objects.requireNonNull(future);
    f.stopTimer();
    withdrawAll(won);
    R result;
    try {
      result = result(won);
    } catch (RuntimeException | Error e) {
      f.settleExceptionally(e);
      return;
    }
    f.settle(result);
  }

  /** Step 4: takes every node but the winner's out of its channel. */
  void withdrawAll(int won) {
    for (int i = 0; i < nodes.length; i++) {
      WaitNode w = nodes[i];
      if (w != null && i != won) {
        var unused = Objects.requireNonNull(clauses[i].channel).withdraw(w, WaitNode.CANCELLED);
      }
    }
  }

  /** The select's result once clause {@code won} has won and its node is final (S3). */
  private R result(int won) {
    SelectClause<? extends R> clause = clauses[won];
    WaitNode w = nodes[won];
    if (w == null) {
      return clause.complete(null); // the timeout or the default
    }
    if (w.status() != WaitNode.GRANTED) {
      throw Objects.requireNonNull(clause.channel).failure(w);
    }
    return clause.complete(clause.isSend() ? null : w.outcome());
  }

  private int indexOf(WaitNode node) {
    for (int i = 0; i < nodes.length; i++) {
      if (nodes[i] == node) {
        return i;
      }
    }
    throw new IllegalStateException("not a node of this select: " + node);
  }

  private int indexOf(int kind) {
    for (int i = 0; i < clauses.length; i++) {
      if (clauses[i].kind == kind) {
        return i;
      }
    }
    return -1;
  }

  /** The distinct channels of the clauses, in the order their locks are taken. */
  private ChannelQueue[] channelsInLockOrder() {
    ChannelQueue[] channels = new ChannelQueue[clauses.length];
    int n = 0;
    for (SelectClause<? extends R> clause : clauses) {
      ChannelQueue c = clause.channel;
      if (c == null) {
        continue;
      }
      int at = n;
      while (at > 0 && channels[at - 1].id > c.id) {
        at--;
      }
      if (at > 0 && channels[at - 1] == c) {
        continue; // a second clause on the same channel
      }
      System.arraycopy(channels, at, channels, at + 1, n - at);
      channels[at] = c;
      n++;
    }
    return n == channels.length ? channels : Arrays.copyOf(channels, n);
  }

  /**
   * A random order of {@code n} clauses; null for one or two, which a random first clause orders as
   * well, without an array.
   */
  private static int @Nullable [] shuffled(int n) {
    if (n <= 2) {
      return null;
    }
    ThreadLocalRandom random = ThreadLocalRandom.current();
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      int j = random.nextInt(i + 1);
      order[i] = order[j];
      order[j] = i;
    }
    return order;
  }

  /** The future of an async select: a completion from outside gives the select up. */
  private static final class SelectFuture<R> extends WithdrawingFuture<R> {
    private final Selection<R> selection;

    SelectFuture(Selection<R> selection) {
      this.selection = selection;
    }

    @Override
    protected boolean mayCompleteFromOutside() {
      return selection.giveUp();
    }

    /** Out of every channel's queue before the future completes: its callbacks find it gone. */
    @Override
    protected void withdrawAndComplete(boolean timedOut, Runnable complete) {
      selection.withdrawAll(GIVEN_UP);
      complete.run();
    }
  }
}
