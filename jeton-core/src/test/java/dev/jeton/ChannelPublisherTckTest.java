package dev.jeton;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowPublisherVerification;

/**
 * The Reactive Streams TCK (its TestNG tests, run by the JUnit Platform's TestNG engine) on {@link
 * Channel#asPublisher()}: a publisher of n elements is a channel fed n values by a send loop that
 * continues from each send's completion, then closed; a failed one is a channel closed with a
 * cause.
 */
public class ChannelPublisherTckTest extends FlowPublisherVerification<Long> {
  public ChannelPublisherTckTest() {
    super(new TestEnvironment(2_000L, 200L)); // hang guards for a loaded 2-core machine
  }

  @Override
  public Flow.Publisher<Long> createFlowPublisher(long elements) {
    Channel<Long> channel = Channel.buffered(16);
    feed(channel, 0, elements);
    return channel.asPublisher();
  }

  /** Sends {@code from} to {@code to - 1}, then closes: a loop while sends complete at once. */
  private static void feed(Channel<Long> channel, long from, long to) {
    for (long i = from; i < to; i++) {
      CompletableFuture<Void> sent = channel.sendAsync(i);
      if (!sent.isDone()) {
        long next = i + 1;
        sent.thenRun(() -> feed(channel, next, to));
        return;
      }
    }
    channel.close();
  }

  @Override
  public Flow.Publisher<Long> createFailedFlowPublisher() {
    Channel<Long> channel = Channel.rendezvous();
    channel.close(new IllegalStateException("failed by the test"));
    return channel.asPublisher();
  }
}
