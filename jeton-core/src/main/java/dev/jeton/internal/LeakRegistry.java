package dev.jeton.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Arrays;

/**
 * Where the records of watched grants live until their grant is released or collected, and the
 * thread that reports the ones collected unreleased.
 *
 * <p>A phantom reference is enqueued only if it is itself reachable when its referent is found
 * unreachable, so each record needs a home that is not its grant: a slot here. Adding and removing
 * are on the acquire and release paths of every watched grant (every grant, at {@code paranoid}),
 * so neither may cost more than a few nanoseconds:
 *
 * <ul>
 *   <li>The slots are striped by thread id: a thread adds to its own stripe, under that stripe's
 *       spin lock, which another thread rarely holds. It takes the first empty slot from a cursor
 *       on, and doubles the stripe's array when the next 64 are all taken.
 *   <li>Removing empties the record's slot with one compare-and-set, without the lock: only a lock
 *       holder writes a record into an empty slot, and only the record's own release (or the
 *       reporter) empties it.
 *   <li>A removal that races with the array's doubling may empty the old array after the copy, and
 *       leave the record in the new one. It is harmless: the record is marked forgotten first, and
 *       when its grant is collected the reporter gets it, finds it forgotten, and empties its slot
 *       then (by compare-and-set, so that it never empties another record's).
 * </ul>
 *
 * <p>The reporter, one daemon thread for the JVM, waits on the reference queue and hands each
 * record it gets to its tracker. While any primitive watches at {@code paranoid}, it also wakes
 * once a second to refresh a coarse clock, which stamps the records that take no stack: reading
 * {@code System.nanoTime()} costs more than the rest of a record on some machines (25 ns here).
 *
 * <p>Invariants: a record is in at most one slot but for the stale copy above, which only the
 * reporter removes; {@code Stripe.slots} and {@code Stripe.cursor} change only under the stripe's
 * lock; a slot goes from null to a record only under the lock.
 */
final class LeakRegistry {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(LeakRecord[].class);
  private static final long TICK_MILLIS = 1000;

  /** The registry, made (and its reporter started) when the first primitive watches. */
  private static final class Holder {
    static final LeakRegistry INSTANCE = new LeakRegistry();
  }

  static LeakRegistry instance() {
    return Holder.INSTANCE;
  }

  final ReferenceQueue<Object> collected = new ReferenceQueue<>();
  private final Stripe[] stripes;
  private final Thread reporter;
  private volatile long coarseNanos = System.nanoTime();
  private volatile boolean ticking;

  private LeakRegistry() {
    int wanted = Math.min(256, 4 * Runtime.getRuntime().availableProcessors());
    int count = Integer.highestOneBit(Math.max(1, wanted - 1)) << 1;
    stripes = new Stripe[count];
    for (int i = 0; i < count; i++) {
      stripes[i] = new Stripe();
    }
    reporter = new Thread(this::report, "jeton-leak-reporter");
    reporter.setDaemon(true);
    reporter.start();
  }

  /** The clock of records that take no stack: at most a second behind while paranoid watches. */
  long coarseNanos() {
    return coarseNanos;
  }

  /** A primitive watches every grant: keep the coarse clock going from now on. */
  void startTicking() {
    if (!ticking) {
      coarseNanos = System.nanoTime();
      ticking = true;
      reporter.interrupt(); // out of an untimed wait
    }
  }

  void add(LeakRecord record) {
    @SuppressWarnings("deprecation") // Thread.threadId() is JDK 19+; this is the same number
    long id = Thread.currentThread().getId();
    Stripe stripe = stripes[(int) id & (stripes.length - 1)];
    stripe.lock();
    try {
      stripe.place(record);
    } finally {
      stripe.unlock();
    }
  }

  /**
   * Empties {@code record}'s slot if it still holds it: by compare-and-set, so that a second call
   * (a guard unlocked twice) never empties a slot another record has taken since.
   */
  void remove(LeakRecord record) {
    Stripe stripe = record.stripe;
    if (stripe != null) {
      SLOT.compareAndSet(stripe.slots, record.slot, record, null);
    }
  }

  private void report() {
    while (true) {
      try {
        Reference<?> ref = ticking ? collected.remove(TICK_MILLIS) : collected.remove();
        coarseNanos = System.nanoTime();
        while (ref != null) {
          LeakRecord record = (LeakRecord) ref;
          remove(record); // a stale copy (see above), or a leak
          if (!record.isForgotten()) {
            record.tracker.leaked(record);
          }
          ref = collected.poll();
        }
      } catch (InterruptedException e) {
        // startTicking: wait again, with a timeout now
      } catch (RuntimeException e) {
        // LeakTracker.leaked catches what its logger and its give-back throw; this is the last
        // guard, so that one record can never end the reporting of the rest.
      }
    }
  }

  /** One thread-id stripe of slots. */
  static final class Stripe {
    private static final VarHandle LOCK;

    static {
      try {
        LOCK = MethodHandles.lookup().findVarHandle(Stripe.class, "lock", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** How many slots an insertion looks at before it doubles the array. */
    private static final int SCAN = 64;

    @SuppressWarnings("unused") // through LOCK
    private volatile int lock;

    volatile LeakRecord[] slots = new LeakRecord[16];
    private int cursor;

    void lock() {
      int spins = 0;
      while (!LOCK.compareAndSet(this, 0, 1)) {
        if (++spins < 64) {
          Thread.onSpinWait();
        } else {
          Thread.yield(); // the holder may be descheduled; its section is a few stores
        }
      }
    }

    void unlock() {
      LOCK.setRelease(this, 0);
    }

    /**
     * Puts {@code record} in an empty slot among the next {@link #SCAN} from the cursor, or doubles
     * the array if none of them is (so that a crowded stripe never costs a long scan). Under the
     * lock.
     */
    void place(LeakRecord record) {
      LeakRecord[] current = slots;
      int length = current.length;
      int i = cursor;
      for (int k = Math.min(length, SCAN); k > 0; k--) {
        if (SLOT.getAcquire(current, i) == null) {
          put(current, i, record);
          return;
        }
        i = i + 1 == length ? 0 : i + 1;
      }
      LeakRecord[] doubled = Arrays.copyOf(current, 2 * length);
      slots = doubled;
      put(doubled, length, record);
    }

    private void put(LeakRecord[] array, int i, LeakRecord record) {
      record.stripe = this;
      record.slot = i;
      SLOT.setRelease(array, i, record);
      cursor = i + 1 == array.length ? 0 : i + 1;
    }
  }
}
