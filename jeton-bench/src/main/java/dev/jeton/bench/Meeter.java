package dev.jeton.bench;

import dev.jeton.Barrier;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One of the barriers compared, of a fixed number of parties: the adapter that lets {@link
 * BarrierBenchmark} be written once.
 *
 * <p>As with {@link Limiter}, one JMH fork loads one implementation, so calls through this
 * interface are monomorphic and inlined. Never run with {@code -f 0}.
 */
interface Meeter {
  /** {@code dev.jeton.Barrier.create(parties)}, awaited with the blocking {@code await()}. */
  String JETON = "jeton";

  /**
   * The same Jeton barrier, awaited with {@code awaitAsync().join()}: the asynchronous path (a
   * future per arrival, completed by the last arriver) driven from a blocking thread.
   */
  String JETON_ASYNC = "jeton-async";

  /** {@code new CyclicBarrier(parties)}. */
  String CYCLIC_BARRIER = "cyclic-barrier";

  /** {@code new Phaser(parties)}, awaited with {@code arriveAndAwaitAdvance()}. */
  String PHASER = "phaser";

  /** Makes the barrier named {@code impl}, one of the constants above, of {@code parties}. */
  static Meeter create(String impl, int parties) {
    return switch (impl) {
      case JETON -> new Jeton(parties);
      case JETON_ASYNC -> new JetonAsync(parties);
      case CYCLIC_BARRIER -> new Cyclic(parties);
      case PHASER -> new Phased(parties);
      default -> throw new IllegalArgumentException("unknown implementation: " + impl);
    };
  }

  /**
   * Arrives and waits (blocking the thread) for the other parties, or returns at once if the
   * barrier has been {@linkplain #open opened}.
   */
  void await() throws InterruptedException;

  /**
   * Releases every party waiting now, and makes every later {@link #await} return at once: the end
   * of a run, when parties stop arriving. Never blocks; called once, by one thread.
   */
  void open() throws InterruptedException;

  /** Jeton's {@link Barrier}, blocking. */
  final class Jeton implements Meeter {
    private final Barrier barrier;

    Jeton(int parties) {
      barrier = Barrier.create(parties);
    }

    @Override
    public void await() throws InterruptedException {
      var unused = barrier.await();
    }

    @Override
    public void open() {
      openJeton(barrier);
    }

    /**
     * Jeton's {@code breakBarrier} starts a clean generation, so it cannot keep parties from
     * waiting; leaving one party does: each {@code arriveAndDeregister} drops a party, and trips
     * the generation once the parties waiting are all that is left, so at 1 party no one waits.
     * Only the opener deregisters, so the loop ends.
     */
    static void openJeton(Barrier barrier) {
      while (barrier.parties() > 1) {
        var unused = barrier.arriveAndDeregister();
      }
    }
  }

  /** Jeton's {@link Barrier}, through {@code awaitAsync()} and {@code join()}. */
  final class JetonAsync implements Meeter {
    private final Barrier barrier;

    JetonAsync(int parties) {
      barrier = Barrier.create(parties);
    }

    @Override
    public void await() {
      var unused = barrier.awaitAsync().join();
    }

    @Override
    public void open() {
      Jeton.openJeton(barrier);
    }
  }

  /** {@link CyclicBarrier}, whose broken state, once opened, lets everyone through at once. */
  final class Cyclic implements Meeter {
    private final CyclicBarrier barrier;
    private volatile boolean opened;

    Cyclic(int parties) {
      barrier = new CyclicBarrier(parties);
    }

    @Override
    public void await() throws InterruptedException {
      try {
        barrier.await();
      } catch (BrokenBarrierException e) {
        if (!opened) {
          throw new IllegalStateException("the CyclicBarrier broke before the end of the run", e);
        }
      }
    }

    /**
     * A CyclicBarrier has no public way to break it, but a timeout breaks it and stays broken until
     * {@code reset()}, which is never called: an arrival with a zero timeout breaks it at once,
     * unless it is the last arrival and trips the generation instead, so loop.
     */
    @Override
    public void open() throws InterruptedException {
      opened = true;
      while (!barrier.isBroken()) {
        try {
          barrier.await(0, TimeUnit.NANOSECONDS);
        } catch (TimeoutException | BrokenBarrierException expected) {
          // broken, by this arrival or by the previous one
        }
      }
    }
  }

  /** {@link Phaser}, whose termination lets everyone through at once. */
  final class Phased implements Meeter {
    private final Phaser phaser;

    Phased(int parties) {
      phaser = new Phaser(parties);
    }

    @Override
    public void await() {
      var unused = phaser.arriveAndAwaitAdvance(); // negative once terminated
    }

    @Override
    public void open() {
      phaser.forceTermination();
    }
  }
}
