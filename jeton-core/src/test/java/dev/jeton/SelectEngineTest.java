package dev.jeton;

import static dev.jeton.TestThreads.done;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How a select plugs into the channels' wait-queue engine: what runs once the channels' locks are
 * released (deliveries and the undelivered hook), the delivery trampoline, and what a finished
 * select leaves behind.
 */
class SelectEngineTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  // ---------------------------------------------------------------- the trampoline

  @Test
  void asyncSelects_thatSelectAgainInTheirCallbacks_runInConstantStack() throws Exception {
    Channel<Integer> ch = Channel.rendezvous();
    Channel<Integer> other = Channel.rendezvous();
    int steps = 100_000;
    List<CompletableFuture<Integer>> chain = new ArrayList<>(steps);
    for (int i = 0; i < steps; i++) {
      chain.add(
          Select.selectAsync(ch.onReceive(v -> v), other.onReceive(v -> -1))
              .thenApply(
                  v -> {
                    // hands the next value to the select queued behind this one
                    var unused =
                        Select.selectAsync(
                            ch.onSend(v + 1, () -> true), Select.otherwise(() -> false));
                    return v;
                  }));
    }
    assertTrue(ch.trySend(0)); // recursion would overflow the 1 MB stack long before 100,000
    for (int i = 0; i < steps; i++) {
      assertEquals(i, done(chain.get(i)));
    }
    assertEquals(0, ((FifoChannel<?>) ch).queueLength());
    assertEquals(0, ((FifoChannel<?>) other).queueLength(), "every losing clause withdrawn");
  }
}
