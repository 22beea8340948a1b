package dev.jeton.bench;

import com.softwaremill.jox.Channel;
import dev.jeton.bench.ChannelMemory.BufferedCase;
import dev.jeton.bench.ChannelMemory.Cases;

/**
 * {@link ChannelMemory} with jox's channels added (built on JDK 21 and newer only, as jox needs
 * it), so that every channel is measured in one run:
 *
 * <pre>
 * java -Djdk.attach.allowAttachSelf=true -XX:+EnableDynamicAgentLoading \
 *   -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.JoxChannelMemory
 * </pre>
 *
 * <p>jox has no asynchronous send or receive (it is written for virtual threads), so it has rows
 * for buffered values and blocked platform threads only. It has no non-blocking receive either: the
 * buffered values are taken back with {@code receive}, which does not wait when a value is there.
 */
public final class JoxChannelMemory {
  private JoxChannelMemory() {}

  public static void main(String[] args) throws Exception {
    Cases cases = ChannelMemory.cases();
    Channel<Integer> buffered = Channel.newBufferedChannel(ChannelMemory.VALUES);
    Channel<Integer> unlimited = Channel.newUnlimitedChannel();
    cases.buffered.add(
        new BufferedCase("jox buffered", buffered, buffered::trySend, buffered::receive));
    cases.buffered.add(
        new BufferedCase("jox unlimited", unlimited, unlimited::trySend, unlimited::receive));

    Channel<Integer> send = Channel.newRendezvousChannel();
    cases.blocking.add(
        ChannelMemory.blocking(
            "jox send", send, () -> send.send(ChannelMemory.VALUE), send::receive));
    Channel<Integer> receive = Channel.newRendezvousChannel();
    cases.blocking.add(
        ChannelMemory.blocking(
            "jox receive", receive, receive::receive, () -> receive.send(ChannelMemory.VALUE)));
    ChannelMemory.run(JoxChannelMemory.class, cases);
  }
}
