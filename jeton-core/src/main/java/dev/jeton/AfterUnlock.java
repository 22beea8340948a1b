package dev.jeton;

import dev.jeton.internal.engine.WaitNode;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What an operation decided under a channel's lock and does once it is released. A select moves one
 * from channel to channel as it tries its clauses ({@link #moveTo}): a try that cannot happen
 * decides nothing, so only the winning channel's decisions are ever in it.
 *
 * <p>Confined to the thread of one operation (or one select), so its fields are plain.
 */
final class AfterUnlock {
  private ChannelQueue channel;
  @Nullable WaitNode deliveries;
  @Nullable List<Object> undelivered;

  AfterUnlock(ChannelQueue channel) {
    this.channel = channel;
  }

  /** Makes this the AfterUnlock of {@code c}'s next operation; it must hold nothing yet. */
  AfterUnlock moveTo(ChannelQueue c) {
    if (deliveries != null || undelivered != null) {
      throw new IllegalStateException("a channel decided something in a try that failed");
    }
    channel = c;
    return this;
  }

  void toDeliver(@Nullable WaitNode chain) {
    deliveries = WaitNode.concat(deliveries, chain);
  }

  void undelivered(Object value) {
    if (undelivered == null) {
      undelivered = new ArrayList<>();
    }
    undelivered.add(value);
  }

  void run() {
    channel.finish(this);
  }
}
