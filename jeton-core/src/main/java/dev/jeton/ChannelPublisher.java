package dev.jeton;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Flow.Publisher} view of a {@link FifoChannel}: each subscription is a receive loop
 * that receives only while its subscriber has demand.
 */
final class ChannelPublisher<T> implements Flow.Publisher<T> {
  private final FifoChannel<T> channel;

  ChannelPublisher(FifoChannel<T> channel) {
    this.channel = channel;
  }

  @Override
  public void subscribe(Flow.Subscriber<? super T> subscriber) {
    Objects.requireNonNull(subscriber, "subscriber"); // Reactive Streams rule 1.9
    Subscription<T> s = new Subscription<>(channel, subscriber);
    subscriber.onSubscribe(s);
    s.drain(); // signals an end that needs no request
  }

  /**
   * One subscription.
   *
   * <p>Overview. Every signal to the subscriber is sent by `drain`, which one thread at a time runs
   * (`wip` counts the calls that came meanwhile, and the running one loops until it has seen them
   * all): so signals are serial (rule 1.3), and a request made inside onNext only adds demand for
   * the loop to see (rule 3.3). At most one receive is in flight (`inFlight`), and one is started
   * only while `requested` is above 0; its completion calls drain. A cancel sets `cancelled` and
   * drains: the loop cancels the receive in flight, which withdraws it, or, if its value was taken
   * already (the cancel is refused), waits for it and gives it to the channel's undelivered hook.
   * Without demand, a receive still starts if the channel has ended (it cannot take a value then),
   * so that the end is signalled without a request. Once `done`, the subscriber reference is
   * dropped (rule 3.13).
   *
   * <p>Field access: `requested`, `cancelled`, `badRequest` are written by any thread; `done`,
   * `subscriber` and `inFlight` only inside drain (`inFlight` is volatile for `cancel` to read,
   * though it only asks drain to act).
   */
  private static final class Subscription<T> implements Flow.Subscription {
    private final FifoChannel<T> channel;
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicLong requested = new AtomicLong();
    private volatile boolean cancelled;
    private volatile @Nullable IllegalArgumentException badRequest;
    private Flow.@Nullable Subscriber<? super T> subscriber;
    private volatile @Nullable CompletableFuture<Optional<T>> inFlight;
    private boolean done;

    Subscription(FifoChannel<T> channel, Flow.Subscriber<? super T> subscriber) {
      this.channel = channel;
      this.subscriber = subscriber;
    }

    @Override
    public void request(long n) {
      if (n <= 0) {
        badRequest =
            new IllegalArgumentException(
                "Reactive Streams rule 3.9: request must be positive, was " + n);
      } else {
        requested.getAndUpdate(r -> r + n < 0 ? Long.MAX_VALUE : r + n);
      }
      drain();
    }

    @Override
    public void cancel() {
      cancelled = true;
      drain();
    }

    void drain() {
      if (wip.getAndIncrement() != 0) {
        return;
      }
      int missed = 1;
      do {
        step();
        missed = wip.addAndGet(-missed);
      } while (missed != 0);
    }

    /** Signals what can be signalled now; runs only inside drain. */
    private void step() {
      while (!done) {
        CompletableFuture<Optional<T>> f = inFlight;
        Flow.Subscriber<? super T> s = Objects.requireNonNull(subscriber);
        if (cancelled || badRequest != null) {
          if (f != null) {
            f.cancel(false);
            if (!f.isDone()) {
              return; // taken already: its completion drains again
            }
            inFlight = null;
            Optional<T> taken = valueOf(f);
            if (taken != null && taken.isPresent()) {
              channel.undelivered(taken.get());
            }
          }
          finish();
          IllegalArgumentException bad = badRequest;
          if (!cancelled && bad != null) {
            s.onError(bad);
          }
          return;
        }
        if (f != null) {
          if (!f.isDone()) {
            return; // its completion drains again
          }
          inFlight = null;
          Optional<T> v;
          try {
            v = f.join();
          } catch (CompletionException | CancellationException e) {
            finish();
            s.onError(e instanceof CompletionException ? e.getCause() : e);
            return;
          }
          if (v.isEmpty()) {
            finish();
            s.onComplete();
            return;
          }
          requested.decrementAndGet();
          s.onNext(v.get());
          continue;
        }
        if (requested.get() == 0 && !channel.hasEnded()) {
          return; // an end needs no demand (rules 1.4, 1.5): the receive then ends at once
        }
        CompletableFuture<Optional<T>> next = channel.receiveOrClosedAsync();
        inFlight = next;
        next.whenComplete((v, e) -> drain()); // at once if done: then the loop goes on
      }
    }

    private void finish() {
      done = true;
      subscriber = null; // rule 3.13
    }

    private static <T> @Nullable Optional<T> valueOf(CompletableFuture<Optional<T>> f) {
      try {
        return f.join();
      } catch (CompletionException | CancellationException e) {
        return null;
      }
    }
  }
}
