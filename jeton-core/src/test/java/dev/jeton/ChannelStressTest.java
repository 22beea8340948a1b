package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Producers and consumers using every form (blocking, timed so short that many give up,
 * asynchronous and cancelled at once now and then, try), with their threads interrupted at random,
 * and the channel closed at the end or cancelled midway: every value given to a send ends exactly
 * once, received or undelivered; each consumer receives each producer's values in the order they
 * were sent; every future completes; no thread is left blocked and nothing is left queued.
 *
 * <p>Each run is bounded by its count of values; the seeds are fixed per thread.
 */
class ChannelStressTest {
  private static final int PRODUCERS = 4;
  private static final int CONSUMERS = 4;
  private static final int VALUES = 10_000;

  @RegisterExtension final TestThreads threads = new TestThreads();

  @ParameterizedTest(name = "capacity {0}, cancelled midway {1}")
  @CsvSource({"0, false", "4, false", "2147483647, false", "0, true", "4, true"})
  void everyValueEndsExactlyOnce_inOrderPerProducer(int capacity, boolean cancelMidway)
      throws Exception {
    Run run = new Run(capacity);
    AtomicInteger producing = new AtomicInteger(PRODUCERS);
    List<Thread> workers = new ArrayList<>();
    for (int p = 0; p < PRODUCERS; p++) {
      int producer = p;
      workers.add(
          threads.start(
              () -> {
                try {
                  run.produce(producer, cancelMidway);
                } finally {
                  if (producing.decrementAndGet() == 0) {
                    run.channel.close();
                  }
                }
              }));
    }
    for (int c = 0; c < CONSUMERS; c++) {
      int consumer = c;
      workers.add(threads.start(() -> run.consume(consumer)));
    }
    SplittableRandom random = new SplittableRandom(99);
    while (producing.get() > 0) { // interrupts only while producing: the drain must end
      workers.get(random.nextInt(workers.size())).interrupt();
      Thread.sleep(0, 200_000);
    }
    threads.joinAll();
    run.check();
  }

  private static final class Run {
    final Queue<Integer> undelivered = new ConcurrentLinkedQueue<>();
    final Channel<Integer> channel;
    final Queue<Integer> sent = new ConcurrentLinkedQueue<>();
    final List<List<Integer>> received = new CopyOnWriteArrayList<>();
    final Queue<CompletableFuture<?>> futures = new ConcurrentLinkedQueue<>();

    Run(int capacity) {
      Channel.Builder<Integer> b = Channel.<Integer>builder().onUndelivered(undelivered::add);
      channel =
          capacity == Integer.MAX_VALUE ? b.unlimited().build() : b.capacity(capacity).build();
    }

    void produce(int producer, boolean cancelMidway) {
      SplittableRandom random = new SplittableRandom(producer);
      for (int seq = 0; seq < VALUES; seq++) {
        int v = producer * 1_000_000 + seq;
        if (cancelMidway && producer == 0 && seq == VALUES / 2) {
          channel.cancel();
        }
        try {
          switch (random.nextInt(4)) {
            case 0:
              sent.add(v);
              channel.send(v);
              break;
            case 1:
              sent.add(v);
              channel.send(v, Duration.ofNanos(random.nextInt(100_000)));
              break;
            case 2:
              sent.add(v);
              CompletableFuture<Void> f = channel.sendAsync(v);
              futures.add(f);
              if (random.nextInt(4) == 0) {
                f.cancel(false);
              }
              break;
            default:
              if (channel.trySend(v)) {
                sent.add(v);
              }
          }
        } catch (InterruptedException | TimeoutException e) {
          // given up: the value went to onUndelivered
        } catch (ChannelClosedException e) {
          return; // cancelled
        }
      }
      Thread.interrupted(); // an interrupt that came after the last send
    }

    void consume(int consumer) {
      SplittableRandom random = new SplittableRandom(100 + consumer);
      List<Integer> got = new ArrayList<>();
      received.add(got);
      try {
        for (; ; ) {
          Thread.interrupted(); // one left over from a call that kept its value
          try {
            switch (random.nextInt(4)) {
              case 0:
                Optional<Integer> v = channel.receiveOrClosed();
                if (v.isEmpty()) {
                  return;
                }
                got.add(v.get());
                break;
              case 1:
                got.add(channel.receive(Duration.ofNanos(random.nextInt(100_000))));
                break;
              case 2:
                CompletableFuture<Integer> f = channel.receiveAsync();
                futures.add(f);
                if (random.nextInt(4) == 0 && f.cancel(false)) {
                  break;
                }
                got.add(f.join());
                break;
              default:
                channel.tryReceive().ifPresent(got::add);
            }
          } catch (InterruptedException | TimeoutException e) {
            // gave up without a value
          } catch (CompletionException e) {
            if (e.getCause() instanceof ChannelClosedException) {
              return;
            }
            throw e;
          }
        }
      } catch (ChannelClosedException closed) {
        // ended
      }
    }

    void check() {
      assertEquals(0, ((FifoChannel<?>) channel).queueLength(), channel::toString);
      assertEquals(0, channel.size(), channel::toString);
      for (CompletableFuture<?> f : futures) {
        assertTrue(f.isDone(), "a future still pending");
      }
      Map<Integer, Integer> ends = new HashMap<>();
      List<String> violations = new ArrayList<>();
      for (List<Integer> got : received) {
        int[] last = new int[PRODUCERS];
        java.util.Arrays.fill(last, -1);
        for (int v : got) {
          ends.merge(v, 1, Integer::sum);
          int producer = v / 1_000_000;
          int seq = v % 1_000_000;
          if (seq <= last[producer]) {
            violations.add("producer " + producer + ": " + seq + " after " + last[producer]);
          }
          last[producer] = seq;
        }
      }
      undelivered.forEach(v -> ends.merge(v, 1, Integer::sum));
      for (int v : sent) {
        int n = ends.getOrDefault(v, 0);
        if (n != 1) {
          violations.add(v + " ended " + n + " times");
        }
      }
      if (ends.size() != sent.size()) {
        violations.add(ends.size() - sent.size() + " values ended that were never sent");
      }
      TestThreads.assertNoViolations(violations);
    }
  }
}
