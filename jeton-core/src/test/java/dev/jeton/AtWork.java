package dev.jeton;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * What stress tests measure inside the work itself: how much is at work now (in weight), the most
 * ever at work at once, and how many pieces of work ran.
 */
final class AtWork {
  final AtomicInteger atWork = new AtomicInteger();
  final AtomicInteger worst = new AtomicInteger();
  final AtomicInteger ran = new AtomicInteger();

  void begin(int weight) {
    ran.incrementAndGet();
    worst.accumulateAndGet(atWork.addAndGet(weight), Math::max);
  }

  void begin() {
    begin(1);
  }

  void end(int weight) {
    atWork.addAndGet(-weight);
  }

  void end() {
    end(1);
  }
}
