package dev.jeton;

import static dev.jeton.TestThreads.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.jeton.internal.engine.Spin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The engine's brief spin as channels use it: each channel's score learns from its waiters. */
class ChannelSpinTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  /** A channel's blocked receiver spins by its channel's score, and records its spin there. */
  @Test
  void aReceiverWhoseSpinRunsOut_lowersItsChannelsScore() throws Exception {
    FifoChannel<String> channel = (FifoChannel<String>) Channel.<String>rendezvous();
    Thread receiver = threads.start(() -> assertEquals("x", channel.receive()));
    awaitTrue(() -> receiver.getState() == Thread.State.WAITING, "the receiver to park");
    assertEquals(Spin.Score.CAP - 1, channel.briefSpin.score());
    channel.send("x");
    threads.joinAll();
  }

  /** So does a blocked select, on each of its channels. */
  @Test
  void aSelectWhoseSpinRunsOut_lowersEachOfItsChannelsScores() throws Exception {
    FifoChannel<String> a = (FifoChannel<String>) Channel.<String>rendezvous();
    FifoChannel<String> b = (FifoChannel<String>) Channel.<String>rendezvous();
    Thread selecting =
        threads.start(
            () -> assertEquals("x", Select.select(a.onReceive(v -> v), b.onReceive(v -> v))));
    awaitTrue(() -> selecting.getState() == Thread.State.WAITING, "the select to park");
    assertEquals(Spin.Score.CAP - 1, a.briefSpin.score());
    assertEquals(Spin.Score.CAP - 1, b.briefSpin.score());
    b.send("x");
    threads.joinAll();
  }
}
