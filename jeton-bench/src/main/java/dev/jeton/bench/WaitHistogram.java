package dev.jeton.bench;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * The acquire waits of one thread (platform or virtual) and one kind of acquire ({@code wait} for a
 * mutex or a permit, {@code read.wait} and {@code write.wait} for a read-write lock), in
 * nanoseconds: a wait runs from {@code System.nanoTime()} just before the acquire call to just
 * after it returned.
 *
 * <p>Only its own thread records into it, with no lock and no atomic: {@link WaitTails}, the
 * profiler that reports the tails, clears it before an iteration and reads it after, when JMH has
 * joined every thread of the iteration (which orders those accesses with the thread's). A benchmark
 * records after it has released the lock, so that the recording does not lengthen the time the lock
 * is held; the one clock read inside the critical section is the end of the wait itself.
 *
 * <p>Values are kept to two significant digits (1%), up to a minute: a longer wait is recorded as a
 * minute. Making one registers it with {@link WaitTails} for the rest of the JVM's life, which is
 * one trial (each JMH fork runs one).
 */
final class WaitHistogram {
  static final long LONGEST = TimeUnit.MINUTES.toNanos(1);

  private final String kind;
  private final Histogram waits = new Histogram(LONGEST, 2);

  WaitHistogram(String kind) {
    this.kind = kind;
    WaitTails.register(this);
  }

  /** Records one acquire that waited {@code nanos}. */
  void record(long nanos) {
    waits.recordValue(Math.min(nanos, LONGEST));
  }

  String kind() {
    return kind;
  }

  /** Adds this thread's waits to {@code into}; only while the thread records nothing. */
  void addTo(Histogram into) {
    into.add(waits);
  }

  /** Forgets every wait recorded; only while the thread records nothing. */
  void clear() {
    waits.reset();
  }
}
